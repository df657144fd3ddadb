package dev.pagewarden.incident.report;

import dev.pagewarden.db.evidence.Canonical;
import dev.pagewarden.incident.input.InvalidTextException;

import javax.crypto.Mac;
import javax.crypto.spec.SecretKeySpec;
import java.nio.charset.StandardCharsets;
import java.security.GeneralSecurityException;
import java.security.MessageDigest;
import java.security.SecureRandom;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.HexFormat;
import java.util.regex.Pattern;

/**
 * A captcha-free throttle for the public report form (hashcash style): the server hands out a
 * signed challenge {@code EXPIRES-BITS-RANDOM-HMAC} and a report must come with a nonce such that
 * {@code SHA-256(challenge + ":" + nonce)} starts with at least BITS zero bits. Checking costs one
 * HMAC and one hash; solving costs the client about 2^BITS hashes. Nothing is stored per challenge:
 * the signature proves it was issued here, to this client (its {@link ClientPrefix}, signed but not shown)
 * and when it expires, and the caller stores the digest of each used one so that a solved challenge opens
 * one report only. A challenge therefore cannot be solved in bulk ahead of time and spent from elsewhere.
 */
public final class ProofOfWork {
    private static final Pattern CHALLENGE = Pattern.compile("\\d{1,12}-\\d{1,2}-[0-9a-f]{32}-[0-9a-f]{64}");
    private static final Pattern NONCE = Pattern.compile("[0-9A-Za-z]{1,32}");

    /** A challenge as issued: the client solves {@code value} to {@code difficulty} zero bits before {@code expiresAt}. */
    public record Challenge(String value, int difficulty, Instant expiresAt) {
    }

    private final byte[] key;
    private final int difficulty;
    private final Duration ttl;
    private final Clock clock;
    private final SecureRandom random = new SecureRandom();

    ProofOfWork(byte[] key, int difficulty, Duration ttl, Clock clock) {
        if (difficulty < 0 || difficulty > 32) {
            throw new IllegalArgumentException("proof-of-work difficulty must be 0-32 bits, got " + difficulty);
        }
        this.key = key.clone();
        this.difficulty = difficulty;
        this.ttl = ttl;
        this.clock = clock;
    }

    /** A challenge for the client at {@code client} (a {@link ClientPrefix}), which only that client can spend. */
    public Challenge issue(String client) {
        Instant expires = clock.instant().plus(ttl);
        byte[] nonce = new byte[16];
        random.nextBytes(nonce);
        String payload = expires.getEpochSecond() + "-" + difficulty + "-" + HexFormat.of().formatHex(nonce);
        return new Challenge(payload + "-" + HexFormat.of().formatHex(hmac(payload, client)), difficulty, expires);
    }

    /**
     * Checks a solved challenge; returns the SHA-256 of the challenge (for the one-use check). Refusals
     * name the field ({@code challenge} or {@code nonce}) and say what to do.
     */
    public byte[] verify(String challenge, String nonce, String client) {
        if (challenge == null || !CHALLENGE.matcher(challenge).matches()) {
            throw new InvalidTextException("challenge", "challenge is missing or malformed: fetch one from GET /report/challenge");
        }
        if (nonce == null || !NONCE.matcher(nonce).matches()) {
            throw new InvalidTextException("nonce", "nonce is missing or malformed: 1-32 letters or digits that solve the challenge");
        }
        int cut = challenge.lastIndexOf('-');
        String payload = challenge.substring(0, cut);
        byte[] mac = HexFormat.of().parseHex(challenge.substring(cut + 1));
        if (!MessageDigest.isEqual(mac, hmac(payload, client))) {
            throw new InvalidTextException("challenge", "challenge was not issued by this service to your address: "
                    + "fetch one from GET /report/challenge");
        }
        String[] parts = payload.split("-");
        if (clock.instant().isAfter(Instant.ofEpochSecond(Long.parseLong(parts[0])))) {
            throw new InvalidTextException("challenge", "challenge has expired: fetch a new one from GET /report/challenge");
        }
        int bits = Integer.parseInt(parts[1]);
        if (bits < difficulty) { // issued before the difficulty was raised
            throw new InvalidTextException("challenge", "challenge is easier than this service now asks: fetch a new one");
        }
        if (leadingZeroBits(Canonical.sha256(challenge + ":" + nonce)) < bits) {
            throw new InvalidTextException("nonce", "nonce does not solve the challenge: SHA-256(challenge + \":\" + nonce) "
                    + "must start with " + bits + " zero bits");
        }
        return Canonical.sha256(challenge);
    }

    static int leadingZeroBits(byte[] hash) {
        int bits = 0;
        for (byte b : hash) {
            if (b == 0) {
                bits += 8;
                continue;
            }
            return bits + Integer.numberOfLeadingZeros(b & 0xff) - 24;
        }
        return bits;
    }


    private byte[] hmac(String payload, String client) {
        try {
            Mac mac = Mac.getInstance("HmacSHA256");
            mac.init(new SecretKeySpec(key, "HmacSHA256"));
            // NUL cannot occur in the payload: the client is bound without being written into the challenge
            return mac.doFinal((payload + '\u0000' + ClientPrefix.of(client)).getBytes(StandardCharsets.UTF_8));
        } catch (GeneralSecurityException e) {
            throw new IllegalStateException(e);
        }
    }
}
