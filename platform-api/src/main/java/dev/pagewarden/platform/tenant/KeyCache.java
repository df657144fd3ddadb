package dev.pagewarden.platform.tenant;

import com.github.benmanes.caffeine.cache.Cache;
import com.github.benmanes.caffeine.cache.Caffeine;
import com.github.benmanes.caffeine.cache.Ticker;

import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.time.Duration;
import java.util.HexFormat;
import java.util.Map;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.Predicate;

/**
 * Recently verified API keys with their tenant's settings, bounded in size and age. Keyed by SHA-256 of
 * the presented key (the secret itself is not kept). An entry is due for re-verification after
 * {@code reverifyAfter} and is dropped {@code maxAge} after its last successful verification, so a key
 * keeps working through a database outage for at most that long.
 *
 * <p>Invalidations bump an epoch; a lookup that overlapped one does not keep its (possibly stale) result.
 */
final class KeyCache {
    /** What a verified key stands for; {@code storedHash} pins the key row it was checked against. */
    record Entry(TenantPrincipal principal, byte[] storedHash, long verifiedNanos) {
    }

    private final Cache<String, Entry> entries;
    private final Duration reverifyAfter;
    private final Ticker ticker;
    private final AtomicLong epoch = new AtomicLong();

    KeyCache(long maxKeys, Duration reverifyAfter, Duration maxAge, Ticker ticker) {
        this.reverifyAfter = reverifyAfter;
        this.ticker = ticker;
        this.entries = Caffeine.newBuilder().maximumSize(maxKeys).expireAfterWrite(maxAge).ticker(ticker)
                .build();
    }

    static String digest(String presented) {
        try {
            return HexFormat.of().formatHex(MessageDigest.getInstance("SHA-256")
                    .digest(presented.getBytes(StandardCharsets.UTF_8)));
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException(e);
        }
    }

    Entry get(String digest) {
        return entries.getIfPresent(digest);
    }

    boolean dueForReverify(Entry e) {
        return ticker.read() - e.verifiedNanos() >= reverifyAfter.toNanos();
    }

    /** The current epoch: take it before reading the database, hand it to {@link #put}. */
    long epoch() {
        return epoch.get();
    }

    /** Remembers a verification that started at {@code epochBefore}; dropped again if an invalidation overlapped. */
    void put(String digest, TenantPrincipal principal, byte[] storedHash, long epochBefore) {
        entries.put(digest, new Entry(principal, storedHash, ticker.read()));
        if (epoch.get() != epochBefore) {
            entries.invalidate(digest);
        }
    }

    /** A snapshot of the entries by digest. */
    Map<String, Entry> entries() {
        return Map.copyOf(entries.asMap());
    }

    void remove(String digest) {
        entries.invalidate(digest);
    }

    /** Drops every entry whose principal matches (a revoked key, a tenant whose limits changed). */
    void invalidate(Predicate<TenantPrincipal> which) {
        epoch.incrementAndGet();
        entries.asMap().values().removeIf(e -> which.test(e.principal()));
    }

    long size() {
        entries.cleanUp();
        return entries.estimatedSize();
    }
}
