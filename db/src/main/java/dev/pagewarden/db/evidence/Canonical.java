package dev.pagewarden.db.evidence;

import java.io.ByteArrayOutputStream;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.sql.Array;
import java.sql.ResultSet;
import java.sql.ResultSetMetaData;
import java.sql.SQLException;
import java.sql.Types;
import java.time.Instant;
import java.time.OffsetDateTime;
import java.time.temporal.ChronoUnit;
import java.util.HexFormat;
import java.util.List;
import java.util.Map;

/**
 * The canonical encodings the chain hashes cover (docs/evidence.md): a sequence of fields, each a 4-byte
 * big-endian length and that many bytes of UTF-8 text, or the length {@code 0xFFFFFFFF} alone for SQL NULL.
 * Values are text so that any language can rebuild them: integers in decimal, timestamps as microseconds
 * since the Unix epoch in decimal, booleans {@code t}/{@code f}, bytes in lowercase hex, arrays
 * {@code {1,2,3}}. A row is the table name followed by the columns of {@link #COLUMNS}, in that order.
 */
public final class Canonical {
    /** The chained tables and the columns their row encoding covers, in order. */
    public static final Map<String, List<String>> COLUMNS = Map.of(
            "kv_lineage", List.of("event_id", "event_time", "kind", "node", "worker", "page", "epoch", "request_id", "tenant_id",
                    "slot_from", "slot_to", "peer_worker", "peer_page", "peer_epoch", "generation", "checksum", "ok"),
            "admin_audit", List.of("id", "at", "actor", "action", "target", "details"),
            "incident_entries", List.of("id", "incident_id", "at", "kind", "actor", "text"),
            "safety_events", List.of("id", "event_time", "type", "severity", "node", "worker", "request_id", "tenant_id",
                    "pages", "epochs", "details"),
            "disclosures", List.of("id", "incident_id", "version", "status", "title", "body", "created_at", "created_by",
                    "reviewed_by", "published_at", "published_by"));

    /** The tables chained row by row (kv_lineage is chained by batch). */
    public static final List<String> ROW_TABLES = List.of("admin_audit", "incident_entries", "safety_events", "disclosures");

    /** The predecessor hash of a chain's first element. */
    static final byte[] GENESIS = new byte[32];

    private final ByteArrayOutputStream out = new ByteArrayOutputStream(256);

    public Canonical add(String value) {
        if (value == null) {
            out.writeBytes(new byte[]{-1, -1, -1, -1});
            return this;
        }
        byte[] b = value.getBytes(StandardCharsets.UTF_8);
        out.writeBytes(new byte[]{(byte) (b.length >>> 24), (byte) (b.length >>> 16), (byte) (b.length >>> 8), (byte) b.length});
        out.writeBytes(b);
        return this;
    }

    public Canonical add(long value) {
        return add(Long.toString(value));
    }

    public Canonical add(byte[] value) {
        return add(value == null ? null : HexFormat.of().formatHex(value));
    }

    public Canonical add(Instant value) {
        return add(value == null ? null : Long.toString(micros(value)));
    }

    public byte[] bytes() {
        return out.toByteArray();
    }

    public byte[] sha256() {
        return sha256(out.toByteArray());
    }

    public static byte[] sha256(byte[] data) {
        return digest().digest(data);
    }

    /** SHA-256 of the text's UTF-8 bytes. */
    public static byte[] sha256(String text) {
        return sha256(text.getBytes(StandardCharsets.UTF_8));
    }

    public static MessageDigest digest() {
        try {
            return MessageDigest.getInstance("SHA-256");
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException("SHA-256 not available", e);
        }
    }

    public static long micros(Instant t) {
        return ChronoUnit.MICROS.between(Instant.EPOCH, t);
    }

    /** {@code SELECT} list of a table's encoded columns. */
    static String select(String table) {
        List<String> cols = COLUMNS.get(table);
        if (cols == null) {
            throw new IllegalArgumentException("not a chained table: " + table);
        }
        return String.join(", ", cols);
    }

