package dev.pagewarden.db.evidence;

import java.sql.Array;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Timestamp;
import java.time.Instant;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;

/**
 * Evidence rows with what links them to signed checkpoints, for an evidence bundle: each row as the
 * canonical column texts its hash covers; for the row tables the chain links from the first exported row
 * to the first checkpoint at or after the last one; for lineage the batch records over the same span and,
 * for every batch holding an exported row, the hashes of all of its rows in order (a row's neighbours are
 * given by hash only, so a tenant's slice shows nothing of another tenant's rows). Read only; plain JSON
 * values (maps, lists, strings, numbers); bytes in lowercase hex.
 */
public final class EvidenceExport {
    private final int timeoutSeconds;

    public EvidenceExport(int timeoutSeconds) {
        this.timeoutSeconds = Math.max(1, timeoutSeconds);
    }

    /**
     * @param rows            ids per row-chained table to export
     * @param lineageRequests requests whose lineage rows in [{@code from}, {@code to}] are exported
     * @param tenant          when not null, only lineage rows of this tenant
     */
    public record Selection(Map<String, List<Long>> rows, Set<Long> lineageRequests, String tenant, Instant from, Instant to) {
    }

    /** {@code rows}, {@code lineage}, {@code links}, {@code batches}, {@code batch_row_hashes}, {@code checkpoints}. */
    public Map<String, Object> export(Connection c, Selection s) throws SQLException {
        List<Map<String, Object>> rows = new ArrayList<>();
        Map<String, long[]> linkSpan = new TreeMap<>(); // chain -> {min, max} seq needed
        for (var e : s.rows().entrySet()) {
            String table = e.getKey();
            if (!Canonical.ROW_TABLES.contains(table)) {
                throw new IllegalArgumentException("not a row-chained table: " + table);
            }
            if (e.getValue().isEmpty()) {
                continue;
            }
            try (PreparedStatement st = c.prepareStatement("SELECT " + Canonical.select(table) + " FROM " + table
                    + " WHERE id = ANY(?) ORDER BY id")) {
                st.setQueryTimeout(timeoutSeconds);
                st.setArray(1, c.createArrayOf("bigint", e.getValue().toArray()));
                try (ResultSet rs = st.executeQuery()) {
                    while (rs.next()) {
                        Map<String, Object> row = new LinkedHashMap<>();
                        row.put("table", table);
                        row.put("id", rs.getLong(1));
                        row.put("values", named(table, Canonical.values(table, rs, 0)));
                        rows.add(row);
                    }
                }
            }
            try (PreparedStatement st = c.prepareStatement("SELECT chain, min(seq), max(seq) FROM chain_links WHERE table_name = ? "
                    + "AND row_id = ANY(?) GROUP BY chain")) {
                st.setQueryTimeout(timeoutSeconds);
                st.setString(1, table);
                st.setArray(2, c.createArrayOf("bigint", e.getValue().toArray()));
                try (ResultSet rs = st.executeQuery()) {
                    while (rs.next()) {
                        linkSpan.merge(rs.getString(1), new long[]{rs.getLong(2), rs.getLong(3)},
                                (a, b) -> new long[]{Math.min(a[0], b[0]), Math.max(a[1], b[1])});
                    }
                }
            }
        }
        List<Map<String, Object>> lineage = new ArrayList<>();
        Map<String, long[]> batchSpan = new TreeMap<>();
        Map<String, Long> holding = new TreeMap<>(); // "chain#seq" of batches holding exported rows
        if (!s.lineageRequests().isEmpty()) {
            try (PreparedStatement st = c.prepareStatement("SELECT chain, chain_seq, " + Canonical.select("kv_lineage")
                    + " FROM kv_lineage WHERE request_id = ANY(?) AND event_time >= ? AND event_time <= ?"
                    + (s.tenant() == null ? "" : " AND tenant_id = ?") + " ORDER BY event_time, event_id")) {
                st.setQueryTimeout(timeoutSeconds);
                Array ids = c.createArrayOf("bigint", s.lineageRequests().toArray());
                st.setArray(1, ids);
                st.setTimestamp(2, Timestamp.from(s.from()));
                st.setTimestamp(3, Timestamp.from(s.to()));
                if (s.tenant() != null) {
                    st.setString(4, s.tenant());
                }
                try (ResultSet rs = st.executeQuery()) {
                    while (rs.next()) {
                        String chain = rs.getString(1);
                        long seq = rs.getLong(2);
                        boolean chained = chain != null && !rs.wasNull();
                        Map<String, Object> row = new LinkedHashMap<>();
                        row.put("chain", chained ? chain : null);
                        row.put("seq", chained ? seq : null);
                        row.put("values", named("kv_lineage", Canonical.values("kv_lineage", rs, 2)));
                        lineage.add(row);
                        if (chained) {
                            batchSpan.merge(chain, new long[]{seq, seq}, (a, b) -> new long[]{Math.min(a[0], b[0]), Math.max(a[1], b[1])});
                            holding.put(chain + "#" + seq, seq);
                        }
                    }
                }
            }
        }
        List<Map<String, Object>> checkpoints = new ArrayList<>();
        List<Map<String, Object>> links = chainRange(c, linkSpan, "SELECT chain, seq, table_name, row_id, row_hash, prev_hash, hash "
                + "FROM chain_links", checkpoints, rs -> {
                    Map<String, Object> l = new LinkedHashMap<>();
                    l.put("chain", rs.getString(1));
                    l.put("seq", rs.getLong(2));
                    l.put("table", rs.getString(3));
                    l.put("row_id", rs.getLong(4));
                    l.put("row_hash", ChainVerifier.hex(rs.getBytes(5)));
                    l.put("prev_hash", ChainVerifier.hex(rs.getBytes(6)));
                    l.put("hash", ChainVerifier.hex(rs.getBytes(7)));
                    return l;
                });
        List<Map<String, Object>> batches = chainRange(c, batchSpan, "SELECT chain, seq, day, row_count, first_time, last_time, "
                + "rows_hash, prev_hash, hash FROM lineage_batches", checkpoints, rs -> {
                    Map<String, Object> b = new LinkedHashMap<>();
                    b.put("chain", rs.getString(1));
                    b.put("seq", rs.getLong(2));
                    b.put("day", rs.getObject(3, java.time.LocalDate.class).toString());
                    b.put("row_count", rs.getInt(4));
                    b.put("first_time", Long.toString(Canonical.micros(rs.getTimestamp(5).toInstant())));
                    b.put("last_time", Long.toString(Canonical.micros(rs.getTimestamp(6).toInstant())));
                    b.put("rows_hash", ChainVerifier.hex(rs.getBytes(7)));
                    b.put("prev_hash", ChainVerifier.hex(rs.getBytes(8)));
                    b.put("hash", ChainVerifier.hex(rs.getBytes(9)));
                    return b;
                });
        Map<String, List<String>> rowHashes = new TreeMap<>();
        for (String key : holding.keySet()) {
            String chain = key.substring(0, key.lastIndexOf('#'));
            long seq = holding.get(key);
            List<String> hashes = new ArrayList<>();
            try (PreparedStatement st = c.prepareStatement("SELECT " + Canonical.select("kv_lineage") + " FROM kv_lineage k "
                    + "JOIN lineage_batches b ON b.chain = k.chain AND b.seq = k.chain_seq "
                    + "WHERE k.chain = ? AND k.chain_seq = ? AND k.event_time BETWEEN b.first_time AND b.last_time "
                    + "ORDER BY k.event_time, k.event_id")) {
                st.setQueryTimeout(timeoutSeconds);
                st.setString(1, chain);
                st.setLong(2, seq);
                try (ResultSet rs = st.executeQuery()) {
                    while (rs.next()) {
                        hashes.add(ChainVerifier.hex(Canonical.sha256(Canonical.row("kv_lineage", rs))));
                    }
                }
            }
            rowHashes.put(key, hashes);
        }
        Map<String, Object> out = new LinkedHashMap<>();
        out.put("rows", rows);
        out.put("lineage", lineage);
        out.put("links", links);
        out.put("batches", batches);
        out.put("batch_row_hashes", rowHashes);
        out.put("checkpoints", checkpoints);
        return out;
    }

