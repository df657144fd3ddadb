package dev.pagewarden.platform.tenant;

import io.github.bucket4j.BucketConfiguration;
import io.github.bucket4j.ConsumptionProbe;
import io.github.bucket4j.distributed.jdbc.PrimaryKeyMapper;
import io.github.bucket4j.distributed.proxy.ProxyManager;
import io.github.bucket4j.postgresql.Bucket4jPostgreSQL;

import javax.sql.DataSource;
import java.time.Duration;
import java.util.concurrent.ArrayBlockingQueue;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

/**
 * Token buckets in PostgreSQL (table {@code quota_buckets}), shared by every replica, through Bucket4j's
 * {@code SELECT ... FOR UPDATE} backend. Each bucket holds at most one minute's allowance and refills
 * continuously. Every call is bounded by {@code timeout} as a whole (connection, lock wait, statements): it runs
 * on this class's own threads and the caller stops waiting at the deadline, so a stalled database costs a
 * request at most the timeout; the caller then falls back to its local limit.
 */
final class SharedBuckets implements AutoCloseable {
    /** The database did not answer in time, or failed. */
    static final class Unavailable extends Exception {
        Unavailable(String message, Throwable cause) {
            super(message, cause);
        }
    }

    private final ProxyManager<String> buckets;
    private final Duration timeout;
    private final ThreadPoolExecutor calls = new ThreadPoolExecutor(4, 4, 30, TimeUnit.SECONDS,
            new ArrayBlockingQueue<>(256), Thread.ofPlatform().name("quota-db-", 0).daemon().factory(),
            new ThreadPoolExecutor.AbortPolicy());

    SharedBuckets(DataSource dataSource, Duration timeout) {
        this.timeout = timeout;
        this.calls.allowCoreThreadTimeOut(true);
        this.buckets = Bucket4jPostgreSQL.selectForUpdateBasedBuilder(dataSource)
                .primaryKeyMapper(PrimaryKeyMapper.STRING)
                .table("quota_buckets").idColumn("id").stateColumn("state")
                .requestTimeout(timeout)
                .build();
    }

    /** Takes {@code cost} from the bucket: 0 when taken, else the nanoseconds until it could be (nothing taken). */
    long tryTake(String key, long perMinute, long cost) throws Unavailable {
        return call(() -> {
            ConsumptionProbe probe = bucket(key, perMinute).tryConsumeAndReturnRemaining(cost);
            return probe.isConsumed() ? 0L : Math.max(1L, probe.getNanosToWaitForRefill());
        });
    }

    /** Gives {@code amount} back (capped at the bucket's capacity); in the background, best effort. */
    void refundLater(String key, long perMinute, long amount) {
        try {
            calls.execute(() -> bucket(key, perMinute).addTokens(amount));
        } catch (RuntimeException queueFull) {
            // a refund is a courtesy to the tenant: dropping it under overload only makes the limit stricter
        }
    }

    private io.github.bucket4j.distributed.BucketProxy bucket(String key, long perMinute) {
        BucketConfiguration config = BucketConfiguration.builder()
                .addLimit(l -> l.capacity(perMinute).refillGreedy(perMinute, Duration.ofMinutes(1)))
                .build();
        return buckets.builder().build(key + ":" + perMinute, () -> config);
    }

    private long call(java.util.concurrent.Callable<Long> work) throws Unavailable {
        CompletableFuture<Long> result = new CompletableFuture<>();
        try {
            calls.execute(() -> {
                try {
                    result.complete(work.call());
                } catch (Throwable t) {
                    result.completeExceptionally(t);
                }
            });
        } catch (RuntimeException queueFull) {
            throw new Unavailable("too many quota checks waiting on PostgreSQL", queueFull);
        }
        try {
            return result.get(timeout.toNanos(), TimeUnit.NANOSECONDS);
        } catch (TimeoutException e) {
            throw new Unavailable("PostgreSQL did not answer the quota check within " + timeout, e);
        } catch (ExecutionException e) {
            throw new Unavailable("the quota check in PostgreSQL failed: " + e.getCause(), e.getCause());
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new Unavailable("interrupted while checking the quota", e);
        }
    }

    @Override
    public void close() {
        calls.shutdownNow();
    }
}
