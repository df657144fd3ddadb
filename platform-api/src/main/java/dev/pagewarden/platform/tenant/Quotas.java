package dev.pagewarden.platform.tenant;

import org.springframework.stereotype.Component;

import java.time.Duration;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.LongSupplier;

/**
 * Per-tenant limits, checked before a request reaches admission: requests per minute and tokens per
 * minute as token buckets (refilled continuously, bursts up to one minute's worth), concurrent
 * requests as a counter. Tokens are charged as prompt + max_tokens up front and the unused part is
 * refunded when the request ends, so a tenant cannot overshoot by asking for long outputs.
 * In memory, per platform instance.
 */
@Component
public class Quotas {
    private static final long MINUTE_NANOS = Duration.ofMinutes(1).toNanos();

    private final Map<String, TenantState> states = new ConcurrentHashMap<>();
    private final LongSupplier nanos;

    public Quotas() {
        this(System::nanoTime);
    }

    Quotas(LongSupplier nanos) {
        this.nanos = nanos;
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
        TenantState state = states.computeIfAbsent(caller.tenantId(), id -> new TenantState());
        synchronized (state) {
            long now = nanos.getAsLong();
            if (limits.maxConcurrent() != null && state.running >= limits.maxConcurrent()) {
                throw new QuotaExceededException("tenant " + caller.tenantId() + " already has " + state.running
                        + " requests running (limit " + limits.maxConcurrent() + " concurrent requests)", Duration.ofSeconds(1));
            }
            if (limits.tokensPerMinute() != null && tokens > limits.tokensPerMinute()) {
                throw new QuotaExceededException("this request needs " + tokens + " tokens (prompt + max_tokens), more than"
                        + " the tenant's limit of " + limits.tokensPerMinute() + " tokens per minute", Duration.ofMinutes(1));
            }
            Duration waitRequests = state.requests.shortfall(limits.requestsPerMinute(), 1, now);
            if (waitRequests != null) {
                throw new QuotaExceededException("rate limit of " + limits.requestsPerMinute()
                        + " requests per minute reached for tenant " + caller.tenantId(), waitRequests);
            }
            Duration waitTokens = state.tokens.shortfall(limits.tokensPerMinute(), tokens, now);
            if (waitTokens != null) {
                throw new QuotaExceededException("rate limit of " + limits.tokensPerMinute()
                        + " tokens per minute reached for tenant " + caller.tenantId(), waitTokens);
            }
            state.requests.take(limits.requestsPerMinute(), 1, now);
            state.tokens.take(limits.tokensPerMinute(), tokens, now);
            state.running++;
        }
        return new Permit() {
            private boolean released;

            @Override
            public void release(long tokensUsed) {
                synchronized (state) {
                    if (released) {
                        return;
                    }
                    released = true;
                    state.running--;
                    long unused = tokens - Math.min(tokens, Math.max(0, tokensUsed));
                    state.tokens.refund(limits.tokensPerMinute(), unused, nanos.getAsLong());
                }
            }
        };
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
