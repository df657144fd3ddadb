package dev.pagewarden.platform.security;

import com.github.benmanes.caffeine.cache.Cache;
import com.github.benmanes.caffeine.cache.Caffeine;
import dev.pagewarden.incident.AdminProperties;
import dev.pagewarden.platform.database.BoundedCalls;
import dev.pagewarden.platform.database.DatabaseAvailability;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.beans.factory.annotation.Value;
import org.springframework.stereotype.Component;

import javax.sql.DataSource;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.time.temporal.ChronoUnit;
import java.util.ArrayList;
import java.util.List;
import java.util.function.Function;

/**
 * Guessing limits for logins and the admin token ({@code pagewarden.admin.throttle.*}), per key: an
 * account or a client address. Every attempt counts as a failure before it is checked (so parallel
 * guesses cannot overtake the count) and a success gives the count back; an attempt past the limit
 * within the window starts a lockout, and while any of its keys is locked out an attempt is refused
 * unchecked, right or wrong. Each further lockout of a key doubles, up to the maximum; a key left
 * alone for the maximum lockout starts over.
 *
 * <p>The counts are shared by every replica in PostgreSQL ({@link SharedStrikes}), each attempt's check bounded
 * by {@link #SHARED_TIMEOUT}. While PostgreSQL is unreachable or too slow this replica counts alone, in memory,
 * allowing 1/N of each limit ({@code pagewarden.replicas}), so N replicas that lost the database together still
 * allow no more guesses than one limit (fail closed), and a lockout started then is kept after the database
 * is back. Callers run on a blocking-capable thread.
 */
@Component
class AuthThrottle implements AutoCloseable {
    /** The longest an attempt waits for the shared count before this replica's share applies. */
    static final Duration SHARED_TIMEOUT = Duration.ofSeconds(1);

    enum Scope { ACCOUNT, ADDRESS }

    /** What is counted: {@code kind} (login, admin_token) keeps the two apart. */
    record Key(String kind, Scope scope, String value) {
    }

    /**
     * The answer to one attempt: go ahead ({@code retryAfter} null), or refused for that long;
     * {@code lockedNow} names the keys whose lockout this attempt started.
     */
    record Decision(Duration retryAfter, List<Key> lockedNow) {
        boolean allowed() {
            return retryAfter == null;
        }
    }

    private final AdminProperties.Throttle settings;
    private final Clock clock;
    private final Cache<Key, Strikes> local;
    /** Null: one process, full limits in memory. */
    private final SharedStrikes shared;
    private final int replicas;

    @Autowired
    AuthThrottle(AdminProperties properties, Clock clock, DataSource dataSource, DatabaseAvailability database,
                 @Value("${pagewarden.replicas:1}") int replicas) {
        this(properties, clock, new SharedStrikes(dataSource, new BoundedCalls("the shared login throttle",
                "this replica counts guesses alone, allowing 1/" + replicas + " of each limit", "throttle-db",
                SHARED_TIMEOUT, database)), replicas);
    }

    /** Counts in memory only, with the full limits. */
    AuthThrottle(AdminProperties properties, Clock clock) {
        this(properties, clock, null, 1);
    }

    AuthThrottle(AdminProperties properties, Clock clock, SharedStrikes shared, int replicas) {
        if (replicas < 1) {
            throw new IllegalArgumentException("pagewarden.replicas (PAGEWARDEN_REPLICAS) must be at least 1, the "
                    + "number of platform replicas sharing the database; got " + replicas);
        }
        this.settings = properties.throttle();
        this.clock = clock;
        this.shared = shared;
        this.replicas = replicas;
        this.local = Caffeine.newBuilder().maximumSize(100_000)
                .expireAfterAccess(settings.window().plus(settings.maxLockout()).multipliedBy(2)).build();
    }

