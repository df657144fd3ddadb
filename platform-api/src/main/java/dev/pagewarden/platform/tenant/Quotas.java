package dev.pagewarden.platform.tenant;

import dev.pagewarden.platform.database.BoundedCalls;
import dev.pagewarden.platform.database.DatabaseAvailability;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.beans.factory.annotation.Value;
import org.springframework.stereotype.Component;

import javax.sql.DataSource;

import java.time.Duration;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.LongSupplier;

/**
 * Per-tenant limits, checked before a request reaches admission: requests per minute and tokens per
 * minute as token buckets (refilled continuously, bursts up to one minute's worth), concurrent
 * requests as a counter. Tokens are charged as prompt + max_tokens up front and the unused part is
 * refunded when the request ends, so a tenant cannot overshoot by asking for long outputs.
 *
 * <p>The two rate buckets are shared by every replica: kept in PostgreSQL by Bucket4j ({@link SharedBuckets}),
 * each check bounded by {@link #SHARED_TIMEOUT}. While PostgreSQL is known down, or after a check failed or
 * timed out (then for {@link DatabaseAvailability#COOLDOWN} before the next try), this replica falls back to
 * buckets in memory holding its share of each limit: 1/N of it, N being {@code pagewarden.replicas}, so N
 * replicas that have all lost the database still stay within the limit together. The concurrency counter is always per replica, with the same
 * 1/N share. Callers run on a blocking-capable thread.
 */
@Component
public class Quotas implements AutoCloseable {
    private static final long MINUTE_NANOS = Duration.ofMinutes(1).toNanos();
    /** The longest a request waits for the shared quota check before this replica's share applies. */
    static final Duration SHARED_TIMEOUT = Duration.ofSeconds(1);

    private final Map<String, TenantState> states = new ConcurrentHashMap<>();
    private final LongSupplier nanos;
    /** Null: no shared store, every limit is local (one replica, or tests of the bucket arithmetic). */
    private final SharedBuckets shared;
    private final int replicas;

    @Autowired
    public Quotas(DataSource dataSource, DatabaseAvailability database,
                  @Value("${pagewarden.replicas:1}") int replicas) {
        this(new SharedBuckets(dataSource, new BoundedCalls("shared quotas", "this replica applies its 1/" + replicas
                + " share of each limit", "quota-db", SHARED_TIMEOUT, database)), replicas, System::nanoTime);
    }

    /** Local buckets only, with the full limits. */
    Quotas(LongSupplier nanos) {
        this(null, 1, nanos);
    }

    Quotas(SharedBuckets shared, int replicas, LongSupplier nanos) {
        if (replicas < 1) {
            throw new IllegalArgumentException("pagewarden.replicas (PAGEWARDEN_REPLICAS) must be at least 1, the "
                    + "number of platform replicas sharing the database; got " + replicas);
        }
        this.shared = shared;
        this.replicas = replicas;
        this.nanos = nanos;
    }

    @Override
    public void close() {
        if (shared != null) {
            shared.close();
        }
    }

    /** An admitted share of a tenant's limits; close it exactly once when the request ends. */
    public interface Permit extends AutoCloseable {
        /** Ends the request having used {@code tokensUsed} (prompt + generated) of what was charged. */
        void release(long tokensUsed);

        @Override
        default void close() {
            release(Long.MAX_VALUE);
        }
    }

    /**
     * Charges one request of {@code tokens} (prompt + max_tokens) to the tenant or throws
     * {@link QuotaExceededException} without charging anything.
     */
    public Permit acquire(TenantPrincipal caller, long tokens) {
        TenantLimits limits = caller.limits();
        String tenant = caller.tenantId();
        if (limits.tokensPerMinute() != null && tokens > limits.tokensPerMinute()) {
            throw new QuotaExceededException("this request needs " + tokens + " tokens (prompt + max_tokens), more than"
                    + " the tenant's limit of " + limits.tokensPerMinute() + " tokens per minute", Duration.ofMinutes(1));
        }
        TenantState state = states.computeIfAbsent(tenant, id -> new TenantState());
        Integer concurrent = share(limits.maxConcurrent());
        synchronized (state) {
            if (concurrent != null && state.running >= concurrent) {
                throw new QuotaExceededException("tenant " + tenant + " already has " + state.running
                        + " requests running (limit " + limits.maxConcurrent() + " concurrent requests"
                        + (replicas > 1 ? ", " + concurrent + " on this replica" : "") + ")", Duration.ofSeconds(1));
            }
            state.running++; // held while the rate is charged, given back if that refuses
        }
        boolean sharedCharge;
        try {
            sharedCharge = chargeShared(state, tenant, limits, tokens);
            if (!sharedCharge) {
                try {
                    chargeLocal(state, tenant, limits, tokens);
                } finally {
                    synchronized (state) {
                        state.sawLocal(share(limits.requestsPerMinute()), share(limits.tokensPerMinute()));
                    }
                }
            }
        } catch (RuntimeException e) {
            synchronized (state) {
                state.running--;
            }
            throw e;
        }
        return new Permit() {
            private boolean released;

            @Override
            public void release(long tokensUsed) {
                long unused;
                synchronized (state) {
                    if (released) {
                        return;
                    }
                    released = true;
                    state.running--;
                    unused = tokens - Math.min(tokens, Math.max(0, tokensUsed));
                    if (!sharedCharge) {
                        state.tokens.refund(share(limits.tokensPerMinute()), unused, nanos.getAsLong());
                        state.sawLocal(share(limits.requestsPerMinute()), share(limits.tokensPerMinute()));
                    } else if (limits.tokensPerMinute() != null) {
                        state.sawRefund(0, unused, nanos.getAsLong());
                    }
                }
                if (sharedCharge && unused > 0 && limits.tokensPerMinute() != null) {
                    shared.refundLater(key(tenant, "tpm"), limits.tokensPerMinute(), unused);
                }
            }
        };
    }

