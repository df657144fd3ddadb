package dev.pagewarden.db.evidence;

import dev.pagewarden.core.receipt.ReceiptKeys;

import javax.sql.DataSource;
import java.security.KeyPair;
import java.security.KeyPairGenerator;
import java.security.Signature;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.util.ArrayList;
import java.util.List;

/**
 * What someone with write access to the database (and nothing else) can do to the tamper evidence: change an
 * admin-audit row, recompute its chain link and every later one of that chain so the chain is consistent again,
 * register an Ed25519 key of their own in {@code receipt_keys}, and re-sign the later checkpoints of that chain with
 * it - or delete those checkpoints instead. Every step uses the documented encodings only.
 */
public final class ChainForgery {
    /** The key the forger registered, and the checkpoints it re-signed ({@code chain#seq}). */
    public record Forged(String injectedKeyId, String chain, long fromSeq, List<String> resigned) {
    }

    private ChainForgery() {
    }

    /**
     * Sets {@code actor} on admin_audit row {@code row}, re-hashes its chain from that row's link on, injects a key and
     * re-signs every checkpoint of that chain from that link on (or deletes them when {@code deleteCheckpoints}).
     */
    public static Forged rewriteAuditRow(DataSource ds, long row, String actor, boolean deleteCheckpoints) throws Exception {
        try (Connection c = ds.getConnection()) {
            c.setAutoCommit(false);
            update(c, "UPDATE admin_audit SET actor = ? WHERE id = ?", actor, row);
            String chain;
            long from;
            try (PreparedStatement st = c.prepareStatement("SELECT chain, seq FROM chain_links WHERE table_name = 'admin_audit' "
                    + "AND row_id = ? ORDER BY seq DESC LIMIT 1")) {
                st.setLong(1, row);
                try (ResultSet rs = st.executeQuery()) {
                    if (!rs.next()) {
                        throw new IllegalStateException("admin_audit row " + row + " is in no chain");
                    }
                    chain = rs.getString(1);
                    from = rs.getLong(2);
                }
            }
            byte[] prev = from == 1 ? Canonical.GENESIS : hashAt(c, chain, from - 1);
            List<long[]> links = new ArrayList<>(); // seq, row id
            try (PreparedStatement st = c.prepareStatement("SELECT seq, row_id FROM chain_links WHERE chain = ? AND seq >= ? ORDER BY seq")) {
                st.setString(1, chain);
                st.setLong(2, from);
                try (ResultSet rs = st.executeQuery()) {
                    while (rs.next()) {
                        links.add(new long[] {rs.getLong(1), rs.getLong(2)});
                    }
                }
            }
            for (long[] l : links) {
                byte[] rowHash;
                try (PreparedStatement st = c.prepareStatement("SELECT " + Canonical.select("admin_audit") + " FROM admin_audit WHERE id = ?")) {
                    st.setLong(1, l[1]);
                    try (ResultSet rs = st.executeQuery()) {
                        rs.next();
                        rowHash = Canonical.sha256(Canonical.row("admin_audit", rs));
                    }
                }
                byte[] hash = Canonical.linkHash(chain, l[0], "admin_audit", l[1], rowHash, prev);
                try (PreparedStatement st = c.prepareStatement("UPDATE chain_links SET row_hash = ?, prev_hash = ?, hash = ? WHERE chain = ? AND seq = ?")) {
                    st.setBytes(1, rowHash);
                    st.setBytes(2, prev);
                    st.setBytes(3, hash);
                    st.setString(4, chain);
                    st.setLong(5, l[0]);
                    st.executeUpdate();
                }
                prev = hash;
            }
            KeyPair injected = KeyPairGenerator.getInstance("Ed25519").generateKeyPair();
            String keyId = "pw-99-" + ReceiptKeys.fingerprint(injected.getPublic());
            try (PreparedStatement st = c.prepareStatement("INSERT INTO receipt_keys (key_id, algorithm, public_key, node) VALUES (?, 'Ed25519', ?, 'node-a')")) {
                st.setString(1, keyId);
                st.setBytes(2, injected.getPublic().getEncoded());
                st.executeUpdate();
            }
            List<String> resigned = new ArrayList<>();
            if (deleteCheckpoints) {
                update(c, "DELETE FROM chain_checkpoints WHERE chain = ? AND seq >= ?", chain, from);
            } else {
                List<Checkpoints.Checkpoint> later = new ArrayList<>();
                for (Checkpoints.Checkpoint k : Checkpoints.all(c, 30)) {
                    if (k.chain().equals(chain) && k.seq() >= from) {
                        later.add(k);
                    }
                }
                for (Checkpoints.Checkpoint k : later) {
                    byte[] head = hashAt(c, chain, k.seq());
                    Signature s = Signature.getInstance("Ed25519");
                    s.initSign(injected.getPrivate());
                    s.update(Checkpoints.message(chain, k.seq(), head, k.at()));
                    try (PreparedStatement st = c.prepareStatement("UPDATE chain_checkpoints SET head = ?, key_id = ?, signature = ? WHERE chain = ? AND seq = ?")) {
                        st.setBytes(1, head);
                        st.setString(2, keyId);
                        st.setBytes(3, s.sign());
                        st.setString(4, chain);
                        st.setLong(5, k.seq());
                        st.executeUpdate();
                    }
                    resigned.add(chain + "#" + k.seq());
                }
            }
            c.commit();
            return new Forged(keyId, chain, from, resigned);
        }
    }

    private static byte[] hashAt(Connection c, String chain, long seq) throws SQLException {
        try (PreparedStatement st = c.prepareStatement("SELECT hash FROM chain_links WHERE chain = ? AND seq = ?")) {
            st.setString(1, chain);
            st.setLong(2, seq);
            try (ResultSet rs = st.executeQuery()) {
                rs.next();
                return rs.getBytes(1);
            }
        }
    }

    private static void update(Connection c, String sql, Object a, Object b) throws SQLException {
        try (PreparedStatement st = c.prepareStatement(sql)) {
            st.setObject(1, a);
            st.setObject(2, b);
            st.executeUpdate();
        }
    }
}
