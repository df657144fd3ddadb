package dev.pagewarden.platform.tenant;

import java.time.Duration;

/** A tenant limit refused the request: 429 rate_limit_exceeded with Retry-After. */
public final class QuotaExceededException extends RuntimeException {
    private final Duration retryAfter;

    public QuotaExceededException(String message, Duration retryAfter) {
        super(message);
        this.retryAfter = retryAfter;
    }

    public Duration retryAfter() {
        return retryAfter;
    }
}
