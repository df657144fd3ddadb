package dev.pagewarden.platform.tenant;

import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.security.SecureRandom;
import java.util.Base64;

/**
 * Key format {@code pw_<prefix>_<secret>}: the prefix (10 chars, stored in clear) finds the key, the
 * secret (256 random bits) is checked against SHA-256(salt || secret). A fast hash is right here: the
 * secret has full entropy, so there is nothing for a slow hash to protect against guessing.
 */
final class ApiKeySecrets {
    private static final SecureRandom RANDOM = new SecureRandom();
    private static final String ALPHABET = "abcdefghijkmnopqrstuvwxyz23456789";

    private ApiKeySecrets() {
    }

    record Issued(String key, String prefix, byte[] salt, byte[] hash) {
    }

    record Parsed(String prefix, String secret) {
    }

    static Issued issue() {
        StringBuilder prefix = new StringBuilder("pw_");
        for (int i = 0; i < 10; i++) {
            prefix.append(ALPHABET.charAt(RANDOM.nextInt(ALPHABET.length())));
        }
        byte[] secretBytes = new byte[32];
        RANDOM.nextBytes(secretBytes);
        String secret = Base64.getUrlEncoder().withoutPadding().encodeToString(secretBytes);
        byte[] salt = new byte[16];
        RANDOM.nextBytes(salt);
        return new Issued(prefix + "_" + secret, prefix.toString(), salt, hash(salt, secret));
    }

    /** Splits a presented key; null when it does not even have the shape of one of ours. */
    static Parsed parse(String key) {
        if (key == null || !key.startsWith("pw_") || key.length() != 3 + 10 + 1 + 43 || key.charAt(13) != '_') {
            return null;
        }
        return new Parsed(key.substring(0, 13), key.substring(14));
    }

    static boolean matches(byte[] salt, byte[] expected, String secret) {
        return MessageDigest.isEqual(expected, hash(salt, secret));
    }

    static byte[] hash(byte[] salt, String secret) {
        try {
            MessageDigest sha = MessageDigest.getInstance("SHA-256");
            sha.update(salt);
            return sha.digest(secret.getBytes(StandardCharsets.US_ASCII));
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException(e);
        }
    }
}
