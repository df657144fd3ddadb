package dev.pagewarden.db.lineage;

import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
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
 */
public final class PartitionManager {
    private static final String PREFIX = "kv_lineage_p";
    private static final DateTimeFormatter DAY = DateTimeFormatter.BASIC_ISO_DATE;

    private final int daysAhead;
    private final int retentionDays;
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
    public PartitionManager(int daysAhead, int retentionDays) {
        if (daysAhead < 0 || retentionDays < 0) {
            throw new IllegalArgumentException("daysAhead and retentionDays must be >= 0");
        }
        this.daysAhead = daysAhead;
        this.retentionDays = retentionDays;
    }

    /** Sets what runs before each drop (the signed summary of the lineage batches that go); returns this. */
    public PartitionManager onDrop(DropHook hook) {
        this.dropHook = java.util.Objects.requireNonNull(hook);
        return this;
    }

    /** Creates today .. today+daysAhead and drops partitions older than today-retentionDays; returns the dropped days. */
    public List<LocalDate> maintain(Connection c, LocalDate today) throws SQLException {
        ensure(c, today, today.plusDays(daysAhead));
        LocalDate oldestKept = today.minusDays(retentionDays);
        List<LocalDate> dropped = new ArrayList<>();
        for (LocalDate day : existing(c)) {
            if (day.isBefore(oldestKept)) {
                dropHook.beforeDrop(c, day);
                try (Statement s = c.createStatement()) {
                    s.execute("DROP TABLE IF EXISTS " + name(day));
                }
                known.remove(day);
                dropped.add(day);
            }
        }
        commitIfNeeded(c);
        return dropped;
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
