package dev.pagewarden.platform.database;

import org.springframework.stereotype.Component;

import java.time.Duration;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.LongSupplier;
import java.util.function.Supplier;

/**
 * A short circuit breaker in front of PostgreSQL for the request paths that must not wait on it.
 * After a failed call the database counts as down for {@link #COOLDOWN}; meanwhile callers skip their
 * synchronous lookups and fall back (cached keys, background retries) or answer 503 at once. After the
 * cool-down one caller at a time may probe; its success closes the breaker again.
 */
@Component
public class DatabaseAvailability {
    /** How long a failure keeps the database marked down before the next probe; also the Retry-After. */
    public static final Duration COOLDOWN = Duration.ofSeconds(5);

    private final LongSupplier nanos;
    private final AtomicLong downUntil = new AtomicLong();
    private final AtomicBoolean down = new AtomicBoolean();
    private final AtomicBoolean probing = new AtomicBoolean();
    private final AtomicReference<String> lastError = new AtomicReference<>();

    public DatabaseAvailability() {
        this(System::nanoTime);
    }

    DatabaseAvailability(LongSupplier nanos) {
        this.nanos = nanos;
    }

    /**
     * Whether a caller may try the database now: always while it is up; while it is down, only once the
     * cool-down has passed and no other probe is running. A caller that gets true must report back with
     * {@link #succeeded()} or {@link #failed(Throwable)}.
     */
    public boolean tryAcquire() {
        if (!down.get()) {
            return true;
        }
        return nanos.getAsLong() - downUntil.get() >= 0 && probing.compareAndSet(false, true);
    }

    /**
     * True while a caller should not even try: the database is known down and the cool-down is running.
     * Unlike {@link #tryAcquire()} this takes no probe slot (the connection request itself probes).
     */
    public boolean refusing() {
        return down.get() && nanos.getAsLong() - downUntil.get() < 0;
    }

    public void succeeded() {
        down.set(false);
        probing.set(false);
        lastError.set(null);
    }

    /** Reports a failed call; a refusal by the breaker itself is no news and is ignored. */
    public void failed(Throwable error) {
        if (DatabaseErrors.refused(error)) {
            return;
        }
        downUntil.set(nanos.getAsLong() + COOLDOWN.toNanos());
        down.set(true);
        probing.set(false);
        lastError.set(String.valueOf(error.getMessage()));
    }

    /**
     * Runs one blocking database call and reports its outcome: success closes the breaker, a failure that
     * shows the database unreachable opens it; the failure is rethrown either way.
     */
    public <T> T call(Supplier<T> work) {
        T result;
        try {
            result = work.get();
        } catch (RuntimeException e) {
            if (DatabaseErrors.unavailable(e)) {
                failed(e);
            }
            throw e;
        }
        succeeded();
        return result;
    }

    /** For a caller that got {@link #tryAcquire()} but did not call the database after all. */
    public void abandon() {
        probing.set(false);
    }

    /** True while the last database call on a guarded path failed (and none succeeded since). */
    public boolean knownDown() {
        return down.get();
    }

    /**
     * True while the database is known down and its last failure is at most {@code window} old: for reports
     * (health), so that a breaker nobody has probed since an outage ended does not keep saying "down".
     */
    public boolean failedWithin(Duration window) {
        return down.get() && nanos.getAsLong() - (downUntil.get() - COOLDOWN.toNanos()) <= window.toNanos();
    }

    /** The message of the failure that marked the database down; null while it is up. */
    public String lastError() {
        return lastError.get();
    }
}
