package dev.pagewarden.db.evidence;

import dev.pagewarden.core.receipt.TrustedKeys;
import dev.pagewarden.db.audit.KeyTrust;

import java.security.MessageDigest;
import java.security.PublicKey;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Timestamp;
import java.time.Instant;
import java.time.LocalDate;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.HexFormat;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.function.Function;

/**
 * Recomputes every chain and names each broken link: a changed row (its hash differs from the one its link
 * recorded), a deleted row or link (a gap), a reordered pair (two links or batches that verify only in
 * each other's place), rows no chain holds, and checkpoints or retention summaries whose signature fails or
 * whose head the chain no longer has. Lineage batches whose day was dropped past retention are checked
 * against their signed summary instead of their rows. Signatures count only by keys that chain to the roots pinned
 * outside the database ({@link KeyTrust}), made before their key was replaced; every key in {@code receipt_keys} that
 * does not chain is named. Checkpoints the operator archived outside the database ({@link #withArchive}) are checked
 * against the chains too, so rewriting a chain and its checkpoints in the database does not go unnamed. Read only;
 * every statement has a timeout.
 */
public final class ChainVerifier {
    /** One broken link: the table, the row (or {@code chain#seq} for a batch, link or checkpoint), and why. */
    public record Broken(String table, String id, String why) {
    }

    /** {@code ok} when nothing is broken; {@code checked}: what was recomputed, by kind. */
    public record Result(boolean ok, List<Broken> broken, Map<String, Long> checked) {
    }

    /** Why a signature by a key at a time does not count, or null when it does. */
    private interface Signatures {
        String refuse(String keyId, byte[] message, byte[] signature, Instant at);
    }

    private final int timeoutSeconds;
    private final Function<String, PublicKey> keys;
    private final KeyTrust trust;
    private final List<Checkpoints.Checkpoint> archived;

    /** {@code keys}: the public receipt key of a key id, vouched for by the caller, or null when none is known. */
    public ChainVerifier(Function<String, PublicKey> keys, int timeoutSeconds) {
        this(keys, null, timeoutSeconds, List.of());
    }

    /** Signatures count by the keys chaining to {@code trust}'s pinned roots only. */
    public ChainVerifier(KeyTrust trust, int timeoutSeconds) {
        this(null, trust, timeoutSeconds, List.of());
    }

    private ChainVerifier(Function<String, PublicKey> keys, KeyTrust trust, int timeoutSeconds, List<Checkpoints.Checkpoint> archived) {
        this.keys = keys;
        this.trust = trust;
        this.timeoutSeconds = Math.max(1, timeoutSeconds);
        this.archived = List.copyOf(archived);
    }

    /** This verifier, also holding the chains to {@code archived}: checkpoints kept outside the database. */
    public ChainVerifier withArchive(List<Checkpoints.Checkpoint> archived) {
        return new ChainVerifier(keys, trust, timeoutSeconds, archived);
    }

    private record Link(String chain, long seq, String table, long rowId, byte[] rowHash, byte[] prev, byte[] hash, Instant at) {
    }

    private record Batch(String chain, long seq, LocalDate day, int rows, Instant first, Instant last, byte[] rowsHash,
                         byte[] prev, byte[] hash) {
        byte[] recompute(long atSeq) {
            return Canonical.batchHash(chain, atSeq, day.toString(), rows, first, last, rowsHash, prev);
        }
    }

