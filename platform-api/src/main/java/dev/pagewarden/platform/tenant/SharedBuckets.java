package dev.pagewarden.platform.tenant;

import dev.pagewarden.platform.database.BoundedCalls;
import io.github.bucket4j.BucketConfiguration;
import io.github.bucket4j.ConsumptionProbe;
import io.github.bucket4j.distributed.jdbc.PrimaryKeyMapper;
import io.github.bucket4j.distributed.proxy.ProxyManager;
import io.github.bucket4j.postgresql.Bucket4jPostgreSQL;

import javax.sql.DataSource;
import java.time.Duration;

/**
 * Token buckets in PostgreSQL (table {@code quota_buckets}), shared by every replica, through Bucket4j's
 * {@code SELECT ... FOR UPDATE} backend. Each bucket holds at most one minute's allowance and refills
 * continuously. Every call is bounded by the timeout of its {@link BoundedCalls} as a whole (connection, lock
 * wait, statements), so a stalled database costs a request at most the timeout; the caller then falls back to
 * its local limit.
 */
final class SharedBuckets implements AutoCloseable {
    private final ProxyManager<String> buckets;
    private final BoundedCalls calls;

    /** With calls of its own (tests). */
    SharedBuckets(DataSource dataSource, Duration timeout) {
        this(dataSource, new BoundedCalls("shared quotas", "this replica applies its share of each limit", "quota-db",
                timeout, null));
    }

    SharedBuckets(DataSource dataSource, BoundedCalls calls) {
        this.calls = calls;
        this.buckets = Bucket4jPostgreSQL.selectForUpdateBasedBuilder(dataSource)
                .primaryKeyMapper(PrimaryKeyMapper.STRING)
                .table("quota_buckets").idColumn("id").stateColumn("state")
                .requestTimeout(calls.timeout())
                .build();
    }

    /**
     * What a take saw: {@code waitNanos} 0 when taken, else the nanoseconds until it could be (nothing taken); and
     * the tokens left in the bucket after it.
     */
    record Taken(long waitNanos, long remaining) {
    }

    /** Takes {@code cost} from the bucket, or nothing when it does not hold that much. */
    Taken tryTake(String key, long perMinute, long cost) throws BoundedCalls.Unavailable {
        return calls.call(() -> {
            ConsumptionProbe probe = bucket(key, perMinute).tryConsumeAndReturnRemaining(cost);
            return new Taken(probe.isConsumed() ? 0L : Math.max(1L, probe.getNanosToWaitForRefill()),
                    probe.getRemainingTokens());
        });
    }

    /** Gives {@code amount} back (capped at the bucket's capacity); in the background, best effort. */
    void refundLater(String key, long perMinute, long amount) {
        calls.runLater(() -> bucket(key, perMinute).addTokens(amount));
    }

    private io.github.bucket4j.distributed.BucketProxy bucket(String key, long perMinute) {
        BucketConfiguration config = BucketConfiguration.builder()
                .addLimit(l -> l.capacity(perMinute).refillGreedy(perMinute, Duration.ofMinutes(1)))
                .build();
        return buckets.builder().build(key + ":" + perMinute, () -> config);
    }

    @Override
    public void close() {
        calls.close();
    }
}