    /**
     * Charges the shared buckets: true when charged, false when they cannot be reached in time (the caller then
     * charges its local share); throws when a shared limit is reached.
     */
    private boolean chargeShared(TenantState state, String tenant, TenantLimits limits, long tokens) {
        if (shared == null || (limits.requestsPerMinute() == null && limits.tokensPerMinute() == null)) {
            return shared != null;
        }
        try {
            if (limits.requestsPerMinute() != null) {
                SharedBuckets.Taken taken = shared.tryTake(key(tenant, "rpm"), limits.requestsPerMinute(), 1);
                state.sawRequests(new Seen(limits.requestsPerMinute(), taken.remaining(), nanos.getAsLong()));
                long wait = taken.waitNanos();
                if (wait > 0) {
                    throw new QuotaExceededException("rate limit of " + limits.requestsPerMinute()
                            + " requests per minute reached for tenant " + tenant, Duration.ofNanos(wait));
                }
            }
            if (limits.tokensPerMinute() != null) {
                SharedBuckets.Taken taken = shared.tryTake(key(tenant, "tpm"), limits.tokensPerMinute(), tokens);
                state.sawTokens(new Seen(limits.tokensPerMinute(), taken.remaining(), nanos.getAsLong()));
                long wait = taken.waitNanos();
                if (wait > 0) {
                    if (limits.requestsPerMinute() != null) {
                        shared.refundLater(key(tenant, "rpm"), limits.requestsPerMinute(), 1);
                        state.sawRefund(1, 0, nanos.getAsLong());
                    }
                    throw new QuotaExceededException("rate limit of " + limits.tokensPerMinute()
                            + " tokens per minute reached for tenant " + tenant, Duration.ofNanos(wait));
                }
            }
        } catch (BoundedCalls.Unavailable e) {
            return false; // logged by the calls when they start failing
        }
        return true;
    }

    private void chargeLocal(TenantState state, String tenant, TenantLimits limits, long tokens) {
        Integer rpm = share(limits.requestsPerMinute());
        Integer tpm = share(limits.tokensPerMinute());
        String local = shared == null ? "" : " (this replica's share while the shared quota store is unreachable)";
        synchronized (state) {
            long now = nanos.getAsLong();
            Duration waitRequests = state.requests.shortfall(rpm, 1, now);
            if (waitRequests != null) {
                throw new QuotaExceededException("rate limit of " + limits.requestsPerMinute()
                        + " requests per minute reached for tenant " + tenant + local, waitRequests);
            }
            Duration waitTokens = state.tokens.shortfall(tpm, tokens, now);
            if (waitTokens != null) {
                throw new QuotaExceededException("rate limit of " + limits.tokensPerMinute()
                        + " tokens per minute reached for tenant " + tenant + local, waitTokens);
            }
            state.requests.take(rpm, 1, now);
            state.tokens.take(tpm, tokens, now);
        }
    }

    /** This replica's part of a limit when it cannot share: 1/N, at least 1. */
    private Integer share(Integer limit) {
        return limit == null ? null : Math.max(1, limit / replicas);
    }

    private static String key(String tenant, String kind) {
        return tenant + ":" + kind;
    }

    /** Requests of the tenant currently holding a permit. */
    public int running(String tenantId) {
        TenantState s = states.get(tenantId);
        if (s == null) {
            return 0;
        }
        synchronized (s) {
            return s.running;
        }
    }

    private static final class TenantState {
        final Bucket requests = new Bucket();
        final Bucket tokens = new Bucket();
        int running;
        /** The rate buckets as this replica last saw them (shared or local, whichever charged); null: not yet. */
        Seen requestsSeen;
        Seen tokensSeen;