    /** Verifies the chain elements written in [{@code from}, {@code to}] (either may be null: unbounded). */
    public Result verify(Connection c, Instant from, Instant to) throws SQLException {
        List<Broken> broken = new ArrayList<>();
        Map<String, Long> checked = new LinkedHashMap<>();
        boolean whole = from == null && to == null;
        Signatures signatures;
        if (trust != null) {
            TrustedKeys trusted = trust.fresh();
            trusted.untrusted().forEach((id, why) -> broken.add(new Broken("receipt_keys", id,
                    "does not chain to the pinned trust root: " + why + "; nothing it signed counts")));
            signatures = trusted::refuse;
            checked.put("trusted_keys", (long) trusted.trusted().size());
        } else {
            signatures = (keyId, message, signature, at) -> {
                PublicKey key = keyId == null ? null : keys.apply(keyId);
                return key != null && Checkpoints.verifies(key, message, signature) ? null
                        : "signature does not verify with receipt key " + keyId;
            };
        }
        Map<String, byte[]> heads = new HashMap<>(); // "chain#seq" -> hash, for the checkpoints
        for (String table : Canonical.ROW_TABLES) {
            verifyRows(c, table, from, to, whole, broken, checked, heads);
        }
        verifyLineage(c, from, to, whole, broken, checked, heads, signatures);
        int cps = 0;
        Map<String, Checkpoints.Checkpoint> stored = new HashMap<>();
        for (Checkpoints.Checkpoint k : Checkpoints.all(c, timeoutSeconds)) {
            stored.put(k.chain() + "#" + k.seq(), k);
            if ((from != null && k.at().isBefore(from)) || (to != null && k.at().isAfter(to))) {
                continue;
            }
            cps++;
            String id = k.chain() + "#" + k.seq();
            String refused = signatures.refuse(k.keyId(), Checkpoints.message(k.chain(), k.seq(), k.head(), k.at()), k.signature(), k.at());
            if (refused != null) {
                broken.add(new Broken("chain_checkpoints", id, refused));
                continue;
            }
            byte[] h = heads.get(id);
            if (h == null) {
                if (whole) {
                    broken.add(new Broken("chain_checkpoints", id, "the chain no longer has the element this checkpoint signed (truncated)"));
                }
            } else if (!Arrays.equals(h, k.head())) {
                broken.add(new Broken("chain_checkpoints", id, "the chain's element differs from the signed head "
                        + hex(k.head()) + " (rewritten after the checkpoint)"));
            }
        }
        checked.put("checkpoints", (long) cps);
        int kept = 0;
        for (Checkpoints.Checkpoint k : archived) {
            if ((from != null && k.at().isBefore(from)) || (to != null && k.at().isAfter(to))) {
                continue;
            }
            kept++;
            String id = k.chain() + "#" + k.seq();
            String refused = signatures.refuse(k.keyId(), Checkpoints.message(k.chain(), k.seq(), k.head(), k.at()), k.signature(), k.at());
            if (refused != null) {
                broken.add(new Broken("archived_checkpoints", id, refused));
                continue;
            }
            byte[] h = heads.get(id);
            if (h == null) {
                if (whole) {
                    broken.add(new Broken("archived_checkpoints", id, "the chain no longer has the element this archived "
                            + "checkpoint signed (truncated or rewritten)"));
                }
            } else if (!Arrays.equals(h, k.head())) {
                broken.add(new Broken("archived_checkpoints", id, "the chain's element differs from the archived signed head "
                        + hex(k.head()) + " (rewritten after the checkpoint)"));
            }
            Checkpoints.Checkpoint db = stored.get(id);
            if (db == null) {
                broken.add(new Broken("chain_checkpoints", id, "archived checkpoint missing from the database (deleted)"));
            } else if (!Arrays.equals(db.head(), k.head()) || !db.keyId().equals(k.keyId()) || !db.at().equals(k.at())) {
                broken.add(new Broken("chain_checkpoints", id, "differs from the archived checkpoint (replaced in the database)"));
            }
        }
        if (!archived.isEmpty()) {
            checked.put("archived_checkpoints", (long) kept);
        }
        return new Result(broken.isEmpty(), List.copyOf(broken), checked);
    }

