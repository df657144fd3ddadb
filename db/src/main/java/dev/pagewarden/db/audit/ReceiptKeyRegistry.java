package dev.pagewarden.db.audit;

import dev.pagewarden.core.receipt.KeyEndorsement;
import dev.pagewarden.core.receipt.ReceiptKeys;
import dev.pagewarden.core.receipt.TrustedKeys;

import javax.sql.DataSource;
import java.security.GeneralSecurityException;
import java.security.KeyFactory;
import java.security.PublicKey;
import java.security.spec.X509EncodedKeySpec;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Timestamp;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Objects;
import java.util.Optional;
import java.util.concurrent.ConcurrentHashMap;

/**
 * The receipt public keys of every replica, in PostgreSQL ({@code receipt_keys}): each replica registers its
 * keys at start and every new key before it signs with it, and any replica verifies any receipt by looking its
 * key id up here. A key is <em>superseded</em> once its replica signs with a newer one, and may then be
 * <em>retired</em>: no replica signs with it again (one that starts with it as its signing key rotates first),
 * and the receipts it signed - all before its retirement - still verify. Every key after a replica's first
 * carries its {@link KeyEndorsement} by the key it replaced; this table is never trusted by itself: verifiers walk the
 * endorsements from roots pinned outside the database ({@link KeyTrust}). Every call runs with a statement
 * timeout; found keys are cached for a short time.
 */
public final class ReceiptKeyRegistry {
    /** The only algorithm receipts are signed with. */
    public static final String ED25519 = "Ed25519";
    private static final int CACHE_LIMIT = 1024;

    /**
     * One registered key; {@code supersededAt} null while its replica signs with it, {@code retiredAt} null until
     * an operator retires it, {@code endorsement} null for a chain's first key (and keys from before endorsements).
     */
    public record RegisteredKey(String keyId, String algorithm, PublicKey publicKey, String node, Instant createdAt,
                                Instant supersededAt, Instant retiredAt, KeyEndorsement endorsement) {
    }

    /** A key still signing (not superseded) cannot be retired. */
    public static final class StillSigning extends Exception {
        public StillSigning(String message) {
            super(message);
        }
    }

    private record Cached(PublicKey key, long expiresAtNanos) {
    }

    private final DataSource dataSource;
    private final int timeoutSeconds;
    private final long cacheNanos;
    private final ConcurrentHashMap<String, Cached> cache = new ConcurrentHashMap<>();

    /**
     * @param timeout  the longest a statement may run (rounded up to whole seconds); the pool's own connection
     *                 timeout bounds the wait for a connection
     * @param cacheTtl how long a found key is used without asking PostgreSQL again
     */
    public ReceiptKeyRegistry(DataSource dataSource, Duration timeout, Duration cacheTtl) {
        this.dataSource = Objects.requireNonNull(dataSource);
        if (timeout.isNegative() || timeout.isZero() || cacheTtl.isNegative()) {
            throw new IllegalArgumentException("need a positive timeout and a cache time >= 0");
        }
        this.timeoutSeconds = (int) Math.max(1, (timeout.toMillis() + 999) / 1000);
        this.cacheNanos = cacheTtl.toNanos();
    }

    /**
     * Registers {@code key} under {@code keyId} unless that id is registered already. Throws when the id is
     * registered with another key: receipts signed with this key would then never verify elsewhere.
     *
     * @return true when this call added the row
     * @throws IllegalStateException the id names another key in PostgreSQL
     * @throws SQLException          PostgreSQL unreachable or too slow (timeout)
     */
    public boolean register(String keyId, PublicKey key, String node) throws SQLException {
        return register(keyId, key, node, null);
    }