    /**
     * Adds the first checkpoint of {@code chain} at or after {@code seq} to {@code into} (once) and returns
     * its seq; {@code seq} itself when no checkpoint covers it yet.
     */
    private long cover(Connection c, String chain, long seq, List<Map<String, Object>> into) throws SQLException {
        try (PreparedStatement st = c.prepareStatement("SELECT chain, seq, head, at, key_id, signature FROM chain_checkpoints "
                + "WHERE chain = ? AND seq >= ? ORDER BY seq LIMIT 1")) {
            st.setQueryTimeout(timeoutSeconds);
            st.setString(1, chain);
            st.setLong(2, seq);
            try (ResultSet rs = st.executeQuery()) {
                if (!rs.next()) {
                    return seq;
                }
                Map<String, Object> k = new LinkedHashMap<>();
                k.put("chain", rs.getString(1));
                k.put("seq", rs.getLong(2));
                k.put("head", ChainVerifier.hex(rs.getBytes(3)));
                k.put("at", Long.toString(Canonical.micros(rs.getTimestamp(4).toInstant())));
                k.put("key_id", rs.getString(5));
                k.put("signature", java.util.Base64.getEncoder().encodeToString(rs.getBytes(6)));
                into.add(k);
                return rs.getLong(2);
            }
        }
    }

    private static Map<String, String> named(String table, List<String> values) {
        Map<String, String> out = new LinkedHashMap<>();
        List<String> cols = Canonical.COLUMNS.get(table);
        for (int i = 0; i < cols.size(); i++) {
            out.put(cols.get(i), values.get(i));
        }
        return out;
    }


    private interface RowReader {
        Map<String, Object> read(ResultSet rs) throws SQLException;
    }

    /**
     * The entries of each chain from the first one the evidence needs up to the checkpoint that covers the last
     * (added to {@code checkpoints}), in chain order.
     */
    private List<Map<String, Object>> chainRange(Connection c, Map<String, long[]> spans, String select,
                                                 List<Map<String, Object>> checkpoints, RowReader reader) throws SQLException {
        List<Map<String, Object>> out = new ArrayList<>();
        for (var e : spans.entrySet()) {
            long upper = cover(c, e.getKey(), e.getValue()[1], checkpoints);
            try (PreparedStatement st = c.prepareStatement(select + " WHERE chain = ? AND seq BETWEEN ? AND ? ORDER BY seq")) {
                st.setQueryTimeout(timeoutSeconds);
                st.setString(1, e.getKey());
                st.setLong(2, e.getValue()[0]);
                st.setLong(3, upper);
                try (ResultSet rs = st.executeQuery()) {
                    while (rs.next()) {
                        out.add(reader.read(rs));
                    }
                }
            }
        }
        return out;
    }
}
