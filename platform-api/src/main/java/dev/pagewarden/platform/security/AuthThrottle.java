package dev.pagewarden.platform.security;

import com.github.benmanes.caffeine.cache.Cache;
import com.github.benmanes.caffeine.cache.Caffeine;
import dev.pagewarden.adminui.AdminUiProperties;
import org.springframework.stereotype.Component;

import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;

/**
 * Guessing limits for logins and the admin token ({@code pagewarden.admin.throttle.*}), per key: an
 * account or a client address. Every attempt counts as a failure before it is checked (so parallel
 * guesses cannot overtake the count) and a success gives the count back; an attempt past the limit
 * within the window starts a lockout, and while any of its keys is locked out an attempt is refused
 * unchecked, right or wrong. Each further lockout of a key doubles, up to the maximum; a key left
 * alone for the maximum lockout starts over. In memory (one process), bounded and expiring.
 */
@Component
class AuthThrottle {
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

    private final AdminUiProperties.Throttle settings;
    private final Clock clock;
    private final Cache<Key, Strikes> strikes;

    AuthThrottle(AdminUiProperties properties, Clock clock) {
        this.settings = properties.throttle();
        this.clock = clock;
        this.strikes = Caffeine.newBuilder().maximumSize(100_000)
                .expireAfterAccess(settings.window().plus(settings.maxLockout()).multipliedBy(2)).build();
    }

    Decision attempt(List<Key> keys) {
        Instant now = clock.instant();
        Duration wait = null;
        for (Key key : keys) {
            wait = longer(wait, strikes(key).lockedFor(now));
        }
        if (wait != null) {
            return new Decision(wait, List.of());
        }
        List<Key> lockedNow = new ArrayList<>();
        for (Key key : keys) {
            Duration lockout = strikes(key).strike(now, key.scope() == Scope.ACCOUNT ? settings.maxFailures()
                    : settings.addressMaxFailures(), settings);
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
                strikes.invalidate(key);
            } else {
                strikes(key).refund();
            }
        }
    }

    private Strikes strikes(Key key) {
        return strikes.get(key, k -> new Strikes());
    }

    private static Duration longer(Duration a, Duration b) {
        return a == null ? b : b == null ? a : a.compareTo(b) >= 0 ? a : b;
    }

    /** One key's count within its window, and its lockouts. */
    private static final class Strikes {
        private int failures;
        private Instant windowStart;
        private int lockouts;
        private Instant lockedUntil;

        synchronized Duration lockedFor(Instant now) {
            return lockedUntil != null && now.isBefore(lockedUntil) ? Duration.between(now, lockedUntil) : null;
        }

        synchronized Duration strike(Instant now, int limit, AdminUiProperties.Throttle settings) {
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