    private void verifyRows(Connection c, String table, Instant from, Instant to, boolean whole, List<Broken> broken,
                            Map<String, Long> checked, Map<String, byte[]> heads) throws SQLException {
        List<Link> links = new ArrayList<>();
        try (PreparedStatement st = c.prepareStatement("SELECT chain, seq, row_id, row_hash, prev_hash, hash, linked_at FROM chain_links "
                + "WHERE table_name = ?" + range("linked_at", from, to) + " ORDER BY chain, seq")) {
            st.setQueryTimeout(timeoutSeconds);
            st.setString(1, table);
            bind(st, 2, from, to);
            try (ResultSet rs = st.executeQuery()) {
                while (rs.next()) {
                    links.add(new Link(rs.getString(1), rs.getLong(2), table, rs.getLong(3), rs.getBytes(4), rs.getBytes(5),
                            rs.getBytes(6), rs.getTimestamp(7).toInstant()));
                }
            }
        }
        Map<Long, byte[]> rows = new HashMap<>();
        try (PreparedStatement st = c.prepareStatement("SELECT " + Canonical.select(table) + " FROM " + table)) {
            st.setQueryTimeout(timeoutSeconds);
            try (ResultSet rs = st.executeQuery()) {
                while (rs.next()) {
                    rows.put(rs.getLong(1), Canonical.sha256(Canonical.row(table, rs)));
                }
            }
        }
        // chain order
        Map<String, List<Link>> byChain = new TreeMap<>();
        for (Link l : links) {
            byChain.computeIfAbsent(l.chain(), k -> new ArrayList<>()).add(l);
        }
        for (List<Link> chain : byChain.values()) {
            walk(table, chain, l -> l.seq(), l -> l.prev(), l -> l.hash(),
                    (l, seq) -> Canonical.linkHash(l.chain(), seq, l.table(), l.rowId(), l.rowHash(), l.prev()),
                    l -> String.valueOf(l.rowId()), l -> l.chain(), from == null, broken);
            for (Link l : chain) {
                heads.put(l.chain() + "#" + l.seq(), l.hash());
            }
        }
        // rows against their latest link (a disclosure version is linked again at each change of state)
        Map<Long, Link> latest = new HashMap<>();
        for (Link l : links) {
            latest.merge(l.rowId(), l, (a, b) -> b.at().isAfter(a.at()) ? b : a);
        }
        Map<String, Long> latestHash = new HashMap<>();
        for (Link l : latest.values()) {
            latestHash.put(hex(l.rowHash()), l.rowId());
        }
        for (Link l : latest.values()) {
            byte[] now = rows.get(l.rowId());
            if (now == null) {
                broken.add(new Broken(table, String.valueOf(l.rowId()), "row deleted (linked as " + l.chain() + "#" + l.seq() + ")"));
            } else if (!Arrays.equals(now, l.rowHash())) {
                Long other = latestHash.get(hex(now));
                broken.add(new Broken(table, String.valueOf(l.rowId()), other != null
                        ? "row holds what row " + other + " held when it was written (rows swapped)"
                        : "row changed since it was written (" + l.chain() + "#" + l.seq() + ")"));
            }
        }
        if (whole && !latest.isEmpty()) {
            long firstLinked = latest.keySet().stream().mapToLong(Long::longValue).min().orElseThrow();
            rows.keySet().stream().filter(id -> id > firstLinked && !latest.containsKey(id)).sorted().forEach(id -> broken.add(
                    new Broken(table, String.valueOf(id), "row in no chain: not written by a chained writer")));
        }
        checked.put(table, (long) latest.size());
    }