    Decision attempt(List<Key> keys) {
        // PostgreSQL keeps microseconds: a lockout's end read back must be the instant that was computed
        Instant now = clock.instant().truncatedTo(ChronoUnit.MICROS);
        if (shared != null) {
            Duration held = null; // a lockout this replica started alone while the database was away still holds
            for (Key key : keys) {
                Strikes s = local.getIfPresent(key);
                held = longer(held, s == null ? null : s.lockedFor(now));
            }
            if (held != null) {
                return new Decision(held, List.of());
            }
            try {
                return shared.attempt(keys, now, settings.window().plus(settings.maxLockout()).multipliedBy(2),
                        strikes -> decide(keys, strikes, now, 1));
            } catch (BoundedCalls.Unavailable e) {
                return decide(keys, this::localStrikes, now, replicas);
            }
        }
        return decide(keys, this::localStrikes, now, 1);
    }

    /** The rule itself, over the keys' counts however kept; limits divided by {@code share}. */
    private Decision decide(List<Key> keys, Function<Key, Strikes> strikes, Instant now, int share) {
        Duration wait = null;
        for (Key key : keys) {
            wait = longer(wait, strikes.apply(key).lockedFor(now));
        }
        if (wait != null) {
            return new Decision(wait, List.of());
        }
        List<Key> lockedNow = new ArrayList<>();
        for (Key key : keys) {
            int limit = key.scope() == Scope.ACCOUNT ? settings.maxFailures() : settings.addressMaxFailures();
            Duration lockout = strikes.apply(key).strike(now, Math.max(1, limit / share), settings);
            if (lockout != null) {
                lockedNow.add(key);
                wait = longer(wait, lockout);
            }
        }
        return new Decision(wait, List.copyOf(lockedNow));
    }

    /** The attempt was right: its account starts over, its address gets the strike back. */
    void succeeded(List<Key> keys) {
        for (Key key : keys) {
            if (key.scope() == Scope.ACCOUNT) {
                local.invalidate(key);
            } else {
                Strikes s = local.getIfPresent(key);
                if (s != null) {
                    s.refund();
                }
            }
        }
        if (shared != null) {
            shared.succeededLater(keys);
        }
    }

    @Override
    public void close() {
        if (shared != null) {
            shared.close();
        }
    }

    private Strikes localStrikes(Key key) {
        return local.get(key, k -> new Strikes());
    }

    private static Duration longer(Duration a, Duration b) {
        return a == null ? b : b == null ? a : a.compareTo(b) >= 0 ? a : b;
    }

    /** One key's count within its window, and its lockouts. */
    static final class Strikes {
        private int failures;
        private Instant windowStart;
        private int lockouts;
        private Instant lockedUntil;

        Strikes() {
        }

        Strikes(int failures, Instant windowStart, int lockouts, Instant lockedUntil) {
            this.failures = failures;
            this.windowStart = windowStart;
            this.lockouts = lockouts;
            this.lockedUntil = lockedUntil;
        }

        synchronized int failures() {
            return failures;
        }

        synchronized Instant windowStart() {
            return windowStart;
        }

        synchronized int lockouts() {
            return lockouts;
        }

        synchronized Instant lockedUntil() {
            return lockedUntil;
        }

        synchronized Duration lockedFor(Instant now) {
            return lockedUntil != null && now.isBefore(lockedUntil) ? Duration.between(now, lockedUntil) : null;
        }

        synchronized Duration strike(Instant now, int limit, AdminProperties.Throttle settings) {
            if (lockedUntil != null && !now.isBefore(lockedUntil.plus(settings.maxLockout()))) {
                lockouts = 0; // quiet long enough: forgiven
                lockedUntil = null;
            }
            if (windowStart == null || !now.isBefore(windowStart.plus(settings.window()))) {
                windowStart = now;
                failures = 0;
            }
            if (++failures <= limit) {
                return null;
            }
            lockouts++;
            Duration lockout = settings.lockout().multipliedBy(1L << Math.min(lockouts - 1, 30));
            lockout = lockout.compareTo(settings.maxLockout()) > 0 ? settings.maxLockout() : lockout;
            lockedUntil = now.plus(lockout);
            failures = 0;
            windowStart = null;
            return lockout;
        }

        synchronized void refund() {
            failures = Math.max(0, failures - 1);
        }
    }
}
