package dev.pagewarden.incident.incident;

import dev.pagewarden.core.safety.SafetyEvent;
import dev.pagewarden.db.audit.BlastRadius;
import dev.pagewarden.db.audit.Exposure;
import dev.pagewarden.db.audit.LineageQueries;
import dev.pagewarden.incident.AdminProperties;
import dev.pagewarden.incident.PlatformPort;
import dev.pagewarden.incident.audit.AdminAuditLog;
import dev.pagewarden.incident.input.StoredText;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.springframework.beans.factory.SmartInitializingSingleton;
import org.springframework.jdbc.core.RowMapper;
import org.springframework.jdbc.core.simple.JdbcClient;
import org.springframework.stereotype.Service;
import org.springframework.transaction.support.TransactionTemplate;

import java.sql.SQLException;
import java.sql.Timestamp;
import java.time.Clock;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.NoSuchElementException;
import java.util.Optional;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.function.Function;

/**
 * Incidents from safety events: each event opens one, or joins the open incident for the same
 * model, node and worker whose last event is within {@code pagewarden.admin.incident-attach}. Events are
 * handed off the detecting engine thread to a single writer thread, so the engine never waits on
 * PostgreSQL and events are attached in the order detected. Outside reports open incidents of their own
 * ({@link #openReported}), which detector events never join. The blast radius here is computed from the
 * lineage in PostgreSQL for the incident's window, each time it is asked for; what a published disclosure
 * told is frozen with it ({@code FrozenBlastRadiusService}).
 */
@Service
public class IncidentService implements SmartInitializingSingleton, AutoCloseable {
    private static final Logger LOG = LoggerFactory.getLogger(IncidentService.class);
    static final RowMapper<Incident> INCIDENT = (rs, i) -> new Incident(rs.getLong("id"), rs.getString("title"),
            rs.getString("model_id"), rs.getString("node"), rs.getString("worker"), Incident.Status.valueOf(rs.getString("status")),
            rs.getString("severity"), instant(rs.getTimestamp("opened_at")), instant(rs.getTimestamp("first_event")),
            instant(rs.getTimestamp("last_event")), instant(rs.getTimestamp("resolved_at")), rs.getInt("events"),
            rs.getObject("merged_into", Long.class));

    /** First key of the advisory locks on (model, node, worker); the second is the key's hash. */
    private static final int LOCK_SPACE = 0x70770001;

    private final JdbcClient jdbc;
    private final PlatformPort platform;
    private final AdminAuditLog audit;
    private final AdminProperties properties;
    private final LineageQueries lineage;
    private final TransactionTemplate tx;
    private final Clock clock;
    private final ExecutorService writer = Executors.newSingleThreadExecutor(
            Thread.ofPlatform().name("pagewarden-incidents").daemon().factory());

    IncidentService(JdbcClient jdbc, PlatformPort platform, AdminAuditLog audit, AdminProperties properties,
                    LineageQueries lineage, TransactionTemplate tx, Clock clock) {
        this.jdbc = jdbc;
        this.platform = platform;
        this.audit = audit;
        this.properties = properties;
        this.lineage = lineage;
        this.tx = tx;
        this.clock = clock;
    }

    @Override
    public void afterSingletonsInstantiated() {
        platform.onSafetyEvent(event -> writer.execute(() -> {
            try {
                onEvent(event);
            } catch (RuntimeException e) {
                LOG.error("could not file safety event {} into an incident", event, e);
            }
        }));
    }

    /** What a detector reported, in the form incidents file it (engine detectors and the lineage sweep alike). */
    public record Signal(String type, String severity, String node, String worker, long requestId, String tenant,
                         List<Integer> pages, Instant time, String details) {
        /** {@code node}: the node whose engine detected it (this replica's). */
        static Signal of(SafetyEvent e, String node) {
            return new Signal(e.type().label(), e.severity().name(), node, e.worker(), e.requestId(), e.tenant(), e.pages(),
                    e.time(), e.details());
        }
    }

    long onEvent(SafetyEvent event) {
        return file(Signal.of(event, platform.nodeId()));
    }

    /** Files one signal: attaches it to a matching open incident or opens a new one; returns the incident id. */
    public long file(Signal event) {
        String model = platform.servedModel().orElse(null);
        return tx.execute(status -> fileInTransaction(event, model));
    }

