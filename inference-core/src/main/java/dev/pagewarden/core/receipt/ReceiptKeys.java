package dev.pagewarden.core.receipt;

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
 * old receipts still verify after {@link #rotate}. Key ids are {@code prefix-N}. Public keys are
 * published as base64 X.509 SubjectPublicKeyInfo ({@link #publishedKeys}).
 */
public final class ReceiptKeys implements ReceiptSigner {
    private final String prefix;
    private final AtomicInteger serial = new AtomicInteger();
    private final Map<String, PublicKey> retained = new LinkedHashMap<>();
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

    /** Generates a new current key; the previous public keys stay for verification. Returns the new key id. */
    public synchronized String rotate() {
        KeyPair pair = newPair();
        String id = prefix + "-" + serial.incrementAndGet();
        retained.put(id, pair.getPublic());
        current = new Current(id, pair.getPrivate());
        return id;
    }

    /** Drops an old public key (receipts signed with it no longer verify); the current key cannot be retired. */
    public synchronized void retire(String keyId) {
        if (keyId.equals(current.keyId())) {
            throw new IllegalArgumentException("cannot retire the current key " + keyId);
        }
        retained.remove(keyId);
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
