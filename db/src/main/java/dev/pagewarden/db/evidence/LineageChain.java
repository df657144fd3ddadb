package dev.pagewarden.db.evidence;

import dev.pagewarden.core.lineage.LineageEvent;
import dev.pagewarden.db.journal.KindCodes;

import java.security.MessageDigest;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Timestamp;
import java.time.Instant;
import java.time.LocalDate;
import java.time.OffsetDateTime;
import java.time.ZoneOffset;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Comparator;
import java.util.HashSet;
import java.util.List;
import java.util.Set;

/**
 * The lineage chain of one shipper ({@code lineage:<node>}): every batch the shipper inserts gets a row in
 * {@code lineage_batches} with the SHA-256 over the SHA-256 of each row it actually inserted, in
 * (event time, event id) order (a re-shipped duplicate is not
 * part of the batch that repeats it) and the hash of the previous batch; the rows carry the chain and the
 * batch number. Only the shipper's thread uses it: the head is kept in memory, read from the database at
 * the first batch and again after any failure, and advanced only once the batch's transaction committed.
 * Events shipped after a database stall come from the journal and are chained when they land.
 */
public final class LineageChain {
    private static final int TIMEOUT_SECONDS = 60;
    private final String chain;
    private long seq = -1;
    private byte[] head;
    private long pendingSeq;
    private byte[] pendingHead;

    public LineageChain(String node) {
        if (node == null || node.isBlank() || node.contains("\n") || node.contains("#")) {
            throw new IllegalArgumentException("chain node id must be a non-blank line without '#': '" + node + "'");
        }
        this.chain = "lineage:" + node;
    }

    public String chain() {
        return chain;
    }

    private record Row(long timeMicros, long eventId, byte[] hash) {
    }

    private static final Comparator<Row> ORDER = Comparator.comparingLong(Row::timeMicros).thenComparingLong(Row::eventId);

    /**
     * Moves the staged rows of {@code day} from {@code stage} into {@code kv_lineage} as the chain's next batch
     * (nothing when every one of them was there already); returns the rows inserted. {@code events} are the
     * staged events: the batch hash covers those the database reports inserted, encoded here as the
     * verifier encodes the stored rows. The caller commits, then calls {@link #committed()}, or
     * {@link #reset()} on any failure.
     */
    public int insertBatch(Connection c, String stage, String columns, LocalDate day, List<LineageEvent> events) throws SQLException {
        if (seq < 0) {
            loadHead(c);
            pendingSeq = seq;
            pendingHead = head;
        }
        long next = pendingSeq + 1;
        Set<Key> inserted = new HashSet<>();
        try (PreparedStatement st = c.prepareStatement("INSERT INTO kv_lineage (" + columns + ", chain, chain_seq) SELECT "
                + columns + ", ?, ? FROM " + stage + " WHERE event_time >= ? AND event_time < ? "
                + "ON CONFLICT (event_id, event_time) DO NOTHING RETURNING event_id, event_time")) {
            st.setQueryTimeout(TIMEOUT_SECONDS);
            st.setString(1, chain);
            st.setLong(2, next);
            st.setTimestamp(3, Timestamp.from(day.atStartOfDay(ZoneOffset.UTC).toInstant()));
            st.setTimestamp(4, Timestamp.from(day.plusDays(1).atStartOfDay(ZoneOffset.UTC).toInstant()));
            try (ResultSet rs = st.executeQuery()) {
                while (rs.next()) {
                    inserted.add(new Key(rs.getLong(1), Canonical.micros(rs.getObject(2, OffsetDateTime.class).toInstant())));
                }
            }
        }
        if (inserted.isEmpty()) {
            return 0;
        }
        List<Row> rows = new ArrayList<>(inserted.size());
        for (LineageEvent e : events) {
            // a key inserted once, even if the journal holds the event twice
            if (inserted.remove(new Key(e.id(), e.timeMicros()))) {
                rows.add(new Row(e.timeMicros(), e.id(), Canonical.sha256(encode(e))));
            }
        }
        if (!inserted.isEmpty()) {
            throw new IllegalStateException("kv_lineage reports rows inserted that the batch did not stage: " + inserted.size());
        }
        rows.sort(ORDER);
        MessageDigest d = Canonical.digest();
        for (Row r : rows) {
            d.update(r.hash()); // hashes of hashes: one row can be shown with its neighbours' hashes only
        }
        byte[] rowsHash = d.digest();
        Instant first = micros(rows.getFirst().timeMicros()), last = micros(rows.getLast().timeMicros());
        byte[] hash = Canonical.batchHash(chain, next, day.toString(), rows.size(), first, last, rowsHash, pendingHead);
        try (PreparedStatement st = c.prepareStatement("INSERT INTO lineage_batches (chain, seq, day, row_count, first_time, last_time, "
                + "rows_hash, prev_hash, hash) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)")) {
            st.setQueryTimeout(TIMEOUT_SECONDS);
            st.setString(1, chain);
            st.setLong(2, next);
            st.setObject(3, day);
            st.setInt(4, rows.size());
            st.setTimestamp(5, Timestamp.from(first));
            st.setTimestamp(6, Timestamp.from(last));
            st.setBytes(7, rowsHash);
            st.setBytes(8, pendingHead);
            st.setBytes(9, hash);
            st.executeUpdate();
        }
        pendingSeq = next;
        pendingHead = hash;
        return rows.size();
    }

    /** The canonical row encoding of an event as kv_lineage stores it (see {@link Canonical#COLUMNS}). */
    static byte[] encode(LineageEvent e) {
        return Canonical.encode("kv_lineage", Arrays.asList(Long.toString(e.id()), Long.toString(e.timeMicros()),
                Short.toString(KindCodes.code(e.kind())), e.node(), e.worker(), Integer.toString(e.page()), Long.toString(e.epoch()),
                Long.toString(e.requestId()), e.tenant(), Integer.toString(e.slotFrom()), Integer.toString(e.slotTo()),
                e.peerWorker(), Integer.toString(e.peerPage()), Long.toString(e.peerEpoch()), Integer.toString(e.generation()),
                Integer.toString(e.checksum()), e.ok() ? "t" : "f"));
    }

    private record Key(long eventId, long timeMicros) {
    }

    /** The batches inserted since the last commit are committed: they are the head now. */
    public void committed() {
        if (seq >= 0) {
            seq = pendingSeq;
            head = pendingHead;
        }
    }

    /** After a failed transaction: the head is read from the database again before the next batch. */
    public void reset() {
        seq = -1;
        head = null;
    }

    private void loadHead(Connection c) throws SQLException {
        try (PreparedStatement st = c.prepareStatement("SELECT seq, hash FROM lineage_batches WHERE chain = ? ORDER BY seq DESC LIMIT 1")) {
            st.setQueryTimeout(TIMEOUT_SECONDS);
            st.setString(1, chain);
            try (ResultSet rs = st.executeQuery()) {
                if (rs.next()) {
                    seq = rs.getLong(1);
                    head = rs.getBytes(2);
                } else {
                    seq = 0;
                    head = Canonical.GENESIS;
                }
            }
        }
    }

    private static Instant micros(long m) {
        return Instant.EPOCH.plus(m, java.time.temporal.ChronoUnit.MICROS);
    }
}
