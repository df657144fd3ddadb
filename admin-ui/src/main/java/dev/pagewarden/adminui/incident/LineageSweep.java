package dev.pagewarden.adminui.incident;

import dev.pagewarden.adminui.AdminUiProperties;
import dev.pagewarden.db.audit.Exposure;
import dev.pagewarden.db.audit.LineageQueries;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.springframework.stereotype.Component;

import java.sql.SQLException;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;

/**
 * A detector over the audit trail itself: runs the lineage exposure finder over recent time and
 * files a {@code lineage-exposure} signal (per worker) for every request that read another tenant's
 * KV data and was not reported before. It catches what the engine's detectors did not (a fault
 * with the detectors off, as the 2026 incident was), at the cost of the shipping lag plus the sweep
 * interval ({@code pagewarden.admin.lineage-sweep}; 0 turns the schedule off, a sweep can still be run on demand).
 */
@Component
public class LineageSweep implements AutoCloseable {
    private static final Logger LOG = LoggerFactory.getLogger(LineageSweep.class);
    private static final Duration OVERLAP = Duration.ofMinutes(5);

    private final LineageQueries lineage;
    private final IncidentService incidents;
    private final Clock clock;
    private final Set<Long> reported = ConcurrentHashMap.newKeySet();
    private final ScheduledExecutorService schedule;
    private volatile Instant swept;

    LineageSweep(LineageQueries lineage, IncidentService incidents, Clock clock, AdminUiProperties properties) {
        this.lineage = lineage;
        this.incidents = incidents;
        this.clock = clock;
        this.swept = clock.instant().minus(OVERLAP);
        Duration every = properties.lineageSweep();
        if (every.isZero()) {
            this.schedule = null;
        } else {
            this.schedule = Executors.newSingleThreadScheduledExecutor(
                    Thread.ofPlatform().name("pagewarden-lineage-sweep").daemon().factory());
            schedule.scheduleWithFixedDelay(this::sweepQuietly, every.toMillis(), every.toMillis(), TimeUnit.MILLISECONDS);
        }
    }

    private void sweepQuietly() {
        try {
            sweep();
        } catch (RuntimeException e) {
            LOG.warn("lineage sweep failed: {}", e.getMessage());
        }
    }

    /** Sweeps from shortly before the last sweep to now; returns the incident ids it filed into. */
    public synchronized List<Long> sweep() {
        Instant to = clock.instant();
        Instant from = swept.minus(OVERLAP);
        List<Exposure> found;
        try {
            found = lineage.exposures(from, to.plusSeconds(1));
        } catch (SQLException e) {
            throw new IllegalStateException("exposure finder failed: " + e.getMessage(), e);
        }
        // one signal per pool: (node, worker), as pools of different nodes share worker names
        Map<List<String>, List<Exposure>> byWorker = new LinkedHashMap<>();
        for (Exposure e : found) {
            if (!reported.contains(e.readerRequest())) {
                byWorker.computeIfAbsent(List.of(e.node(), e.worker()), w -> new ArrayList<>()).add(e);
            }
        }
        List<Long> filed = new ArrayList<>();
        for (var entry : byWorker.entrySet()) {
            List<Exposure> es = entry.getValue();
            List<Long> readers = es.stream().map(Exposure::readerRequest).distinct().sorted().toList();
            Exposure first = es.stream().min((a, b) -> a.readAt().compareTo(b.readAt())).orElseThrow();
            String details = readers.size() + " request(s) read KV data written by another tenant: readers " + readers
                    + ", exposed tenants " + es.stream().map(Exposure::exposedTenant).distinct().sorted().toList();
            filed.add(incidents.file(new IncidentService.Signal("lineage-exposure", "CRITICAL", entry.getKey().get(0), entry.getKey().get(1),
                    first.readerRequest(), first.readerTenant(), es.stream().map(Exposure::page).distinct().toList(),
                    first.readAt(), details)));
            reported.addAll(readers);
        }
        swept = to;
        return filed;
    }

    @Override
    public void close() {
        if (schedule != null) {
            schedule.shutdownNow();
        }
    }
}
