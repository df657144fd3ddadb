package dev.pagewarden.incident.incident;

import dev.pagewarden.db.audit.Exposure;
import dev.pagewarden.db.audit.LineageQueries;
import dev.pagewarden.incident.AdminProperties;
import dev.pagewarden.incident.PlatformPort;
import dev.pagewarden.incident.incident.FrozenBlastRadiusService;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.springframework.jdbc.core.simple.JdbcClient;
import org.springframework.stereotype.Component;

import java.sql.SQLException;
import java.sql.Timestamp;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;

/**
 * A detector over the audit trail itself: runs the lineage exposure finder over recent time and
 * files a {@code lineage-exposure} signal (per pool) for every exposure that no sweep filed before. It
 * catches what the engine's detectors did not (a fault with the detectors off, as the 2026 incident was),
 * at the cost of the shipping lag plus the sweep interval ({@code pagewarden.admin.lineage-sweep}; 0 turns
 * the schedule off, a sweep can still be run on demand).
 *
 * <p>Every replica sweeps; what makes that safe is in PostgreSQL, not in memory: each exposure is filed
 * once ({@code incident_exposures}, see {@link IncidentService#fileExposures}), and the position swept to
 * ({@code lineage_sweep_position}) is shared, so a restarted replica or another one continues where the
 * last sweep stopped instead of from its own start.
 */
@Component
public class LineageSweep implements AutoCloseable {
    private static final Logger LOG = LoggerFactory.getLogger(LineageSweep.class);
    /** How far back before the position each sweep looks again: lineage rows arrive with the shipping lag. */
    private static final Duration OVERLAP = Duration.ofMinutes(5);

    private final LineageQueries lineage;
    private final IncidentService incidents;
    private final JdbcClient jdbc;
    private final PlatformPort platform;
    private final Clock clock;
    private final FrozenBlastRadiusService frozen;
    private final ScheduledExecutorService schedule;

    LineageSweep(LineageQueries lineage, IncidentService incidents, JdbcClient jdbc, PlatformPort platform, Clock clock,
                 AdminProperties properties, FrozenBlastRadiusService frozen) {
        this.frozen = frozen;
        this.lineage = lineage;
        this.incidents = incidents;
        this.jdbc = jdbc;
        this.platform = platform;
        this.clock = clock;
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

    /** Where the last sweep of any replica stopped; empty before the first. */
    Optional<Instant> position() {
        return jdbc.sql("SELECT swept_to FROM lineage_sweep_position").query(Timestamp.class).optional().map(Timestamp::toInstant);
    }

    /**
     * Sweeps from shortly before the shared position (the first sweep ever: from twice that before now) to
     * now; returns the incident ids it filed into (none for exposures some sweep filed already).
     */
    public synchronized List<Long> sweep() {
        Instant to = clock.instant();
        Instant from = position().orElse(to.minus(OVERLAP)).minus(OVERLAP);
        List<Exposure> found;
        try {
            found = lineage.exposures(from, to.plusSeconds(1));
        } catch (SQLException e) {
            throw new IllegalStateException("exposure finder failed: " + e.getMessage(), e);
        }
        // one signal per pool: (node, worker), as pools of different nodes share worker names
        Map<List<String>, List<Exposure>> byPool = new LinkedHashMap<>();
        for (Exposure e : found) {
            byPool.computeIfAbsent(List.of(e.node(), e.worker()), w -> new ArrayList<>()).add(e);
        }
        List<Long> filed = new ArrayList<>();
        for (List<Exposure> pool : byPool.values()) {
            incidents.fileExposures(pool, LineageSweep::signal).ifPresent(filed::add);
        }
        if (!found.isEmpty()) {
            // reads inside a published disclosure's window: its frozen set may no longer match the lineage
            frozen.recheckOverlapping(found.stream().map(Exposure::readAt).min(Comparator.naturalOrder()).orElseThrow(),
                    found.stream().map(Exposure::readAt).max(Comparator.naturalOrder()).orElseThrow());
        }
        jdbc.sql("""
                INSERT INTO lineage_sweep_position (id, swept_to, swept_by, updated_at) VALUES (true, :to, :node, now())
                ON CONFLICT (id) DO UPDATE SET swept_to = excluded.swept_to, swept_by = excluded.swept_by, updated_at = now()
                  WHERE lineage_sweep_position.swept_to < excluded.swept_to""")
                .param("to", Timestamp.from(to)).param("node", platform.nodeId()).update();
        return filed;
    }

    /** The signal for the not yet filed exposures of one pool. */
    private static IncidentService.Signal signal(List<Exposure> es) {
        List<Long> readers = es.stream().map(Exposure::readerRequest).distinct().sorted().toList();
        Exposure first = es.stream().min(Comparator.comparing(Exposure::readAt)).orElseThrow();
        String details = readers.size() + " request(s) read KV data written by another tenant: readers " + readers
                + ", exposed tenants " + es.stream().map(Exposure::exposedTenant).distinct().sorted().toList();
        return new IncidentService.Signal("lineage-exposure", "CRITICAL", first.node(), first.worker(), first.readerRequest(),
                first.readerTenant(), es.stream().map(Exposure::page).distinct().toList(), first.readAt(), details);
    }

    @Override
    public void close() {
        if (schedule != null) {
            schedule.shutdownNow();
        }
    }
}
