package dev.pagewarden.db.lineage;

import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.sql.Timestamp;
import java.time.Duration;
import java.time.Instant;
import java.time.LocalDate;
import java.time.ZoneOffset;
import java.time.format.DateTimeFormatter;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;

/**
 * Day partitions of {@code kv_lineage} (UTC days, named {@code kv_lineage_pYYYYMMDD}). The writer creates
 * them ahead of time and on demand for the days of each batch (an event from a day with no partition
 * would otherwise fail the whole COPY), and drops whole partitions past the retention: one cheap
 * {@code DROP TABLE} instead of a row-by-row DELETE that bloats and vacuums for hours.
 *
 * <p>A partition past the retention is kept while anything still needs it as evidence (see {@link #holds}):
 * an open incident's window, a published disclosure's window, a legal hold. Every drop, and every change in
 * what holds a partition back, is written to the admin audit (actor {@code retention}).
 */
public final class PartitionManager {
    private static final String PREFIX = "kv_lineage_p";
    private static final DateTimeFormatter DAY = DateTimeFormatter.BASIC_ISO_DATE;

    static final String ACTOR = "retention";
    private static final int QUERY_TIMEOUT_S = 30;

    private final int daysAhead;
    private final int retentionDays;
    private final Duration incidentLookback;
    private final Set<LocalDate> known = ConcurrentHashMap.newKeySet();
    private volatile DropHook dropHook = (c, day) -> { };

    /** Runs in the dropping transaction just before a day's partition is dropped; a failure keeps the partition. */
    @FunctionalInterface
    public interface DropHook {
        void beforeDrop(Connection c, LocalDate day) throws SQLException;
    }

    /**
     * @param daysAhead     partitions kept ready after today
     * @param retentionDays full days kept before today; older partitions are dropped
     */
    /** As {@link #PartitionManager(int, int, Duration)} with open incidents holding from a day before their first event. */
    public PartitionManager(int daysAhead, int retentionDays) {
        this(daysAhead, retentionDays, Duration.ofDays(1));
    }

    /**
     * @param incidentLookback how long before its first event an incident's blast-radius window starts
     *                         ({@code pagewarden.admin.incident-lookback}): an open incident holds its partitions from there
     */
    public PartitionManager(int daysAhead, int retentionDays, Duration incidentLookback) {
        if (daysAhead < 0 || retentionDays < 0 || incidentLookback.isNegative()) {
            throw new IllegalArgumentException("daysAhead, retentionDays and incidentLookback must be >= 0");
        }
        this.daysAhead = daysAhead;
        this.retentionDays = retentionDays;
        this.incidentLookback = incidentLookback;
    }

    /** Runs in the transaction of each admin-audit row this writes (drops and holds), with the row's id. */
    @FunctionalInterface
    public interface AuditLink {
        void link(Connection c, long adminAuditId) throws SQLException;
    }

    private volatile AuditLink auditLink = (c, id) -> { };

    /** Sets how the admin-audit rows this writes join their chain (the node's {@code admin_audit} chain); returns this. */
    public PartitionManager onAudit(AuditLink link) {
        this.auditLink = java.util.Objects.requireNonNull(link);
        return this;
    }

    /** Sets what runs before each drop (the signed summary of the lineage batches that go); returns this. */
    public PartitionManager onDrop(DropHook hook) {
        this.dropHook = java.util.Objects.requireNonNull(hook);
        return this;
    }

    /**
     * Creates today .. today+daysAhead and drops the partitions older than today-retentionDays that no hold
     * covers (see {@link #droppable}); returns the dropped days.
     */
    public List<LocalDate> maintain(Connection c, LocalDate today) throws SQLException {
        ensure(c, today, today.plusDays(daysAhead));
        List<LocalDate> dropped = new ArrayList<>();
        for (LocalDate day : droppable(c, today)) {
            dropHook.beforeDrop(c, day);
            try (Statement s = c.createStatement()) {
                s.execute("DROP TABLE IF EXISTS " + name(day));
            }
            audit(c, "lineage.partition-dropped", name(day), "past the retention of " + retentionDays
                    + " days (oldest day kept " + today.minusDays(retentionDays) + "); no open incident, published disclosure "
                    + "or legal hold overlaps it");
            known.remove(day);
            dropped.add(day);
        }
        commitIfNeeded(c);
        return dropped;
    }

    /** Something that keeps the lineage of [from, to) as evidence; {@code to} null: open-ended. */
    public record Hold(String reason, Instant from, Instant to) {
        boolean overlaps(LocalDate day) {
            Instant start = day.atStartOfDay(ZoneOffset.UTC).toInstant();
            return from.isBefore(start.plus(Duration.ofDays(1))) && (to == null || to.isAfter(start));
        }
    }

    /**
     * The partitions past the retention that may be dropped: those no {@link #holds hold} overlaps. For each
     * one held back, the admin audit gets a row naming the holds, unless its last such row named the same.
     * A failure to read the holds drops nothing (the exception propagates).
     */
    List<LocalDate> droppable(Connection c, LocalDate today) throws SQLException {
        LocalDate oldestKept = today.minusDays(retentionDays);
        List<LocalDate> past = existing(c).stream().filter(d -> d.isBefore(oldestKept)).toList();
        if (past.isEmpty()) {
            return past;
        }
        List<Hold> holds = holds(c);
        List<LocalDate> out = new ArrayList<>();
        for (LocalDate day : past) {
            List<String> by = holds.stream().filter(h -> h.overlaps(day)).map(Hold::reason).sorted().toList();
            if (by.isEmpty()) {
                out.add(day);
            } else {
                String details = "past the retention of " + retentionDays + " days, kept: " + String.join("; ", by);
                if (!details.equals(lastHeld(c, name(day)))) {
                    audit(c, "lineage.partition-held", name(day), details);
                }
            }
        }
        return out;
    }

