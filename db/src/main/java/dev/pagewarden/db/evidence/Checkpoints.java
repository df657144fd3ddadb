package dev.pagewarden.db.evidence;

import dev.pagewarden.core.receipt.ReceiptSigner;

import javax.sql.DataSource;
import java.security.GeneralSecurityException;
import java.security.PublicKey;
import java.security.Signature;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Timestamp;
import java.time.Clock;
import java.time.Instant;
import java.time.temporal.ChronoUnit;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.List;

/**
 * Signed chain heads. {@link #checkpoint()} signs the committed head of each of this node's chains that
 * moved since its last checkpoint with the receipt key and stores it; anyone can pin the published ones.
 * The signed bytes are {@link #message}: {@code fields("pagewarden-checkpoint-v1", chain, seq, head hex,
 * at in epoch microseconds)} in the {@link Canonical} field encoding.
 */
public final class Checkpoints {
    public record Checkpoint(String chain, long seq, byte[] head, Instant at, String keyId, byte[] signature) {
        public String headHex() {
            return HexFormat.of().formatHex(head);
        }
    }

    private final DataSource dataSource;
    private final ReceiptSigner signer;
    private final String node;
    private final int timeoutSeconds;
    private final Clock clock;

    public Checkpoints(DataSource dataSource, ReceiptSigner signer, String node, int timeoutSeconds, Clock clock) {
        this.dataSource = dataSource;
        this.signer = signer;
        this.node = node;
        this.timeoutSeconds = Math.max(1, timeoutSeconds);
        this.clock = clock;
    }

    /** The chains this node writes. */
    List<String> chains() {
        List<String> out = new ArrayList<>();
        out.add("lineage:" + node);
        for (String t : Canonical.ROW_TABLES) {
            out.add(t + ":" + node);
        }
        return out;
    }

    /** Signs and stores the head of every chain of this node that has moved since its last checkpoint; returns those. */
    public List<Checkpoint> checkpoint() throws SQLException {
        List<Checkpoint> made = new ArrayList<>();
        Instant at = clock.instant().truncatedTo(ChronoUnit.MICROS);
        try (Connection c = dataSource.getConnection()) {
            for (String chain : chains()) {
                String table = chain.startsWith("lineage:") ? "lineage_batches" : "chain_links";
                long seq;
                byte[] head;
                try (PreparedStatement st = c.prepareStatement("SELECT seq, hash FROM " + table + " WHERE chain = ? ORDER BY seq DESC LIMIT 1")) {
                    st.setQueryTimeout(timeoutSeconds);
                    st.setString(1, chain);
                    try (ResultSet rs = st.executeQuery()) {
                        if (!rs.next()) {
                            continue;
                        }
                        seq = rs.getLong(1);
                        head = rs.getBytes(2);
                    }
                }
                ReceiptSigner.Signed signed = signer.sign(message(chain, seq, head, at));
                try (PreparedStatement st = c.prepareStatement("INSERT INTO chain_checkpoints (chain, seq, head, at, key_id, signature) "
                        + "VALUES (?, ?, ?, ?, ?, ?) ON CONFLICT (chain, seq) DO NOTHING")) {
                    st.setQueryTimeout(timeoutSeconds);
                    st.setString(1, chain);
                    st.setLong(2, seq);
                    st.setBytes(3, head);
                    st.setTimestamp(4, Timestamp.from(at));
                    st.setString(5, signed.keyId());
                    st.setBytes(6, signed.signature());
                    if (st.executeUpdate() == 1) {
                        made.add(new Checkpoint(chain, seq, head, at, signed.keyId(), signed.signature()));
                    }
                }
            }
        }
        return made;
    }

