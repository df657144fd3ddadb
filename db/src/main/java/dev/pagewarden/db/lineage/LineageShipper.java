package dev.pagewarden.db.lineage;

import dev.pagewarden.core.lineage.LineageEvent;
import dev.pagewarden.db.evidence.LineageChain;
import dev.pagewarden.db.journal.Journal;
import dev.pagewarden.db.journal.JournalCorruptedException;
import dev.pagewarden.db.journal.SegmentFormat;
import org.postgresql.PGConnection;
import org.postgresql.copy.CopyIn;

import javax.sql.DataSource;
import java.io.IOException;
import java.sql.Connection;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.time.Instant;
import java.time.LocalDate;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.locks.LockSupport;
import java.util.logging.Level;
import java.util.logging.Logger;

/**
 * Ships journaled lineage events to PostgreSQL: binary {@code COPY} into a per-connection staging temp
 * table, then {@code INSERT ... ON CONFLICT DO NOTHING} into {@code kv_lineage}, one transaction per batch.
 * A sealed segment is acknowledged (deleted) only after the commit that holds its last event; after a
 * crash its events are shipped again and the database ignores the duplicates (event id + time key).
 *
 * <p>When PostgreSQL is down the shipper retries with exponential backoff while the journal grows; on
 * reconnect it catches up from where the last commit left off. A corrupted journal record stops it for
 * good ({@link State#CORRUPTED}): an operator must decide, nothing is skipped silently.
 */
public final class LineageShipper implements AutoCloseable {
    private static final Logger LOG = Logger.getLogger(LineageShipper.class.getName());

    public enum State { STARTING, SHIPPING, RETRYING, CORRUPTED, STOPPED }

    /**
     * For a health indicator: {@code up()} is false when events are not reaching the database (retrying,
     * corrupted journal, stopped).
     *
     * @param detail         the last error's message while not shipping; empty while shipping
     * @param lastShipTime   when the last batch was committed in the database (null before the first)
     * @param lagBytes       journal bytes fsynced but not yet committed in the database
     * @param lagEvents      those bytes in events, estimated from this process's average record size
     * @param lastError      the most recent error (kept after recovery, for the operator), or null
     * @param lastErrorTime  when it happened, or null
     */
    public record Health(State state, String detail, long shippedEvents, long insertedRows, long journalBytes,
                         Instant lastShipTime, long lagBytes, long lagEvents, String lastError, Instant lastErrorTime) {
        public boolean up() {
            return state == State.SHIPPING || state == State.STARTING;
        }
    }

    /**
     * @param batchEvents      most events per COPY transaction
     * @param minBackoff       first retry delay after a database error
     * @param maxBackoff       retry delay cap
     * @param maintenanceEvery how often partitions are created ahead / dropped past retention
     */
    public record Config(int batchEvents, Duration minBackoff, Duration maxBackoff, Duration maintenanceEvery) {
        public static Config defaults() {
            return new Config(20_000, Duration.ofMillis(100), Duration.ofSeconds(5), Duration.ofHours(1));
        }
    }

    private final Journal journal;
    private final DataSource dataSource;
    private final PartitionManager partitions;
    private final Config config;
    private final LineageChain chain;
    private final CopyBinaryEncoder encoder = new CopyBinaryEncoder();
    // segment id -> committed offset; concurrent because health() reads it without the shipping lock
    private final Map<Long, Long> shippedOffset = new ConcurrentHashMap<>();
    private final AtomicLong shipped = new AtomicLong();
    private final AtomicLong inserted = new AtomicLong();
    private Connection connection;
    private long lastMaintenanceNanos;
    private boolean maintained;
    private volatile State state = State.STARTING;
    private volatile String detail = "";
    private volatile Instant lastShipTime;
    private volatile String lastError;
    private volatile Instant lastErrorTime;
    private volatile boolean running;
    private Thread thread;

    public LineageShipper(Journal journal, DataSource dataSource, PartitionManager partitions, Config config) {
        this(journal, dataSource, partitions, config, null);
    }