    /**
     * Files the exposures of one pool that no sweep (of any replica) has filed before: claims each one's row
     * in {@code incident_exposures} ({@code ON CONFLICT DO NOTHING}), builds the signal from the claimed ones
     * only and files it, all in one transaction. A replica sweeping the same exposures at the same time waits
     * on the claimed rows and then finds them taken. Empty when every exposure was filed already.
     */
    Optional<Long> fileExposures(List<Exposure> exposures, Function<List<Exposure>, Signal> signal) {
        String model = platform.servedModel().orElse(null);
        // one order for every replica, so two sweeps claiming overlapping sets never deadlock
        List<Exposure> ordered = exposures.stream().sorted(EXPOSURE_ORDER).toList();
        return tx.execute(status -> {
            Timestamp now = Timestamp.from(clock.instant());
            List<Exposure> claimed = new ArrayList<>();
            for (Exposure e : ordered) {
                int inserted = exposureKey(jdbc.sql("""
                        INSERT INTO incident_exposures (node, worker, page, read_epoch, reader_request, exposing_request, filed_at, filed_by)
                        VALUES (:node, :worker, :page, :epoch, :reader, :exposing, :now, :by) ON CONFLICT DO NOTHING"""), e)
                        .param("now", now).param("by", platform.nodeId()).update();
                if (inserted == 1) {
                    claimed.add(e);
                }
            }
            if (claimed.isEmpty()) {
                return Optional.<Long>empty();
            }
            long id = fileInTransaction(signal.apply(claimed), model);
            for (Exposure e : claimed) {
                exposureKey(jdbc.sql("""
                        UPDATE incident_exposures SET incident_id = :id WHERE node = :node AND worker = :worker AND page = :page
                          AND read_epoch = :epoch AND reader_request = :reader AND exposing_request = :exposing"""), e)
                        .param("id", id).update();
            }
            return Optional.of(id);
        });
    }

    private static final Comparator<Exposure> EXPOSURE_ORDER = Comparator.comparing(Exposure::node).thenComparing(Exposure::worker)
            .thenComparingInt(Exposure::page).thenComparingLong(Exposure::readEpoch).thenComparingLong(Exposure::readerRequest)
            .thenComparingLong(Exposure::exposingRequest);

    private static JdbcClient.StatementSpec exposureKey(JdbcClient.StatementSpec sql, Exposure e) {
        return sql.param("node", e.node()).param("worker", e.worker()).param("page", e.page()).param("epoch", e.readEpoch())
                .param("reader", e.readerRequest()).param("exposing", e.exposingRequest());
    }

    /**
     * Attach-or-open under a transaction-scoped advisory lock on (model, node, worker): replicas filing for
     * the same pool at once take turns, so the second one finds (and joins) the incident the first opened.
     * A partial unique index cannot say this: two open incidents of one pool are legitimate (a new burst
     * after the attach window opens a second one while the first is still being worked), and "last event
     * within the attach window" depends on the time, which an index predicate cannot.
     */
    private long fileInTransaction(Signal event, String model) {
        jdbc.sql("SELECT 1 FROM pg_advisory_xact_lock(:space, hashtext(:key))").param("space", LOCK_SPACE)
                .param("key", (model == null ? "" : model) + '\n' + event.node() + '\n' + event.worker())
                .query(Integer.class).single(); // a hash collision only makes two pools take turns
        Optional<Long> open = jdbc.sql("""
                SELECT id FROM incidents WHERE status NOT IN ('RESOLVED', 'REPORTED') AND model_id IS NOT DISTINCT FROM :model
                  AND node = :node AND worker = :worker AND last_event >= :since ORDER BY id DESC LIMIT 1 FOR UPDATE""")
                .param("model", model).param("node", event.node()).param("worker", event.worker())
                .param("since", Timestamp.from(event.time().minus(properties.incidentAttach())))
                .query(Long.class).optional();
        long id;
        if (open.isPresent()) {
            id = open.get();
            jdbc.sql("""
                    UPDATE incidents SET events = events + 1, last_event = greatest(last_event, :t),
                      first_event = least(first_event, :t),
                      severity = CASE WHEN :sev = 'CRITICAL' THEN 'CRITICAL' ELSE severity END WHERE id = :id""")
                    .param("t", Timestamp.from(event.time())).param("sev", event.severity()).param("id", id)
                    .update();
        } else {
            id = jdbc.sql("""
                    INSERT INTO incidents (title, model_id, node, worker, status, severity, opened_at, first_event, last_event, events)
                    VALUES (:title, :model, :node, :worker, 'INVESTIGATING', :sev, :now, :t, :t, 1) RETURNING id""")
                    .param("title", event.type() + " on " + event.node() + "/" + event.worker()
                            + (model == null ? "" : " (" + model + ")"))
                    .param("model", model).param("node", event.node()).param("worker", event.worker()).param("sev", event.severity())
                    .param("now", Timestamp.from(clock.instant())).param("t", Timestamp.from(event.time()))
                    .query(Long.class).single();
            LOG.warn("incident {} opened by {} on {}/{}", id, event.type(), event.node(), event.worker());
        }
        entry(id, event.time(), "DETECTOR", "detector:" + event.type(), describe(event));
        return id;
    }