    /**
     * Like {@link #register(String, PublicKey, String)}, with the key's endorsement by its predecessor (null: none),
     * also added to a row registered before endorsements.
     */
    public boolean register(String keyId, PublicKey key, String node, KeyEndorsement endorsement) throws SQLException {
        byte[] spki = key.getEncoded();
        try (Connection c = dataSource.getConnection()) {
            int added;
            try (PreparedStatement st = c.prepareStatement("INSERT INTO receipt_keys (key_id, algorithm, public_key, node, "
                    + "endorsed_by, endorsed_at, endorsement) VALUES (?, ?, ?, ?, ?, ?, ?) ON CONFLICT (key_id) DO NOTHING")) {
                st.setQueryTimeout(timeoutSeconds);
                st.setString(1, keyId);
                st.setString(2, ED25519);
                st.setBytes(3, spki);
                st.setString(4, node);
                st.setString(5, endorsement == null ? null : endorsement.previousId());
                st.setTimestamp(6, endorsement == null ? null : Timestamp.from(endorsement.at()));
                st.setBytes(7, endorsement == null ? null : endorsement.signature());
                added = st.executeUpdate();
            }
            if (added == 0 && endorsement != null) {
                try (PreparedStatement st = c.prepareStatement("UPDATE receipt_keys SET endorsed_by = ?, endorsed_at = ?, "
                        + "endorsement = ? WHERE key_id = ? AND public_key = ? AND endorsement IS NULL")) {
                    st.setQueryTimeout(timeoutSeconds);
                    st.setString(1, endorsement.previousId());
                    st.setTimestamp(2, Timestamp.from(endorsement.at()));
                    st.setBytes(3, endorsement.signature());
                    st.setString(4, keyId);
                    st.setBytes(5, spki);
                    st.executeUpdate();
                }
            }
            if (added == 0) {
                try (PreparedStatement st = c.prepareStatement("SELECT public_key, node FROM receipt_keys WHERE key_id = ?")) {
                    st.setQueryTimeout(timeoutSeconds);
                    st.setString(1, keyId);
                    try (ResultSet rs = st.executeQuery()) {
                        if (rs.next() && !Arrays.equals(rs.getBytes(1), spki)) {
                            throw new IllegalStateException("receipt key id " + keyId + " is registered in PostgreSQL "
                                    + "(receipt_keys) with another public key, by node " + rs.getString(2));
                        }
                    }
                }
            }
            return added == 1;
        }
    }

    /**
     * Registers every public key of {@code keys} for {@code node}. The current (signing) key must register:
     * otherwise this throws, and a caller must not sign with it (fail closed). An older key whose id another
     * replica registered with another key - possible only for ids of the older form {@code prefix-N} - is
     * left out and returned, so the caller can say so.
     */
    public List<String> registerAll(ReceiptKeys keys, String node) throws SQLException {
        String current = keys.currentKeyId();
        List<String> clashes = new ArrayList<>();
        for (var e : keys.publicKeys().entrySet()) {
            try {
                register(e.getKey(), e.getValue(), node, keys.endorsement(e.getKey()));
            } catch (IllegalStateException clash) {
                if (e.getKey().equals(current)) {
                    throw clash;
                }
                clashes.add(e.getKey());
                continue;
            }
            if (!e.getKey().equals(current)) {
                supersede(e.getKey()); // a key set signs only with its current key
            }
        }
        return clashes;
    }

    /** Records that {@code keyId}'s replica signs with a newer key now (kept if already set). */
    public void supersede(String keyId) throws SQLException {
        try (Connection c = dataSource.getConnection();
             PreparedStatement st = c.prepareStatement("UPDATE receipt_keys SET superseded_at = now() "
                     + "WHERE key_id = ? AND superseded_at IS NULL")) {
            st.setQueryTimeout(timeoutSeconds);
            st.setString(1, keyId);
            st.executeUpdate();
        }
    }

    /**
     * Retires a superseded key: no replica signs with it again; receipts it signed still verify. Retiring a retired
     * key changes nothing.
     *
     * @return the key as retired; empty when no replica registered {@code keyId}
     * @throws StillSigning the key is some replica's signing key (not superseded): rotate there first
     */
    public Optional<RegisteredKey> retire(String keyId) throws SQLException, StillSigning {
        try (Connection c = dataSource.getConnection();
             PreparedStatement st = c.prepareStatement("UPDATE receipt_keys SET retired_at = coalesce(retired_at, now()) "
                     + "WHERE key_id = ? AND superseded_at IS NOT NULL")) {
            st.setQueryTimeout(timeoutSeconds);
            st.setString(1, keyId);
            st.executeUpdate();
        }
        Optional<RegisteredKey> key = lookup(keyId);
        if (key.isPresent() && key.get().retiredAt() == null) {
            throw new StillSigning("receipt key " + keyId + " is the signing key of node " + key.get().node()
                    + "; rotate that replica's key first (POST /admin/api/receipt-keys/rotate on it), then retire this one");
        }
        return key;
    }