    private void verifyLineage(Connection c, Instant from, Instant to, boolean whole, List<Broken> broken,
                               Map<String, Long> checked, Map<String, byte[]> heads, Signatures signatures) throws SQLException {
        Map<String, List<Batch>> byChain = new TreeMap<>();
        try (PreparedStatement st = c.prepareStatement("SELECT chain, seq, day, row_count, first_time, last_time, rows_hash, prev_hash, hash "
                + "FROM lineage_batches WHERE true" + (to == null ? "" : " AND first_time <= ?") + (from == null ? "" : " AND last_time >= ?")
                + " ORDER BY chain, seq")) {
            st.setQueryTimeout(timeoutSeconds);
            int i = 1;
            if (to != null) {
                st.setTimestamp(i++, Timestamp.from(to));
            }
            if (from != null) {
                st.setTimestamp(i, Timestamp.from(from));
            }
            try (ResultSet rs = st.executeQuery()) {
                while (rs.next()) {
                    Batch b = new Batch(rs.getString(1), rs.getLong(2), rs.getObject(3, LocalDate.class), rs.getInt(4),
                            rs.getTimestamp(5).toInstant(), rs.getTimestamp(6).toInstant(), rs.getBytes(7), rs.getBytes(8), rs.getBytes(9));
                    byChain.computeIfAbsent(b.chain(), k -> new ArrayList<>()).add(b);
                }
            }
        }
        Map<String, List<Summary>> summaries = summaries(c, broken, signatures);
        long batches = 0, rowsChecked = 0;
        for (var e : byChain.entrySet()) {
            String chain = e.getKey();
            List<Batch> list = e.getValue();
            batches += list.size();
            walk("lineage_batches", list, Batch::seq, Batch::prev, Batch::hash, Batch::recompute,
                    b -> chain + "#" + b.seq(), Batch::chain, from == null, broken);
            Map<Long, Batch> bySeq = new HashMap<>();
            for (Batch b : list) {
                bySeq.put(b.seq(), b);
                heads.put(chain + "#" + b.seq(), b.hash());
            }
            List<Summary> dropped = summaries.getOrDefault(chain, List.of());
            for (Summary s : dropped) {
                Batch last = bySeq.get(s.lastSeq());
                if (last != null && !Arrays.equals(last.hash(), s.lastHash())) {
                    broken.add(new Broken("lineage_drop_summaries", chain + "@" + s.day(),
                            "last hash differs from batch " + chain + "#" + s.lastSeq()));
                }
            }
            // recompute the rows of every batch whose day still has its partition
            long lo = list.getFirst().seq(), hi = list.getLast().seq();
            Map<Long, long[]> counts = new HashMap<>();
            Map<Long, MessageDigest> digests = new HashMap<>();
            try (PreparedStatement st = c.prepareStatement("SELECT chain_seq, " + Canonical.select("kv_lineage")
                    + " FROM kv_lineage WHERE chain = ? AND chain_seq BETWEEN ? AND ? ORDER BY chain_seq, event_time, event_id")) {
                st.setQueryTimeout(timeoutSeconds);
                st.setFetchSize(10_000);
                st.setString(1, chain);
                st.setLong(2, lo);
                st.setLong(3, hi);
                boolean auto = c.getAutoCommit();
                if (auto) {
                    c.setAutoCommit(false); // pgjdbc streams with a fetch size only inside a transaction
                }
                try (ResultSet rs = st.executeQuery()) {
                    while (rs.next()) {
                        long seq = rs.getLong(1);
                        counts.computeIfAbsent(seq, k -> new long[1])[0]++;
                        digests.computeIfAbsent(seq, k -> Canonical.digest()).update(Canonical.sha256(Canonical.row("kv_lineage", rs, 1)));
                        rowsChecked++;
                    }
                } finally {
                    if (auto) {
                        c.rollback();
                        c.setAutoCommit(true);
                    }
                }
            }
            for (Batch b : list) {
                String id = chain + "#" + b.seq();
                boolean retained = dropped.stream().anyMatch(x -> x.day().equals(b.day()) && x.firstSeq() <= b.seq()
                        && b.seq() <= x.lastSeq());
                long[] n = counts.get(b.seq());
                if (retained) {
                    if (n != null) {
                        broken.add(new Broken("kv_lineage", id, "rows of a day summarized as dropped are still there"));
                    }
                    continue;
                }
                if (n == null) {
                    broken.add(new Broken("kv_lineage", id, "all " + b.rows() + " rows of the batch deleted (" + b.first() + " .. " + b.last() + ")"));
                } else if (n[0] < b.rows()) {
                    broken.add(new Broken("kv_lineage", id, (b.rows() - n[0]) + " of " + b.rows() + " rows deleted (" + b.first() + " .. " + b.last() + ")"));
                } else if (n[0] > b.rows()) {
                    broken.add(new Broken("kv_lineage", id, (n[0] - b.rows()) + " rows added to a batch of " + b.rows()));
                } else if (!Arrays.equals(digests.get(b.seq()).digest(), b.rowsHash())) {
                    broken.add(new Broken("kv_lineage", id, "rows changed since they were shipped (" + b.first() + " .. " + b.last() + ")"));
                }
            }
            for (Long seq : counts.keySet()) {
                if (!bySeq.containsKey(seq)) {
                    broken.add(new Broken("kv_lineage", chain + "#" + seq, counts.get(seq)[0] + " rows name a batch the chain does not have"));
                }
            }
        }
        checked.put("lineage_batches", batches);
        checked.put("kv_lineage", rowsChecked);
    }

    /** A retention summary whose signature verified. */
    private record Summary(LocalDate day, long firstSeq, long lastSeq, byte[] lastHash) {
    }

