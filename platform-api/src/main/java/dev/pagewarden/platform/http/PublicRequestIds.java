package dev.pagewarden.platform.http;

import org.springframework.stereotype.Component;

import java.security.NoSuchAlgorithmException;
import java.security.SecureRandom;
import java.util.regex.Pattern;

/**
 * The request ids tenants see ({@code cmpl-}/{@code chatcmpl-} + this): 24 random base62 characters
 * (about 143 bits), so an id tells nothing about other tenants' traffic and cannot be guessed. The
 * engine's numeric ids stay inside the platform's lookups. Drawn from a DRBG seeded once here,
 * at start: drawing never reads the OS entropy source on a request thread.
 */
@Component
public class PublicRequestIds {
    static final int LENGTH = 24;
    private static final String ALPHABET = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz";
    private static final Pattern SHAPE = Pattern.compile("[0-9A-Za-z]{" + LENGTH + "}");

    private final SecureRandom random;

    PublicRequestIds() {
        try {
            this.random = SecureRandom.getInstance("DRBG");
            random.nextBytes(new byte[16]); // seeds now, never on a request thread
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException("no DRBG SecureRandom in this JDK", e);
        }
    }

    public String next() {
        char[] id = new char[LENGTH];
        for (int i = 0; i < LENGTH; i++) {
            id[i] = ALPHABET.charAt(random.nextInt(ALPHABET.length()));
        }
        return new String(id);
    }

    /** Whether {@code s} has the shape of an id from {@link #next()} (before any database look-up). */
    public static boolean isWellFormed(String s) {
        return SHAPE.matcher(s).matches();
    }
}