        /** What the shared requests bucket answered. */
        synchronized void sawRequests(Seen seen) {
            requestsSeen = seen;
        }

        /** What the shared tokens bucket answered. */
        synchronized void sawTokens(Seen seen) {
            tokensSeen = seen;
        }

        /** Amounts given back to the shared buckets. */
        synchronized void sawRefund(long requestsBack, long tokensBack, long now) {
            if (requestsSeen != null && requestsBack > 0) {
                requestsSeen = requestsSeen.plus(requestsBack, now);
            }
            if (tokensSeen != null && tokensBack > 0) {
                tokensSeen = tokensSeen.plus(tokensBack, now);
            }
        }

        /** The local buckets, after a charge or refund on them (caller holds the lock). */
        void sawLocal(Integer requestsShare, Integer tokensShare) {
            if (requestsShare != null && !Double.isNaN(requests.level)) {
                requestsSeen = new Seen(requestsShare, requests.level, requests.at);
            }
            if (tokensShare != null && !Double.isNaN(tokens.level)) {
                tokensSeen = new Seen(tokensShare, tokens.level, tokens.at);
            }
        }
    }

    /** A bucket's capacity and level at a moment; it refills continuously (the whole capacity per minute) since. */
    private record Seen(long capacity, double level, long at) {
        double levelAt(long now) {
            return Math.min(capacity, level + (double) Math.max(0, now - at) * capacity / MINUTE_NANOS);
        }

        Seen plus(double amount, long now) {
            return new Seen(capacity, Math.min(capacity, levelAt(now) + amount), now);
        }
    }

    /**
     * One rate limit as a tenant's responses state it: the limit, what is left of it, and how long until the bucket
     * is full again.
     */
    public record RateWindow(long limit, long remaining, Duration reset) {
    }

    /** Both rate limits of a tenant as this replica knows them now; a null side: no such limit configured. */
    public record RateLimits(RateWindow requests, RateWindow tokens) {
    }

    /**
     * What this replica knows of the tenant's rate buckets now: each as last seen (after this replica's latest charge,
     * refusal or refund on it, shared or local) and refilled since; a full bucket when this replica has not touched it
     * under the current limit. While the shared store is unreachable the local buckets charge, and their limit is this
     * replica's share. No database call.
     */
    public RateLimits rateLimits(TenantPrincipal caller) {
        TenantLimits limits = caller.limits();
        TenantState state = states.get(caller.tenantId());
        Seen requests;
        Seen tokens;
        if (state == null) {
            requests = tokens = null;
        } else {
            synchronized (state) {
                requests = state.requestsSeen;
                tokens = state.tokensSeen;
            }
        }
        long now = nanos.getAsLong();
        return new RateLimits(window(limits.requestsPerMinute(), requests, now), window(limits.tokensPerMinute(), tokens, now));
    }

    private RateWindow window(Integer limit, Seen seen, long now) {
        if (limit == null) {
            return null;
        }
        if (seen == null || (seen.capacity() != limit && seen.capacity() != share(limit))) {
            return new RateWindow(limit, limit, Duration.ZERO); // untouched, or seen under an earlier limit
        }
        double level = seen.levelAt(now);
        // to the nanosecond, forgiving the floating-point dust of the refill arithmetic
        long remaining = Math.max(0, Math.min(seen.capacity(), (long) Math.floor(level + 1e-9)));
        long toFull = Math.round((seen.capacity() - level) * MINUTE_NANOS / seen.capacity());
        return new RateWindow(seen.capacity(), remaining, Duration.ofNanos(Math.max(0, toFull)));
    }

    /** A token bucket holding at most one minute's allowance, refilled continuously. */
    private static final class Bucket {
        private double level = Double.NaN;
        private long at;

        private void refill(Integer perMinute, long now) {
            if (Double.isNaN(level)) {
                level = perMinute;
            } else {
                level = Math.min(perMinute, level + (double) (now - at) * perMinute / MINUTE_NANOS);
            }
            at = now;
        }

        /** Null when {@code cost} is available now, else how long until it will be. */
        Duration shortfall(Integer perMinute, long cost, long now) {
            if (perMinute == null) {
                return null;
            }
            refill(perMinute, now);
            if (level >= cost) {
                return null;
            }
            long nanosToWait = (long) Math.ceil((cost - level) * MINUTE_NANOS / perMinute);
            return Duration.ofNanos(Math.max(nanosToWait, 1));
        }

        void take(Integer perMinute, long cost, long now) {
            if (perMinute != null) {
                refill(perMinute, now);
                level -= cost;
            }
        }

        void refund(Integer perMinute, long amount, long now) {
            if (perMinute != null && amount > 0) {
                refill(perMinute, now);
                level = Math.min(perMinute, level + amount);
            }
        }
    }
}
