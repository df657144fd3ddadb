package dev.pagewarden.db.audit;

import dev.pagewarden.core.receipt.ReceiptTrust;
import dev.pagewarden.core.receipt.TrustedKeys;

import java.sql.SQLException;
import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Objects;
import java.util.function.Supplier;

/**
 * The receipt keys a verifier trusts: the roots pinned outside the database ({@link ReceiptTrust}, from a file the
 * operator keeps) and the keys that chain to them through endorsements - offered by {@code receipt_keys} and by this
 * replica's own key directory. A key the database holds that does not chain is never trusted, only named
 * ({@link TrustedKeys#untrusted}). The resolved set is reused for {@code cacheTtl}, so a rotation on another replica
 * shows after it.
 */
public final class KeyTrust {
    private record Snapshot(ReceiptTrust trust, TrustedKeys keys, long expiresAtNanos) {
    }

    private final Supplier<ReceiptTrust> trust;
    private final ReceiptKeyRegistry registry;
    private final Supplier<Map<String, TrustedKeys.Candidate>> local;
    private final long cacheNanos;
    private volatile Snapshot cached;

    /**
     * @param registry the database's keys, or null (an offline verifier)
     * @param local    this replica's own keys (from its key directory), or an empty map
     */
    public KeyTrust(ReceiptTrust trust, ReceiptKeyRegistry registry, Supplier<Map<String, TrustedKeys.Candidate>> local,
                    Duration cacheTtl) {
        this(() -> trust, registry, local, cacheTtl);
        Objects.requireNonNull(trust);
    }

    /** {@code trust}: asked on every resolution (a file that gains a root shows at once; an unreadable one throws). */
    public KeyTrust(Supplier<ReceiptTrust> trust, ReceiptKeyRegistry registry, Supplier<Map<String, TrustedKeys.Candidate>> local,
                    Duration cacheTtl) {
        this.trust = Objects.requireNonNull(trust);
        this.registry = registry;
        this.local = local;
        this.cacheNanos = cacheTtl.toNanos();
    }

    public ReceiptTrust trust() {
        return trust.get();
    }

    /** The trusted keys, resolved at most {@code cacheTtl} ago (at once again when the pinned roots changed). */
    public TrustedKeys keys() throws SQLException {
        Snapshot s = cached;
        ReceiptTrust roots = trust.get();
        long now = System.nanoTime();
        if (s != null && s.trust() == roots && now - s.expiresAtNanos() < 0) {
            return s.keys();
        }
        TrustedKeys keys = resolve(roots);
        cached = new Snapshot(roots, keys, now + cacheNanos);
        return keys;
    }

    /** The trusted keys, resolved now. */
    public TrustedKeys fresh() throws SQLException {
        return resolve(trust.get());
    }

    private TrustedKeys resolve(ReceiptTrust roots) throws SQLException {
        Map<String, TrustedKeys.Candidate> candidates = new LinkedHashMap<>();
        if (registry != null) {
            candidates.putAll(registry.candidates());
        }
        // this replica's key files win over a database row under the same id
        candidates.putAll(local.get());
        return TrustedKeys.resolve(roots, candidates);
    }
}