    /** Node and worker of incidents opened by outside reports: no engine pool has these names. */
    public static final String REPORT_NODE = "outside";
    public static final String REPORT_WORKER = "report";

    /**
     * Opens an incident in the {@code REPORTED} state for an outside report (joins the caller's transaction):
     * no model, warning severity until a responder triages it, its window the one the reporter named (else now).
     */
    public long openReported(Instant from, Instant to, String actor, String text) {
        return tx.execute(s -> {
            Instant now = clock.instant();
            long id = jdbc.sql("""
                    INSERT INTO incidents (title, model_id, node, worker, status, severity, opened_at, first_event, last_event, events)
                    VALUES ('Outside report', NULL, :node, :worker, 'REPORTED', 'WARNING', :now, :from, :to, 0) RETURNING id""")
                    .param("node", REPORT_NODE).param("worker", REPORT_WORKER).param("now", Timestamp.from(now))
                    .param("from", Timestamp.from(from == null ? now : from)).param("to", Timestamp.from(to == null ? now : to))
                    .query(Long.class).single();
            entry(id, now, "ACTION", actor, text);
            LOG.warn("incident {} opened by an outside report", id);
            return id;
        });
    }

    private static String describe(Signal e) {
        StringBuilder sb = new StringBuilder(e.type()).append(" (").append(e.severity().toLowerCase(java.util.Locale.ROOT)).append(')');
        if (e.requestId() != 0) {
            sb.append(" request ").append(e.requestId());
        }
        if (e.tenant() != null) {
            sb.append(" tenant ").append(e.tenant());
        }
        if (!e.pages().isEmpty()) {
            sb.append(" pages ").append(e.pages());
        }
        if (e.details() != null && !e.details().isBlank()) {
            sb.append(": ").append(e.details());
        }
        return sb.toString();
    }

    /** Writes a timeline entry and links it into this node's chain, in one transaction (the caller's when it has one). */
    private void entry(long incident, Instant at, String kind, String actor, String text) {
        tx.executeWithoutResult(s -> audit.link("incident_entries", jdbc.sql(
                        "INSERT INTO incident_entries (incident_id, at, kind, actor, text) VALUES (:i, :at, :k, :a, :t) RETURNING id")
                .param("i", incident).param("at", Timestamp.from(at)).param("k", kind).param("a", actor).param("t", text)
                .query(Long.class).single()));
    }

    public List<Incident> list() {
        return jdbc.sql("SELECT * FROM incidents ORDER BY (status = 'RESOLVED'), id DESC").query(INCIDENT).list();
    }

    public Incident get(long id) {
        return jdbc.sql("SELECT * FROM incidents WHERE id = :id").param("id", id).query(INCIDENT).optional()
                .orElseThrow(() -> new NoSuchElementException("no incident " + id));
    }

    public List<Incident.Entry> timeline(long id) {
        return jdbc.sql("SELECT id, at, kind, actor, text FROM incident_entries WHERE incident_id = :id ORDER BY at, id")
                .param("id", id)
                .query((rs, i) -> new Incident.Entry(rs.getLong(1), instant(rs.getTimestamp(2)), rs.getString(3),
                        rs.getString(4), rs.getString(5)))
                .list();
    }

    /**
     * Resolves every incident still {@code REPORTED} (no responder triaged it) that was opened before
     * {@code openedBefore}, in one statement so that one a responder triages meanwhile stays open; returns their ids.
     */
    public List<Long> expireReported(Instant openedBefore, String actor, String why) {
        return tx.execute(s -> {
            Instant now = clock.instant();
            List<Long> ids = jdbc.sql("UPDATE incidents SET status = 'RESOLVED', resolved_at = :now"
                            + " WHERE status = 'REPORTED' AND opened_at < :before RETURNING id")
                    .param("now", Timestamp.from(now)).param("before", Timestamp.from(openedBefore))
                    .query(Long.class).list();
            for (long id : ids) {
                entry(id, now, "ACTION", actor, "status " + Incident.Status.REPORTED.label() + " -> "
                        + Incident.Status.RESOLVED.label() + ": " + why);
                audit.record(actor, "incident.status", "incident " + id, Incident.Status.RESOLVED.label());
            }
            return ids;
        });
    }

    /** The workflow only moves forward ((reported ->) investigating -> identified -> mitigated -> resolved). */
    public Incident setStatus(long id, Incident.Status to, String actor) {
        return tx.execute(s -> {
            Incident current = get(id);
            if (to.ordinal() <= current.status().ordinal()) {
                throw new IllegalArgumentException("incident " + id + " is " + current.status().label()
                        + "; it can only move forward, not to " + to.label());
            }
            Instant now = clock.instant();
            jdbc.sql("UPDATE incidents SET status = :s, resolved_at = :r WHERE id = :id").param("s", to.name())
                    .param("r", to == Incident.Status.RESOLVED ? Timestamp.from(now) : null).param("id", id).update();
            entry(id, now, "ACTION", actor, "status " + current.status().label() + " -> " + to.label());
            audit.record(actor, "incident.status", "incident " + id, to.label());
            return get(id);
        });
    }

