package dev.pagewarden.platform.security;

import dev.pagewarden.platform.error.ApiException;
import org.springframework.security.core.AuthenticationException;

import java.time.Duration;

/** An attempt refused by {@link AuthThrottle} without being checked: answered 429 with Retry-After. */
final class TooManyAttemptsException extends AuthenticationException {
    private final Duration retryAfter;

    TooManyAttemptsException(Duration retryAfter) {
        super("Too many failed attempts: try again in " + ApiException.retryAfterSeconds(retryAfter) + " seconds");
        this.retryAfter = retryAfter;
    }

    Duration retryAfter() {
        return retryAfter;
    }
}
