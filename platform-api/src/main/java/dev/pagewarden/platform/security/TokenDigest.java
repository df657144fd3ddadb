package dev.pagewarden.platform.security;

import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;

/**
 * A configured bearer token, kept as its SHA-256 digest. A presented token is digested too and the
 * digests compared with {@link MessageDigest#isEqual}, so the time taken depends on neither the
 * token's length nor its content.
 */
final class TokenDigest {
    private final byte[] digest;

    TokenDigest(String token) {
        this.digest = sha256(token);
    }

    boolean matches(String presented) {
        return presented != null && MessageDigest.isEqual(digest, sha256(presented));
    }

    private static byte[] sha256(String value) {
        try {
            return MessageDigest.getInstance("SHA-256").digest(value.getBytes(StandardCharsets.UTF_8));
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException("no SHA-256 in this JDK", e);
        }
    }
}