    /**
     * The latest checkpoint of every chain (all nodes), plus every checkpoint at or after {@code since} when
     * it is not null; ordered by chain and sequence number.
     */
    public static List<Checkpoint> published(Connection c, Instant since, int timeoutSeconds) throws SQLException {
        String sql = "SELECT chain, seq, head, at, key_id, signature FROM chain_checkpoints k WHERE seq = "
                + "(SELECT max(seq) FROM chain_checkpoints WHERE chain = k.chain)"
                + (since == null ? "" : " OR at >= ?") + " ORDER BY chain, seq";
        try (PreparedStatement st = c.prepareStatement(sql)) {
            st.setQueryTimeout(Math.max(1, timeoutSeconds));
            if (since != null) {
                st.setTimestamp(1, Timestamp.from(since));
            }
            return read(st);
        }
    }

    /** Every checkpoint, by chain and sequence number. */
    static List<Checkpoint> all(Connection c, int timeoutSeconds) throws SQLException {
        try (PreparedStatement st = c.prepareStatement("SELECT chain, seq, head, at, key_id, signature FROM chain_checkpoints ORDER BY chain, seq")) {
            st.setQueryTimeout(Math.max(1, timeoutSeconds));
            return read(st);
        }
    }

    private static List<Checkpoint> read(PreparedStatement st) throws SQLException {
        List<Checkpoint> out = new ArrayList<>();
        try (ResultSet rs = st.executeQuery()) {
            while (rs.next()) {
                out.add(new Checkpoint(rs.getString(1), rs.getLong(2), rs.getBytes(3), rs.getTimestamp(4).toInstant(),
                        rs.getString(5), rs.getBytes(6)));
            }
        }
        return out;
    }

    /**
     * One checkpoint as a line of an archive kept outside the database:
     * {@code checkpoint CHAIN SEQ HEAD_HEX AT KEY_ID SIGNATURE_BASE64} ({@code AT} ISO-8601, microseconds).
     */
    public static String archiveLine(Checkpoint k) {
        return "checkpoint " + k.chain() + " " + k.seq() + " " + k.headHex() + " " + k.at() + " " + k.keyId() + " "
                + java.util.Base64.getEncoder().encodeToString(k.signature());
    }

    /**
     * Reads an archive of {@link #archiveLine} lines (blank lines and {@code #} comments skipped).
     *
     * @throws IllegalArgumentException a line is not a checkpoint (named with its number)
     */
    public static List<Checkpoint> readArchive(java.nio.file.Path file) throws java.io.IOException {
        List<Checkpoint> out = new ArrayList<>();
        List<String> lines = java.nio.file.Files.readAllLines(file, java.nio.charset.StandardCharsets.UTF_8);
        for (int i = 0; i < lines.size(); i++) {
            String line = lines.get(i).strip();
            if (line.isEmpty() || line.startsWith("#")) {
                continue;
            }
            String[] p = line.split("\\s+");
            try {
                if (p.length != 7 || !p[0].equals("checkpoint")) {
                    throw new IllegalArgumentException("not 7 fields");
                }
                out.add(new Checkpoint(p[1], Long.parseLong(p[2]), HexFormat.of().parseHex(p[3]), Instant.parse(p[4]), p[5],
                        java.util.Base64.getDecoder().decode(p[6])));
            } catch (RuntimeException e) {
                throw new IllegalArgumentException(file + " line " + (i + 1)
                        + ": expected 'checkpoint CHAIN SEQ HEAD_HEX AT KEY_ID SIGNATURE_BASE64'", e);
            }
        }
        return out;
    }

    /** The bytes a checkpoint's signature covers. */
    public static byte[] message(String chain, long seq, byte[] head, Instant at) {
        return new Canonical().add("pagewarden-checkpoint-v1").add(chain).add(seq).add(head).add(at).bytes();
    }

    /** True when {@code signature} is {@code key}'s Ed25519 signature of {@code message}. */
    public static boolean verifies(PublicKey key, byte[] message, byte[] signature) {
        try {
            Signature v = Signature.getInstance("Ed25519");
            v.initVerify(key);
            v.update(message);
            return v.verify(signature);
        } catch (GeneralSecurityException | IllegalArgumentException e) {
            return false;
        }
    }
}
