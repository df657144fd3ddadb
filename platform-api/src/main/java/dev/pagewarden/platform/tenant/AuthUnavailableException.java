package dev.pagewarden.platform.tenant;

import java.time.Duration;

/**
 * A key could not be checked because PostgreSQL is unreachable (or did not answer in time) and the key
 * is not among the recently verified ones: answered 503 {@code auth_unavailable}, never 401 and never a hang.
 */
public final class AuthUnavailableException extends RuntimeException {
    private final Duration retryAfter;

    AuthUnavailableException(String message, Duration retryAfter, Throwable cause) {
        super(message, cause);
        this.retryAfter = retryAfter;
    }

    public Duration retryAfter() {
        return retryAfter;
    }
}
