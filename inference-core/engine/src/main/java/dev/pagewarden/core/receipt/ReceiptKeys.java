package dev.pagewarden.core.receipt;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.security.GeneralSecurityException;
import java.security.KeyFactory;
import java.security.KeyPair;
import java.security.KeyPairGenerator;
import java.security.PrivateKey;
import java.security.PublicKey;
import java.security.Signature;
import java.security.spec.X509EncodedKeySpec;
import java.util.Base64;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * An Ed25519 key set: signs with the current key, keeps the public key of every earlier one so that
 * old receipts still verify after {@link #rotate}. Key ids are {@code prefix-N-F}: {@code N} counts the
 * keys of this set, {@code F} is the key's {@link #fingerprint}, so key sets made independently (one per
 * platform replica) never share an id. Ids of the older form {@code prefix-N} are still read and verified.
 * Public keys are published as base64 X.509 SubjectPublicKeyInfo ({@link #publishedKeys}). Every key after the
 * first is {@link KeyEndorsement endorsed} by the key it replaces, so a verifier that pins the first one trusts the
 * chain ({@link TrustedKeys}).
 */
public final class ReceiptKeys implements ReceiptSigner {
    private final String prefix;
    private final AtomicInteger serial = new AtomicInteger();
    private final Map<String, PublicKey> retained = new LinkedHashMap<>();
    private final Map<String, KeyEndorsement> endorsements = new LinkedHashMap<>();
    private final java.time.Clock clock = java.time.Clock.systemUTC();
    private volatile Current current;

    private record Current(String keyId, PrivateKey privateKey) {
    }

    private ReceiptKeys(String prefix) {
        if (prefix.contains(".")) {
            throw new IllegalArgumentException("key id prefix must not contain '.'");
        }
        this.prefix = prefix;
    }

    /** A key set with one freshly generated key. */
    public static ReceiptKeys generate(String prefix) {
        ReceiptKeys keys = new ReceiptKeys(prefix);
        keys.rotate();
        return keys;
    }

    /**
     * A key set restored from stored material (see {@code ReceiptKeyStore}): the retained public keys in
     * the order they were created, and the current key's id and private key. New ids continue after the
     * highest {@code prefix-N} among the retained ones. Refuses a private key that does not match its
     * public key, so a mixed-up key directory fails at start, not at the first tenant's verification.
     */
    public static ReceiptKeys restore(String prefix, Map<String, PublicKey> retained, String currentKeyId,
                                      PrivateKey currentKey) {
        return restore(prefix, retained, Map.of(), currentKeyId, currentKey);
    }

    /** As {@link #restore(String, Map, String, PrivateKey)}, with the endorsements of the retained keys that have one. */
    public static ReceiptKeys restore(String prefix, Map<String, PublicKey> retained, Map<String, KeyEndorsement> endorsements,
                                      String currentKeyId, PrivateKey currentKey) {
        ReceiptKeys keys = new ReceiptKeys(prefix);
        PublicKey pub = retained.get(currentKeyId);
        if (pub == null) {
            throw new IllegalArgumentException("current key " + currentKeyId + " has no public key among " + retained.keySet());
        }
        if (!matches(currentKey, pub)) {
            throw new IllegalArgumentException("the private key of " + currentKeyId + " does not match its public key");
        }
        int max = 0;
        for (String id : retained.keySet()) {
            max = Math.max(max, serialOf(prefix, id));
        }
        keys.serial.set(max);
        keys.retained.putAll(retained);
        endorsements.forEach((id, e) -> {
            if (retained.containsKey(id)) {
                keys.endorsements.put(id, e);
            }
        });
        keys.current = new Current(currentKeyId, currentKey);
        return keys;
    }

    /** No key yet: only for a store about to {@link #rotate(Persister)} its first key in. */
    static ReceiptKeys unkeyed(String prefix) {
        return new ReceiptKeys(prefix);
    }

    /** Stores a new key before it becomes current (a key file store); a failure leaves the key set unchanged. */
    @FunctionalInterface
    public interface Persister {
        void persist(String keyId, KeyPair pair) throws IOException;
    }

    /** A {@link Persister} that also gets the new key's endorsement by the current key (null for a set's first key). */
    @FunctionalInterface
    public interface EndorsedPersister {
        void persist(String keyId, KeyPair pair, KeyEndorsement endorsement) throws IOException;
    }

    /** Generates a new current key; the previous public keys stay for verification. Returns the new key id. */
    public String rotate() {
        try {
            return rotate((id, pair) -> { });
        } catch (IOException e) {
            throw new AssertionError(e); // the no-op persister throws nothing
        }
    }

    /**
     * Like {@link #rotate()}, but {@code persister} stores the new pair first: the key becomes current only
     * once it is stored, so a restart can never come back to a key set that lacks a key receipts were signed with.
     */
    public String rotate(Persister persister) throws IOException {
        return rotate((id, pair, endorsement) -> persister.persist(id, pair));
    }

    /**
     * Like {@link #rotate(Persister)}; the new key is endorsed by the current one (signed before the switch, so the
     * endorsement's time is at or before the old key's last signature but for receipts in flight).
     */
    public synchronized String rotate(EndorsedPersister persister) throws IOException {
        KeyPair pair = newPair();
        String id = prefix + "-" + (serial.get() + 1) + "-" + fingerprint(pair.getPublic());
        Current before = current;
        KeyEndorsement endorsement = before == null ? null
                : KeyEndorsement.sign(id, pair.getPublic(), before.keyId(), before.privateKey(), clock.instant());
        persister.persist(id, pair, endorsement);
        serial.incrementAndGet();
        retained.put(id, pair.getPublic());
        if (endorsement != null) {
            endorsements.put(id, endorsement);
        }
        current = new Current(id, pair.getPrivate());
        return id;
    }

    /** The endorsement of {@code keyId} by its predecessor, or null (a first key, or one from before endorsements). */
    public synchronized KeyEndorsement endorsement(String keyId) {
        return endorsements.get(keyId);
    }

    /** Every retained key with its endorsement, as {@link TrustedKeys#resolve} takes them. */
    public synchronized Map<String, TrustedKeys.Candidate> candidates() {
        Map<String, TrustedKeys.Candidate> out = new LinkedHashMap<>();
        retained.forEach((id, k) -> out.put(id, new TrustedKeys.Candidate(k, endorsements.get(id))));
        return out;
    }

    /** The prefix new key ids get ({@code prefix-N-F}). */
    public String prefix() {
        return prefix;
    }

    /**
     * N of {@code prefix-N-F} (or of the older {@code prefix-N}), or 0 for an id of another shape (kept for
     * verification, never counted on).
     */
    static int serialOf(String prefix, String keyId) {
        if (!keyId.startsWith(prefix + "-")) {
            return 0;
        }
        String rest = keyId.substring(prefix.length() + 1);
        int dash = rest.indexOf('-');
        if (dash >= 0) {
            if (!FINGERPRINT.matcher(rest.substring(dash + 1)).matches()) {
                return 0;
            }
            rest = rest.substring(0, dash);
        }
        try {
            return Math.max(0, Integer.parseInt(rest));
        } catch (NumberFormatException e) {
            return 0;
        }
    }

    private static final java.util.regex.Pattern FINGERPRINT = java.util.regex.Pattern.compile("[0-9a-f]{16}");

    /**
     * The first 8 bytes of SHA-256 over the key's X.509 encoding, in hex (16 digits): the last part of every
     * key id this class makes, so an id names one key wherever the key set was made.
     */
    public static String fingerprint(PublicKey key) {
        try {
            byte[] h = java.security.MessageDigest.getInstance("SHA-256").digest(key.getEncoded());
            return java.util.HexFormat.of().formatHex(h, 0, 8);
        } catch (GeneralSecurityException e) {
            throw new IllegalStateException("SHA-256 not available", e);
        }
    }

    /** True when {@code keyId} ends in the fingerprint of {@code key} ({@code ...-F}); false for older ids. */
    public static boolean namesKey(String keyId, PublicKey key) {
        return keyId.endsWith("-" + fingerprint(key));
    }

    private static boolean matches(PrivateKey privateKey, PublicKey publicKey) {
        try {
            byte[] probe = "pagewarden key check".getBytes(StandardCharsets.US_ASCII);
            Signature s = Signature.getInstance("Ed25519");
            s.initSign(privateKey);
            s.update(probe);
            byte[] sig = s.sign();
            Signature v = Signature.getInstance("Ed25519");
            v.initVerify(publicKey);
            v.update(probe);
            return v.verify(sig);
        } catch (GeneralSecurityException e) {
            throw new IllegalArgumentException("not an Ed25519 key pair", e);
        }
    }

    /** Drops an old public key (receipts signed with it no longer verify); the current key cannot be retired. */
    public synchronized void retire(String keyId) {
        if (keyId.equals(current.keyId())) {
            throw new IllegalArgumentException("cannot retire the current key " + keyId);
        }
        retained.remove(keyId);
        endorsements.remove(keyId);
    }

    @Override
    public String currentKeyId() {
        return current.keyId();
    }

    @Override
    public Signed sign(byte[] digest) {
        Current c = current;
        try {
            Signature s = Signature.getInstance("Ed25519");
            s.initSign(c.privateKey());
            s.update(digest);
            return new Signed(c.keyId(), s.sign());
        } catch (GeneralSecurityException e) {
            throw new IllegalStateException("Ed25519 signing failed", e);
        }
    }

    /** Every retained public key by id (current included). */
    public synchronized Map<String, PublicKey> publicKeys() {
        return Collections.unmodifiableMap(new LinkedHashMap<>(retained));
    }

    /** The public keys as a tenant downloads them: id -> base64 X.509 encoding. */
    public synchronized Map<String, String> publishedKeys() {
        Map<String, String> out = new LinkedHashMap<>();
        retained.forEach((id, k) -> out.put(id, Base64.getEncoder().encodeToString(k.getEncoded())));
        return out;
    }

    /** Parses published keys back into public keys (what a tenant's offline verifier does). */
    public static Map<String, PublicKey> parsePublished(Map<String, String> published) {
        Map<String, PublicKey> out = new LinkedHashMap<>();
        try {
            KeyFactory kf = KeyFactory.getInstance("Ed25519");
            for (var e : published.entrySet()) {
                out.put(e.getKey(), kf.generatePublic(new X509EncodedKeySpec(Base64.getDecoder().decode(e.getValue()))));
            }
        } catch (GeneralSecurityException e) {
            throw new IllegalArgumentException("not an Ed25519 public key", e);
        }
        return out;
    }

    private static KeyPair newPair() {
        try {
            return KeyPairGenerator.getInstance("Ed25519").generateKeyPair();
        } catch (GeneralSecurityException e) {
            throw new IllegalStateException("Ed25519 not available", e);
        }
    }
}