    /**
     * Merges incident {@code id} into {@code into}, which carries on: {@code id} is resolved pointing at it, both
     * timelines say so ({@code why} on the one merged into), and the admin audit records it. Neither may be merged
     * already; rows are locked in id order, so two merges of one pair never deadlock.
     */
    public Incident merge(long id, long into, String actor, String why) {
        if (id == into) {
            throw new IllegalArgumentException("incident " + id + " cannot be merged into itself");
        }
        return tx.execute(s -> {
            jdbc.sql("SELECT id FROM incidents WHERE id IN (:a, :b) ORDER BY id FOR UPDATE").param("a", id).param("b", into)
                    .query(Long.class).list();
            Incident merged = get(id), target = get(into);
            for (Incident i : List.of(merged, target)) {
                if (i.merged()) {
                    throw new IllegalArgumentException("incident " + i.id() + " is already merged into incident " + i.mergedInto());
                }
            }
            Instant now = clock.instant();
            jdbc.sql("UPDATE incidents SET status = 'RESOLVED', resolved_at = coalesce(resolved_at, :now), merged_into = :into"
                    + " WHERE id = :id").param("now", Timestamp.from(now)).param("into", into).param("id", id).update();
            entry(id, now, "ACTION", actor, (merged.open() ? "status " + merged.status().label() + " -> "
                    + Incident.Status.RESOLVED.label() + ": " : "") + "merged into incident " + into);
            entry(into, now, "ACTION", actor, "incident " + id + " merged into this one: " + why);
            audit.record(actor, "incident.merge", "incident " + id, "into incident " + into);
            return get(id);
        });
    }

    public void note(long id, String text, String actor) {
        String checked = StoredText.requireMultiline("note", text, 4000);
        get(id);
        entry(id, clock.instant(), "NOTE", actor, checked);
        audit.record(actor, "incident.note", "incident " + id, null);
    }

    /** Take-down and restore of the incident's model; the tenant API answers 503 model_unavailable while private. */
    public void setModelPrivate(long id, boolean makePrivate, String actor) {
        Incident incident = get(id);
        if (incident.model() == null) {
            throw new IllegalArgumentException("incident " + id + " names no model");
        }
        platform.setModelPrivate(incident.model(), makePrivate, actor);
        String what = "model " + incident.model() + (makePrivate ? " made private (tenant API answers 503)" : " restored (public)");
        entry(id, clock.instant(), "ACTION", actor, what);
        audit.record(actor, makePrivate ? "model.private" : "model.public", incident.model(), "incident " + id);
    }

    /** The blast-radius window: from {@code incident-lookback} before the first event to resolution (or now). */
    public Instant[] window(Incident incident) {
        Instant from = incident.firstEvent().minus(properties.incidentLookback());
        Instant to = incident.resolvedAt() != null ? incident.resolvedAt() : clock.instant();
        return new Instant[]{from, to.isAfter(incident.lastEvent()) ? to : incident.lastEvent().plusSeconds(1)};
    }

    /** Computed from PostgreSQL lineage for the window, for the incident's model, on every node and worker. */
    public BlastRadius blastRadius(Incident incident) {
        Instant[] w = window(incident);
        try {
            return lineage.blastRadius(w[0], w[1], incident.model(), null);
        } catch (SQLException e) {
            throw new IllegalStateException("lineage query failed: " + e.getMessage(), e);
        }
    }

    /** The first and last exposed read of the incident's blast radius; empty when the lineage shows no exposure. */
    public Optional<Incident.ExposureWindow> exposureWindow(Incident incident) {
        return exposureWindow(blastRadius(incident));
    }

    /** As {@link #exposureWindow(Incident)}, from a blast radius already computed. */
    public static Optional<Incident.ExposureWindow> exposureWindow(BlastRadius radius) {
        return radius.firstExposedRead() == null ? Optional.empty()
                : Optional.of(new Incident.ExposureWindow(radius.firstExposedRead(), radius.lastExposedRead()));
    }

    /** The raw exposures (lineage) of the incident window, all models. */
    public List<Exposure> exposures(Incident incident) {
        Instant[] w = window(incident);
        try {
            return lineage.exposures(w[0], w[1]);
        } catch (SQLException e) {
            throw new IllegalStateException("lineage query failed: " + e.getMessage(), e);
        }
    }

    @Override
    public void close() {
        writer.shutdown();
    }

    private static Instant instant(Timestamp t) {
        return t == null ? null : t.toInstant();
    }
}
