package dev.pagewarden.core.receipt;

import java.io.ByteArrayOutputStream;
import java.io.DataOutputStream;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.security.GeneralSecurityException;
import java.security.PrivateKey;
import java.security.PublicKey;
import java.security.Signature;
import java.time.Instant;
import java.time.temporal.ChronoUnit;
import java.util.Base64;

/**
 * A receipt key vouched for by the key it replaces: the predecessor's Ed25519 signature over {@link #message}.
 * A verifier that trusts the predecessor (a pinned root, or a key endorsed by one) trusts the new key, and
 * takes {@code at} as the predecessor's end: it signed this endorsement itself, so nobody without its private
 * key can move that time or make a key it did not vouch for look like its successor.
 *
 * @param keyId      the new key's id
 * @param previousId the key that signed this (it signs nothing issued after {@code at})
 * @param at         when the new key replaced it (milliseconds)
 * @param signature  Ed25519 signature by {@code previousId} over {@link #message}
 */
public record KeyEndorsement(String keyId, String previousId, Instant at, byte[] signature) {
    static final String DOMAIN = "pagewarden.key-endorsement.v1";

    public KeyEndorsement {
        if (keyId == null || previousId == null || at == null || signature == null) {
            throw new IllegalArgumentException("an endorsement names its key, the previous key, a time and a signature");
        }
        at = at.truncatedTo(ChronoUnit.MILLIS);
        signature = signature.clone();
    }

    @Override
    public byte[] signature() {
        return signature.clone();
    }

    /** The signed bytes: domain, new key id, its X.509 encoding, previous key id, time (u32-length strings, u64 ms). */
    public static byte[] message(String keyId, PublicKey key, String previousId, Instant at) {
        ByteArrayOutputStream bytes = new ByteArrayOutputStream(160);
        try (DataOutputStream out = new DataOutputStream(bytes)) {
            for (byte[] field : new byte[][] {DOMAIN.getBytes(StandardCharsets.UTF_8), keyId.getBytes(StandardCharsets.UTF_8),
                    key.getEncoded(), previousId.getBytes(StandardCharsets.UTF_8)}) {
                out.writeInt(field.length);
                out.write(field);
            }
            out.writeLong(at.truncatedTo(ChronoUnit.MILLIS).toEpochMilli());
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        return bytes.toByteArray();
    }

    /** {@code previous} vouches for {@code key} as {@code keyId} from {@code at}. */
    static KeyEndorsement sign(String keyId, PublicKey key, String previousId, PrivateKey previous, Instant at) {
        try {
            Signature s = Signature.getInstance("Ed25519");
            s.initSign(previous);
            s.update(message(keyId, key, previousId, at));
            return new KeyEndorsement(keyId, previousId, at, s.sign());
        } catch (GeneralSecurityException e) {
            throw new IllegalStateException("Ed25519 signing failed", e);
        }
    }

    /** True when {@code previousKey} signed this endorsement of {@code key}. */
    public boolean verifies(PublicKey key, PublicKey previousKey) {
        try {
            Signature v = Signature.getInstance("Ed25519");
            v.initVerify(previousKey);
            v.update(message(keyId, key, previousId, at));
            return v.verify(signature);
        } catch (GeneralSecurityException | IllegalArgumentException e) {
            return false;
        }
    }

    /** One line: {@code previousId atMillis signature-base64} (how a key directory keeps it). */
    String toLine() {
        return previousId + " " + at.toEpochMilli() + " " + Base64.getEncoder().encodeToString(signature);
    }

    static KeyEndorsement fromLine(String keyId, String line) {
        String[] p = line.strip().split(" ");
        if (p.length != 3) {
            throw new IllegalArgumentException("expected 'previous-key-id millis signature'");
        }
        return new KeyEndorsement(keyId, p[0], Instant.ofEpochMilli(Long.parseLong(p[1])), Base64.getDecoder().decode(p[2]));
    }
}