    /** chain -> its verified retention summaries; a summary whose signature fails is reported and left out. */
    private Map<String, List<Summary>> summaries(Connection c, List<Broken> broken, Signatures signatures) throws SQLException {
        Map<String, List<Summary>> out = new HashMap<>();
        try (PreparedStatement st = c.prepareStatement("SELECT chain, day, first_seq, last_seq, last_hash, row_count, dropped_at, key_id, "
                + "signature FROM lineage_drop_summaries")) {
            st.setQueryTimeout(timeoutSeconds);
            try (ResultSet rs = st.executeQuery()) {
                while (rs.next()) {
                    String chain = rs.getString(1);
                    LocalDate day = rs.getObject(2, LocalDate.class);
                    long first = rs.getLong(3), last = rs.getLong(4);
                    byte[] lastHash = rs.getBytes(5);
                    Instant droppedAt = rs.getTimestamp(7).toInstant();
                    byte[] message = DropSummaries.message(chain, day, first, last, lastHash, rs.getLong(6), droppedAt);
                    String refused = signatures.refuse(rs.getString(8), message, rs.getBytes(9), droppedAt);
                    if (refused != null) {
                        broken.add(new Broken("lineage_drop_summaries", chain + "@" + day, refused));
                        continue;
                    }
                    out.computeIfAbsent(chain, k -> new ArrayList<>()).add(new Summary(day, first, last, lastHash));
                }
            }
        }
        return out;
    }

    /**
     * Walks one chain in sequence order: each element's own hash, the gap before it, its link to its
     * predecessor. An element that verifies only at a neighbour's place, with that neighbour verifying at
     * its place, is half of a reordered pair.
     */
    private static <T> void walk(String table, List<T> chain, Function<T, Long> seqOf, Function<T, byte[]> prevOf,
                                 Function<T, byte[]> hashOf, java.util.function.BiFunction<T, Long, byte[]> recompute,
                                 Function<T, String> idOf, Function<T, String> chainOf, boolean fromStart, List<Broken> broken) {
        Map<Long, T> bySeq = new HashMap<>();
        Map<String, Long> seqOfHash = new HashMap<>();
        for (T t : chain) {
            bySeq.put(seqOf.apply(t), t);
            seqOfHash.put(hex(hashOf.apply(t)), seqOf.apply(t));
        }
        java.util.Set<Long> reordered = new java.util.HashSet<>();
        T prev = null;
        for (T t : chain) {
            long seq = seqOf.apply(t);
            String where = chainOf.apply(t) + "#" + seq;
            boolean selfOk = Arrays.equals(recompute.apply(t, seq), hashOf.apply(t));
            if (!selfOk) {
                Long swapped = null;
                for (long other : new long[]{seq - 1, seq + 1}) {
                    T o = bySeq.get(other);
                    if (o != null && Arrays.equals(recompute.apply(t, other), hashOf.apply(t))
                            && Arrays.equals(recompute.apply(o, seq), hashOf.apply(o))) {
                        swapped = other;
                        reordered.add(seq);
                    }
                }
                broken.add(new Broken(table, idOf.apply(t), swapped != null
                        ? "reordered: " + where + " belongs at #" + swapped + " (swapped with it)"
                        : "chain element " + where + " altered: its hash does not match its content"));
            }
            long expected = prev == null ? (fromStart ? 1 : seq) : seqOf.apply(prev) + 1;
            if (seq > expected) {
                broken.add(new Broken(table.equals("lineage_batches") ? "lineage_batches" : "chain_links",
                        chainOf.apply(t) + "#" + expected + (seq - 1 > expected ? ".." + (seq - 1) : ""),
                        "chain elements deleted before " + where));
            }
            byte[] expectedPrev = prev != null && seqOf.apply(prev) == seq - 1 ? hashOf.apply(prev)
                    : seq == 1 ? Canonical.GENESIS : null;
            if (selfOk && !reordered.contains(seq - 1) && expectedPrev != null && !Arrays.equals(prevOf.apply(t), expectedPrev)) {
                Long follows = seqOfHash.get(hex(prevOf.apply(t)));
                broken.add(new Broken(table, idOf.apply(t), follows != null
                        ? "out of order: " + where + " was written after #" + follows
                        : "broken link: " + where + " does not follow #" + (seq - 1)));
            }
            prev = t;
        }
    }

    private static String range(String column, Instant from, Instant to) {
        return (from == null ? "" : " AND " + column + " >= ?") + (to == null ? "" : " AND " + column + " <= ?");
    }

    private static void bind(PreparedStatement st, int i, Instant from, Instant to) throws SQLException {
        if (from != null) {
            st.setTimestamp(i++, Timestamp.from(from));
        }
        if (to != null) {
            st.setTimestamp(i, Timestamp.from(to));
        }
    }

    static String hex(byte[] b) {
        return b == null ? "null" : HexFormat.of().formatHex(b);
    }
}