    /** The encoding of the current row of {@code rs}, whose first columns are {@link #select(String)} of {@code table}. */
    static byte[] row(String table, ResultSet rs) throws SQLException {
        return row(table, rs, 0);
    }

    /** Like {@link #row(String, ResultSet)} with the encoded columns after the first {@code skip} ones. */
    static byte[] row(String table, ResultSet rs, int skip) throws SQLException {
        return encode(table, values(table, rs, skip));
    }

    /** The canonical text of each encoded column of the current row, in {@link #COLUMNS} order (null for SQL NULL). */
    static List<String> values(String table, ResultSet rs, int skip) throws SQLException {
        ResultSetMetaData md = rs.getMetaData();
        int n = COLUMNS.get(table).size();
        List<String> out = new java.util.ArrayList<>(n);
        for (int i = 1 + skip; i <= n + skip; i++) {
            out.add(value(rs, i, md));
        }
        return out;
    }

    /** The row encoding from its column texts (what an offline verifier rebuilds from an evidence bundle). */
    public static byte[] encode(String table, List<String> values) {
        List<String> cols = COLUMNS.get(table);
        if (cols == null || values.size() != cols.size()) {
            throw new IllegalArgumentException("a " + table + " row needs the columns " + cols);
        }
        Canonical c = new Canonical().add(table);
        values.forEach(c::add);
        return c.bytes();
    }

    private static String value(ResultSet rs, int i, ResultSetMetaData md) throws SQLException {
        String type = md.getColumnTypeName(i);
        switch (md.getColumnType(i)) {
            case Types.TIMESTAMP, Types.TIMESTAMP_WITH_TIMEZONE -> {
                OffsetDateTime t = rs.getObject(i, OffsetDateTime.class);
                return t == null ? null : Long.toString(micros(t.toInstant()));
            }
            case Types.BIT, Types.BOOLEAN -> {
                boolean b = rs.getBoolean(i);
                return rs.wasNull() ? null : b ? "t" : "f";
            }
            case Types.BINARY, Types.VARBINARY -> {
                byte[] b = rs.getBytes(i);
                return b == null ? null : HexFormat.of().formatHex(b);
            }
            case Types.ARRAY -> {
                Array a = rs.getArray(i);
                if (a == null) {
                    return null;
                }
                Object[] values = (Object[]) a.getArray();
                StringBuilder sb = new StringBuilder("{");
                for (int k = 0; k < values.length; k++) {
                    sb.append(k == 0 ? "" : ",").append(values[k]);
                }
                return sb.append('}').toString();
            }
            case Types.SMALLINT, Types.INTEGER, Types.BIGINT, Types.VARCHAR, Types.CHAR -> {
                return rs.getString(i);
            }
            default -> throw new IllegalStateException("no canonical form for column type " + type);
        }
    }

    /**
     * Hash of one row link: {@code SHA-256(fields("pagewarden-link-v1", chain, seq, table, row id, row hash, prev hash))}.
     */
    public static byte[] linkHash(String chain, long seq, String table, long rowId, byte[] rowHash, byte[] prev) {
        return new Canonical().add("pagewarden-link-v1").add(chain).add(seq).add(table).add(rowId).add(rowHash).add(prev).sha256();
    }

    /**
     * Hash of one lineage batch: {@code SHA-256(fields("pagewarden-batch-v1", chain, seq, day, rows, first, last,
     * rows hash, prev hash))}.
     */
    public static byte[] batchHash(String chain, long seq, String day, int rows, Instant first, Instant last, byte[] rowsHash,
                            byte[] prev) {
        return new Canonical().add("pagewarden-batch-v1").add(chain).add(seq).add(day).add(rows).add(first).add(last)
                .add(rowsHash).add(prev).sha256();
    }
}
