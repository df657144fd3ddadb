package dev.pagewarden.db.evidence;

import dev.pagewarden.core.receipt.ReceiptSigner;

import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Timestamp;
import java.time.Clock;
import java.time.Instant;
import java.time.LocalDate;
import java.time.temporal.ChronoUnit;

/**
 * Before a kv_lineage partition is dropped past retention: for every chain with batches of that day, a
 * summary signed with the receipt key (first and last batch, the last batch's hash, the rows), in the
 * dropping transaction. The verifier then knows those rows went by retention, not by someone's DELETE.
 * Signed bytes: {@code fields("pagewarden-drop-v1", chain, day, first seq, last seq, last hash hex, rows,
 * dropped at in epoch microseconds)}. Given to the partition manager as its drop hook ({@code onDrop(summaries::beforeDrop)}):
 * the lineage shipper builds on this package, so this package names nothing of the lineage one.
 */
public final class DropSummaries {
    private final ReceiptSigner signer;
    private final Clock clock;
    private final int timeoutSeconds;

    public DropSummaries(ReceiptSigner signer, Clock clock, int timeoutSeconds) {
        this.signer = signer;
        this.clock = clock;
        this.timeoutSeconds = Math.max(1, timeoutSeconds);
    }

    /** Runs in the dropping transaction just before the partition of {@code day} is dropped. */
    public void beforeDrop(Connection c, LocalDate day) throws SQLException {
        Instant at = clock.instant().truncatedTo(ChronoUnit.MICROS);
        try (PreparedStatement st = c.prepareStatement("""
                SELECT b.chain, min(b.seq), max(b.seq), sum(b.row_count),
                       (SELECT hash FROM lineage_batches l WHERE l.chain = b.chain AND l.seq = max(b.seq))
                FROM lineage_batches b WHERE b.day = ? AND b.seq > coalesce((SELECT max(s.last_seq) FROM lineage_drop_summaries s
                    WHERE s.chain = b.chain AND s.day = b.day), 0)
                GROUP BY b.chain""")) {
            st.setQueryTimeout(timeoutSeconds);
            st.setObject(1, day);
            try (ResultSet rs = st.executeQuery()) {
                while (rs.next()) {
                    String chain = rs.getString(1);
                    long first = rs.getLong(2), last = rs.getLong(3), rows = rs.getLong(4);
                    byte[] lastHash = rs.getBytes(5);
                    ReceiptSigner.Signed signed = signer.sign(message(chain, day, first, last, lastHash, rows, at));
                    try (PreparedStatement ins = c.prepareStatement("""
                            INSERT INTO lineage_drop_summaries (chain, day, first_seq, last_seq, last_hash, row_count, dropped_at, key_id, signature)
                            VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT (chain, day, first_seq) DO NOTHING""")) {
                        ins.setQueryTimeout(timeoutSeconds);
                        ins.setString(1, chain);
                        ins.setObject(2, day);
                        ins.setLong(3, first);
                        ins.setLong(4, last);
                        ins.setBytes(5, lastHash);
                        ins.setLong(6, rows);
                        ins.setTimestamp(7, Timestamp.from(at));
                        ins.setString(8, signed.keyId());
                        ins.setBytes(9, signed.signature());
                        ins.executeUpdate();
                    }
                }
            }
        }
    }

    /** The bytes a drop summary's signature covers. */
    public static byte[] message(String chain, LocalDate day, long firstSeq, long lastSeq, byte[] lastHash, long rows, Instant at) {
        return new Canonical().add("pagewarden-drop-v1").add(chain).add(day.toString()).add(firstSeq).add(lastSeq).add(lastHash)
                .add(rows).add(at).bytes();
    }
}