    /**
     * @param chain the hash chain every committed batch is appended to (one batch per UTC day of its events);
     *              null ships unchained
     */
    public LineageShipper(Journal journal, DataSource dataSource, PartitionManager partitions, Config config, LineageChain chain) {
        this.journal = journal;
        this.dataSource = dataSource;
        this.partitions = partitions;
        this.config = config;
        this.chain = chain;
    }

    /** Starts the background shipping thread. */
    public synchronized void start() {
        running = true;
        thread = Thread.ofPlatform().name("lineage-shipper").daemon().start(this::loop);
    }

    /** Never blocks on the database: safe to call from a health endpoint while a COPY or a reconnect runs. */
    public Health health() {
        long lagBytes = 0;
        for (Journal.Segment seg : journal.segments()) {
            long from = Math.max(shippedOffset.getOrDefault(seg.id(), 0L), SegmentFormat.HEADER_BYTES);
            lagBytes += Math.max(0, seg.durableBytes() - from);
        }
        double avg = journal.averageRecordBytes();
        long lagEvents = lagBytes == 0 ? 0 : Math.max(1, Math.round(lagBytes / (avg > 0 ? avg : NOMINAL_RECORD_BYTES)));
        return new Health(state, detail, shipped.get(), inserted.get(), journal.bytesOnDisk(), lastShipTime,
                lagBytes, lagEvents, lastError, lastErrorTime);
    }

    /** A typical record (header + fixed fields + short names), for the lag estimate before this process appended any. */
    private static final double NOMINAL_RECORD_BYTES = 90;

    /** Events committed to the database by this shipper (duplicates included). */
    public long shippedEvents() {
        return shipped.get();
    }

    /** Rows actually inserted (duplicates excluded). */
    public long insertedRows() {
        return inserted.get();
    }

    /**
     * One synchronous pass: ships everything fsynced so far and deletes fully shipped sealed segments.
     * Returns the events shipped. The background thread calls this; tests may call it directly instead.
     */
    public synchronized long shipAvailable() throws SQLException, IOException {
        Connection c = connection();
        maintainIfDue(c);
        long n = 0;
        List<LineageEvent> events = new ArrayList<>(config.batchEvents());
        for (Journal.Segment seg : journal.segments()) {
            long offset = shippedOffset.getOrDefault(seg.id(), 0L);
            while (offset < seg.durableBytes()) {
                events.clear();
                long next = SegmentFormat.read(seg.path(), offset, seg.durableBytes(), config.batchEvents(), events);
                copy(c, events);
                offset = next;
                shippedOffset.put(seg.id(), offset);
                n += events.size();
            }
            if (seg.sealed()) {
                journal.acknowledge(seg);
                shippedOffset.remove(seg.id());
            }
        }
        return n;
    }

