package dev.pagewarden.platform.database;

import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.time.Duration;
import java.util.concurrent.ArrayBlockingQueue;
import java.util.concurrent.Callable;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;

/**
 * PostgreSQL calls that a request waits for, each bounded by {@code timeout} as a whole (connection, lock waits,
 * statements): they run on this object's own few threads and the caller stops waiting at the deadline, so a
 * stalled database costs a caller at most the timeout and then its local fallback applies. After a failed or
 * late call, or while {@link DatabaseAvailability} knows the database down, calls fail at once for
 * {@link DatabaseAvailability#COOLDOWN} instead of each waiting again.
 */
public final class BoundedCalls implements AutoCloseable {
    private static final Logger LOG = LoggerFactory.getLogger(BoundedCalls.class);

    /** The database did not answer in time, failed, or is cooling down after a failure. */
    public static final class Unavailable extends Exception {
        Unavailable(String message, Throwable cause) {
            super(message, cause);
        }
    }

    private final String what;
    private final String fallback;
    private final Duration timeout;
    private final DatabaseAvailability database;
    private final ThreadPoolExecutor calls;
    private final AtomicBoolean failing = new AtomicBoolean();
    /** While failing: System.nanoTime at which the next call may try the database again. */
    private final AtomicLong retryAt = new AtomicLong();

    /**
     * @param what     what the calls serve, for messages ("shared quotas")
     * @param fallback what the caller does meanwhile, for the log ("this replica applies its 1/2 share")
     * @param database the platform's breaker, or null
     */
    public BoundedCalls(String what, String fallback, String threads, Duration timeout, DatabaseAvailability database) {
        if (timeout.isNegative() || timeout.isZero()) {
            throw new IllegalArgumentException("the timeout of " + what + " must be positive, got " + timeout);
        }
        this.what = what;
        this.fallback = fallback;
        this.timeout = timeout;
        this.database = database;
        this.calls = new ThreadPoolExecutor(4, 4, 30, TimeUnit.SECONDS, new ArrayBlockingQueue<>(256),
                Thread.ofPlatform().name(threads + "-", 0).daemon().factory(), new ThreadPoolExecutor.AbortPolicy());
        this.calls.allowCoreThreadTimeOut(true);
    }

    public Duration timeout() {
        return timeout;
    }

    /** Runs {@code work} and waits for it at most the timeout. */
    public <T> T call(Callable<T> work) throws Unavailable {
        if ((database != null && database.refusing()) || (failing.get() && System.nanoTime() - retryAt.get() < 0)) {
            throw new Unavailable(what + ": PostgreSQL failed recently, not asked again yet", null);
        }
        CompletableFuture<T> result = new CompletableFuture<>();
        try {
            calls.execute(() -> {
                try {
                    result.complete(work.call());
                } catch (Throwable t) {
                    result.completeExceptionally(t);
                }
            });
        } catch (RuntimeException queueFull) {
            throw failed(new Unavailable("too many calls for " + what + " waiting on PostgreSQL", queueFull));
        }
        try {
            T value = result.get(timeout.toNanos(), TimeUnit.NANOSECONDS);
            if (failing.compareAndSet(true, false)) {
                LOG.info("{}: PostgreSQL answers again", what);
            }
            return value;
        } catch (TimeoutException e) {
            throw failed(new Unavailable("PostgreSQL did not answer " + what + " within " + timeout, e));
        } catch (ExecutionException e) {
            throw failed(new Unavailable(what + " in PostgreSQL failed: " + e.getCause(), e.getCause()));
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new Unavailable("interrupted while waiting for " + what, e);
        }
    }

    /** Runs {@code work} in the background, best effort: dropped when too many calls are waiting. */
    public void runLater(Runnable work) {
        try {
            calls.execute(() -> {
                try {
                    work.run();
                } catch (RuntimeException e) {
                    LOG.debug("{}: a background call failed: {}", what, e.toString());
                }
            });
        } catch (RuntimeException queueFull) {
            // only courtesies run here (refunds, forgiveness): dropping one under overload makes a limit stricter
        }
    }

    private Unavailable failed(Unavailable e) {
        retryAt.set(System.nanoTime() + DatabaseAvailability.COOLDOWN.toNanos());
        if (failing.compareAndSet(false, true)) {
            LOG.warn("{} unavailable ({}); {} until PostgreSQL answers again", what, e.getMessage(), fallback);
        }
        return e;
    }

    @Override
    public void close() {
        calls.shutdownNow();
    }
}