    /** Everything registered about {@code keyId}, read now (not cached); empty when nobody registered it. */
    public Optional<RegisteredKey> lookup(String keyId) throws SQLException {
        List<RegisteredKey> found = query("WHERE key_id = ?", keyId);
        return found.isEmpty() ? Optional.empty() : Optional.of(found.getFirst());
    }

    /** The registered key {@code keyId} (retired ones too: they verify what they signed); empty when nobody registered it. */
    public Optional<PublicKey> find(String keyId) throws SQLException {
        long now = System.nanoTime();
        Cached hit = cache.get(keyId);
        if (hit != null && now - hit.expiresAtNanos() < 0) {
            return Optional.of(hit.key());
        }
        PublicKey key = null;
        try (Connection c = dataSource.getConnection();
             PreparedStatement st = c.prepareStatement("SELECT algorithm, public_key FROM receipt_keys WHERE key_id = ?")) {
            st.setQueryTimeout(timeoutSeconds);
            st.setString(1, keyId);
            try (ResultSet rs = st.executeQuery()) {
                if (rs.next()) {
                    key = decode(keyId, rs.getString(1), rs.getBytes(2));
                }
            }
        }
        if (key == null) {
            cache.remove(keyId); // unknown ids are not cached: a caller cannot fill the cache with them
            return Optional.empty();
        }
        if (cache.size() >= CACHE_LIMIT) {
            cache.clear();
        }
        cache.put(keyId, new Cached(key, now + cacheNanos));
        return Optional.of(key);
    }

    /** Every registered key, oldest first: what {@code /.well-known/pagewarden-receipt-keys} serves. */
    public List<RegisteredKey> all() throws SQLException {
        return query("", null);
    }

    /** Every registered key with its endorsement, as {@link TrustedKeys#resolve} takes them. */
    public java.util.Map<String, TrustedKeys.Candidate> candidates() throws SQLException {
        java.util.Map<String, TrustedKeys.Candidate> out = new java.util.LinkedHashMap<>();
        for (RegisteredKey k : all()) {
            out.put(k.keyId(), new TrustedKeys.Candidate(k.publicKey(), k.endorsement()));
        }
        return out;
    }

    private List<RegisteredKey> query(String where, String keyId) throws SQLException {
        List<RegisteredKey> out = new ArrayList<>();
        try (Connection c = dataSource.getConnection();
             PreparedStatement st = c.prepareStatement("SELECT key_id, algorithm, public_key, node, created_at, superseded_at, "
                     + "retired_at, endorsed_by, endorsed_at, endorsement FROM receipt_keys " + where + " ORDER BY created_at, key_id")) {
            st.setQueryTimeout(timeoutSeconds);
            if (keyId != null) {
                st.setString(1, keyId);
            }
            try (ResultSet rs = st.executeQuery()) {
                while (rs.next()) {
                    String id = rs.getString(1);
                    KeyEndorsement endorsement = null;
                    if (rs.getString(8) != null && rs.getTimestamp(9) != null && rs.getBytes(10) != null) {
                        endorsement = new KeyEndorsement(id, rs.getString(8), rs.getTimestamp(9).toInstant(), rs.getBytes(10));
                    }
                    out.add(new RegisteredKey(id, rs.getString(2), decode(id, rs.getString(2), rs.getBytes(3)), rs.getString(4),
                            rs.getTimestamp(5).toInstant(), instant(rs.getTimestamp(6)), instant(rs.getTimestamp(7)), endorsement));
                }
            }
        }
        return out;
    }

    private static Instant instant(Timestamp t) {
        return t == null ? null : t.toInstant();
    }

    private static PublicKey decode(String keyId, String algorithm, byte[] spki) {
        if (!ED25519.equals(algorithm)) {
            throw new IllegalStateException("receipt key " + keyId + " in receipt_keys has algorithm " + algorithm
                    + "; only " + ED25519 + " is known");
        }
        try {
            return KeyFactory.getInstance(ED25519).generatePublic(new X509EncodedKeySpec(spki));
        } catch (GeneralSecurityException e) {
            throw new IllegalStateException("receipt key " + keyId + " in receipt_keys is not an Ed25519 public key", e);
        }
    }
}
