package dev.pagewarden.db.evidence;

import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;

/**
 * Links evidence rows into their writer's chain ({@code <table>:<node>} in {@code chain_links}): the row as
 * stored (read back in the caller's transaction, so database defaults are covered), its SHA-256, and the
 * hash of the chain's previous link. Must run in the transaction that wrote the row: the link commits or
 * rolls back with it. A transaction-scoped advisory lock per node serializes this node's writers until
 * commit, so the head read here is the committed one and two transactions never take the same place; one
 * lock for all of a node's chains, so two transactions linking rows of two tables in opposite orders
 * cannot deadlock. Chains of different nodes never wait for each other.
 */
public final class RowChains {
    /** First key of the advisory lock; the second is the node's hash. */
    private static final int LOCK_SPACE = 0x70770002;

    private final String node;
    private final int timeoutSeconds;

    /**
     * @param node           this writer's node id (the chain names end in it)
     * @param timeoutSeconds the longest each statement may run
     */
    public RowChains(String node, int timeoutSeconds) {
        if (node == null || node.isBlank() || node.contains("\n") || node.contains("#")) {
            throw new IllegalArgumentException("chain node id must be a non-blank line without '#': '" + node + "'");
        }
        this.node = node;
        this.timeoutSeconds = Math.max(1, timeoutSeconds);
    }

    public String chain(String table) {
        return table + ":" + node;
    }

    /**
     * Appends row {@code id} of {@code table} to this node's chain of that table. {@code c} must not be in
     * auto-commit mode (the lock and the link last until the caller's commit).
     */
    public void link(Connection c, String table, long id) throws SQLException {
        if (!Canonical.ROW_TABLES.contains(table)) {
            throw new IllegalArgumentException("not a row-chained table: " + table);
        }
        if (c.getAutoCommit()) {
            throw new IllegalStateException("a chain link must be written in the transaction of its row");
        }
        String chain = chain(table);
        try (PreparedStatement st = c.prepareStatement("SELECT pg_advisory_xact_lock(?, hashtext(?))")) {
            st.setQueryTimeout(timeoutSeconds);
            st.setInt(1, LOCK_SPACE);
            st.setString(2, node);
            st.execute();
        }
        byte[] rowHash;
        try (PreparedStatement st = c.prepareStatement("SELECT " + Canonical.select(table) + " FROM " + table + " WHERE id = ?")) {
            st.setQueryTimeout(timeoutSeconds);
            st.setLong(1, id);
            try (ResultSet rs = st.executeQuery()) {
                if (!rs.next()) {
                    throw new IllegalStateException("no " + table + " row " + id + " to link");
                }
                rowHash = Canonical.sha256(Canonical.row(table, rs));
            }
        }
        long seq = 1;
        byte[] prev = Canonical.GENESIS;
        try (PreparedStatement st = c.prepareStatement("SELECT seq, hash FROM chain_links WHERE chain = ? ORDER BY seq DESC LIMIT 1")) {
            st.setQueryTimeout(timeoutSeconds);
            st.setString(1, chain);
            try (ResultSet rs = st.executeQuery()) {
                if (rs.next()) {
                    seq = rs.getLong(1) + 1;
                    prev = rs.getBytes(2);
                }
            }
        }
        try (PreparedStatement st = c.prepareStatement("INSERT INTO chain_links (chain, seq, table_name, row_id, row_hash, prev_hash, hash) "
                + "VALUES (?, ?, ?, ?, ?, ?, ?)")) {
            st.setQueryTimeout(timeoutSeconds);
            st.setString(1, chain);
            st.setLong(2, seq);
            st.setString(3, table);
            st.setLong(4, id);
            st.setBytes(5, rowHash);
            st.setBytes(6, prev);
            st.setBytes(7, Canonical.linkHash(chain, seq, table, id, rowHash, prev));
            st.executeUpdate();
        }
    }
}