    @Override
    public void close() {
        Thread t;
        synchronized (this) {
            running = false;
            t = thread;
        }
        if (t != null) {
            LockSupport.unpark(t);
            try {
                t.join(TimeUnit.SECONDS.toMillis(30));
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        }
        synchronized (this) {
            closeConnection();
            if (state != State.CORRUPTED) {
                state = State.STOPPED;
            }
        }
    }

    private void loop() {
        long backoff = config.minBackoff().toNanos();
        while (running) {
            try {
                long n = shipAvailable();
                if (state != State.SHIPPING) {
                    LOG.info(() -> "lineage shipper: shipping to PostgreSQL (" + journal.bytesOnDisk() + " journal bytes)");
                }
                state = State.SHIPPING;
                detail = "";
                backoff = config.minBackoff().toNanos();
                if (n == 0) {
                    LockSupport.parkNanos(5_000_000);
                }
            } catch (JournalCorruptedException e) {
                state = State.CORRUPTED;
                detail = e.getMessage();
                lastError = e.getMessage();
                lastErrorTime = Instant.now();
                LOG.log(Level.SEVERE, e.getMessage(), e);
                return;
            } catch (SQLException | IOException | RuntimeException e) {
                synchronized (this) {
                    closeConnection();
                }
                partitions.forget();
                if (state != State.RETRYING) {
                    LOG.log(Level.WARNING, "lineage shipper: database unavailable, journal keeps growing; retrying", e);
                }
                state = State.RETRYING;
                detail = String.valueOf(e.getMessage());
                lastError = detail;
                lastErrorTime = Instant.now();
                LockSupport.parkNanos(backoff);
                backoff = Math.min(backoff * 2, config.maxBackoff().toNanos());
            }
        }
    }

    private void copy(Connection c, List<LineageEvent> events) throws SQLException, IOException {
        if (events.isEmpty()) {
            return;
        }
        long min = Long.MAX_VALUE, max = Long.MIN_VALUE;
        for (LineageEvent e : events) {
            min = Math.min(min, e.timeMicros());
            max = Math.max(max, e.timeMicros());
        }
        LocalDate first = PartitionManager.dayOf(min), last = PartitionManager.dayOf(max);
        partitions.ensure(c, first, last);
        encoder.encode(events);
        try {
            CopyIn in = c.unwrap(PGConnection.class).getCopyAPI()
                    .copyIn("COPY kv_lineage_stage (" + CopyBinaryEncoder.COLUMNS + ") FROM STDIN (FORMAT binary)");
            try {
                in.writeToCopy(encoder.bytes(), 0, encoder.length());
                in.endCopy();
            } finally {
                if (in.isActive()) {
                    in.cancelCopy();
                }
            }
            int rows = 0;
            if (chain == null) {
                try (Statement s = c.createStatement()) {
                    rows = s.executeUpdate("INSERT INTO kv_lineage (" + CopyBinaryEncoder.COLUMNS + ") SELECT "
                            + CopyBinaryEncoder.COLUMNS + " FROM kv_lineage_stage ON CONFLICT (event_id, event_time) DO NOTHING");
                }
            } else {
                // one batch per day, so that a partition dropped past retention takes whole batches with it
                for (LocalDate d = first; !d.isAfter(last); d = d.plusDays(1)) {
                    rows += chain.insertBatch(c, "kv_lineage_stage", CopyBinaryEncoder.COLUMNS, d, events);
                }
            }
            c.commit();
            if (chain != null) {
                chain.committed();
            }
            lastShipTime = Instant.now();
            shipped.addAndGet(events.size());
            inserted.addAndGet(rows);
        } catch (SQLException | RuntimeException e) {
            if (chain != null) {
                chain.reset();
            }
            try {
                c.rollback();
            } catch (SQLException suppressed) {
                e.addSuppressed(suppressed);
            }
            throw e;
        }
    }

    private Connection connection() throws SQLException {
        if (connection == null) {
            Connection c = dataSource.getConnection();
            try {
                c.setAutoCommit(true);
                try (Statement s = c.createStatement()) {
                    // Staging rows vanish at commit; the temp table lives as long as this connection.
                    s.execute("CREATE TEMP TABLE IF NOT EXISTS kv_lineage_stage (LIKE kv_lineage) ON COMMIT DELETE ROWS");
                    // The audit trail is our durability story: never acknowledge a segment on an unflushed commit.
                    s.execute("SET synchronous_commit = on");
                }
                c.setAutoCommit(false);
            } catch (SQLException e) {
                c.close();
                throw e;
            }
            connection = c;
        }
        return connection;
    }

    private void maintainIfDue(Connection c) throws SQLException {
        long now = System.nanoTime();
        if (!maintained || now - lastMaintenanceNanos > config.maintenanceEvery().toNanos()) {
            List<LocalDate> dropped = partitions.maintain(c, PartitionManager.today());
            if (!dropped.isEmpty()) {
                LOG.info(() -> "kv_lineage: dropped partitions past retention " + dropped);
            }
            maintained = true;
            lastMaintenanceNanos = now;
        }
    }

    private void closeConnection() {
        if (connection != null) {
            try {
                connection.close();
            } catch (SQLException ignored) {
                // The connection is being discarded because it already failed.
            }
            connection = null;
        }
    }
}
