package dev.pagewarden.platform.security;

import org.springframework.security.core.AuthenticationException;

import java.time.Duration;

/** An attempt refused by {@link AuthThrottle} without being checked: answered 429 with Retry-After. */
final class TooManyAttemptsException extends AuthenticationException {
    private final Duration retryAfter;

    TooManyAttemptsException(Duration retryAfter) {
        super("Too many failed attempts: try again in " + seconds(retryAfter) + " seconds");
        this.retryAfter = retryAfter;
    }

    Duration retryAfter() {
        return retryAfter;
    }

    /** Whole seconds, rounded up, at least 1 (as in Retry-After). */
    static long seconds(Duration d) {
        return Math.max(1, (d.toMillis() + 999) / 1000);
    }
}