    /**
     * What keeps lineage now: open incidents (from {@code incidentLookback} before their first event, open-ended;
     * their safety events lie inside); an incident an outside report opened only once a responder has triaged it
     * (left {@code REPORTED}), and then only the reported window with the lookback on both sides, so that an
     * anonymous report cannot keep a year of lineage; published disclosures (their frozen window; from before frozen windows,
     * the incident's window), and unreleased legal holds.
     */
    public List<Hold> holds(Connection c) throws SQLException {
        List<Hold> holds = new ArrayList<>();
        try (PreparedStatement ps = c.prepareStatement("""
                SELECT 'open incident ' || i.id, i.first_event - make_interval(secs => ?),
                       CASE WHEN r.reported THEN i.last_event + make_interval(secs => ?) END
                  FROM incidents i
                  LEFT JOIN LATERAL (SELECT true AS reported FROM outside_reports o WHERE o.incident_id = i.id LIMIT 1) r
                    ON true
                 WHERE i.status NOT IN ('RESOLVED', 'REPORTED')
                UNION ALL
                SELECT 'published disclosure ' || d.id || ' (incident ' || d.incident_id || ' v' || d.version || ')',
                       coalesce(f.window_from, i.first_event - make_interval(secs => ?)), coalesce(f.window_to, i.resolved_at)
                  FROM disclosures d JOIN incidents i ON i.id = d.incident_id
                  LEFT JOIN frozen_blast_radius f ON f.disclosure_id = d.id WHERE d.status = 'PUBLISHED'
                UNION ALL
                SELECT 'legal hold ' || id || ' (' || reason || ')', hold_from, hold_to FROM legal_holds WHERE released_at IS NULL""")) {
            ps.setQueryTimeout(QUERY_TIMEOUT_S);
            double lookback = incidentLookback.toNanos() / 1e9;
            ps.setDouble(1, lookback);
            ps.setDouble(2, lookback);
            ps.setDouble(3, lookback);
            try (ResultSet rs = ps.executeQuery()) {
                while (rs.next()) {
                    Timestamp to = rs.getTimestamp(3);
                    holds.add(new Hold(rs.getString(1), rs.getTimestamp(2).toInstant(), to == null ? null : to.toInstant()));
                }
            }
        }
        return holds;
    }

    private static String lastHeld(Connection c, String partition) throws SQLException {
        try (PreparedStatement ps = c.prepareStatement(
                "SELECT details FROM admin_audit WHERE action = 'lineage.partition-held' AND target = ? ORDER BY id DESC LIMIT 1")) {
            ps.setQueryTimeout(QUERY_TIMEOUT_S);
            ps.setString(1, partition);
            try (ResultSet rs = ps.executeQuery()) {
                return rs.next() ? rs.getString(1) : null;
            }
        }
    }

    private void audit(Connection c, String action, String target, String details) throws SQLException {
        long id;
        try (PreparedStatement ps = c.prepareStatement(
                "INSERT INTO admin_audit (actor, action, target, details) VALUES (?, ?, ?, ?) RETURNING id")) {
            ps.setQueryTimeout(QUERY_TIMEOUT_S);
            ps.setString(1, ACTOR);
            ps.setString(2, action);
            ps.setString(3, target);
            ps.setString(4, details);
            try (ResultSet rs = ps.executeQuery()) {
                rs.next();
                id = rs.getLong(1);
            }
        }
        auditLink.link(c, id);
    }

    /** Makes sure partitions exist for every day in [from, to] (inclusive). */
    public void ensure(Connection c, LocalDate from, LocalDate to) throws SQLException {
        boolean created = false;
        for (LocalDate d = from; !d.isAfter(to); d = d.plusDays(1)) {
            if (known.contains(d)) {
                continue;
            }
            try (Statement s = c.createStatement()) {
                s.execute("CREATE TABLE IF NOT EXISTS " + name(d) + " PARTITION OF kv_lineage FOR VALUES FROM ('"
                        + d + " 00:00:00+00') TO ('" + d.plusDays(1) + " 00:00:00+00')");
            }
            created = true;
        }
        if (created) {
            commitIfNeeded(c);
        }
        for (LocalDate d = from; !d.isAfter(to); d = d.plusDays(1)) {
            known.add(d);
        }
    }

    /** Forget what is known to exist (after an error: someone may have dropped a partition). */
    public void forget() {
        known.clear();
    }

    /** Days that currently have a partition, oldest first. */
    public static List<LocalDate> existing(Connection c) throws SQLException {
        List<LocalDate> days = new ArrayList<>();
        try (Statement s = c.createStatement();
             ResultSet rs = s.executeQuery("SELECT c.relname FROM pg_inherits i JOIN pg_class c ON c.oid = i.inhrelid "
                     + "WHERE i.inhparent = 'kv_lineage'::regclass ORDER BY c.relname")) {
            while (rs.next()) {
                String n = rs.getString(1);
                if (n.startsWith(PREFIX)) {
                    days.add(LocalDate.parse(n.substring(PREFIX.length()), DAY));
                }
            }
        }
        return days;
    }

    public static LocalDate dayOf(long timeMicros) {
        return LocalDate.ofEpochDay(Math.floorDiv(timeMicros, 86_400_000_000L));
    }

    public static LocalDate today() {
        return LocalDate.now(ZoneOffset.UTC);
    }

    static String name(LocalDate day) {
        return PREFIX + DAY.format(day);
    }

    private static void commitIfNeeded(Connection c) throws SQLException {
        if (!c.getAutoCommit()) {
            c.commit();
        }
    }
}
