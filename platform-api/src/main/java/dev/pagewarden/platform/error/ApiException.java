package dev.pagewarden.platform.error;

import dev.pagewarden.platform.database.DatabaseAvailability;
import org.springframework.http.HttpStatus;

import java.time.Duration;

/**
 * A failure the tenant API reports as an OpenAI error body with an HTTP status. Built through the
 * factories below so that every code has one status and one type across the API.
 */
public final class ApiException extends RuntimeException {
    private final HttpStatus status;
    private final ApiError error;
    private final Duration retryAfter;

    private ApiException(HttpStatus status, String type, String code, String param, String message, Duration retryAfter) {
        super(message);
        this.status = status;
        this.error = new ApiError(message, type, param, code);
        this.retryAfter = retryAfter;
    }

    public static ApiException invalid(String param, String message) {
        return new ApiException(HttpStatus.BAD_REQUEST, "invalid_request_error", "invalid_request", param, message, null);
    }

    public static ApiException invalid(String param, String code, String message) {
        return new ApiException(HttpStatus.BAD_REQUEST, "invalid_request_error", code, param, message, null);
    }

    /** {@code param}: the field holding the prompt ({@code prompt} or {@code messages}). */
    public static ApiException contextLengthExceeded(String param, String message) {
        return new ApiException(HttpStatus.BAD_REQUEST, "invalid_request_error", "context_length_exceeded", param,
                message, null);
    }

    public static ApiException unauthorized(String message) {
        return new ApiException(HttpStatus.UNAUTHORIZED, "invalid_request_error", "invalid_api_key", null, message, null);
    }

    public static ApiException forbidden(String message) {
        return new ApiException(HttpStatus.FORBIDDEN, "invalid_request_error", "forbidden", null, message, null);
    }

    public static ApiException forbidden(String code, String message) {
        return new ApiException(HttpStatus.FORBIDDEN, "invalid_request_error", code, null, message, null);
    }

    public static ApiException conflict(String code, String message) {
        return new ApiException(HttpStatus.CONFLICT, "invalid_request_error", code, null, message, null);
    }

    public static ApiException notFound(String param, String code, String message) {
        return new ApiException(HttpStatus.NOT_FOUND, "invalid_request_error", code, param, message, null);
    }

    public static ApiException rateLimited(String message, Duration retryAfter) {
        return new ApiException(HttpStatus.TOO_MANY_REQUESTS, "rate_limit_error", "rate_limit_exceeded", null, message,
                retryAfter);
    }

    /** 429 too_many_attempts: failed credentials locked this account or address out for a while. */
    public static ApiException tooManyAttempts(String message, Duration retryAfter) {
        return new ApiException(HttpStatus.TOO_MANY_REQUESTS, "rate_limit_error", "too_many_attempts", null, message,
                retryAfter);
    }

    /** 503 with a code: model_unavailable, overloaded, audit_backpressure, model_not_loaded. */
    public static ApiException unavailable(String code, String message, Duration retryAfter) {
        return new ApiException(HttpStatus.SERVICE_UNAVAILABLE, "service_unavailable_error", code, null, message,
                retryAfter);
    }

    /** 503 database_unavailable: PostgreSQL cannot be reached or did not answer in time. */
    public static ApiException databaseUnavailable() {
        return unavailable("database_unavailable", "The platform's database is unreachable or not answering; "
                + "this operation needs it. Serving continues; retry shortly.", DatabaseAvailability.COOLDOWN);
    }

    /** 500 with a code: isolation_violation, kv_transfer_failed, internal_error. */
    public static ApiException serverError(String code, String message) {
        return new ApiException(HttpStatus.INTERNAL_SERVER_ERROR, "server_error", code, null, message, null);
    }

    public static ApiException methodNotAllowed(String message) {
        return new ApiException(HttpStatus.METHOD_NOT_ALLOWED, "invalid_request_error", "method_not_allowed", null,
                message, null);
    }

    /** Any other status, for framework errors that carry one. */
    public static ApiException status(HttpStatus status, String message) {
        String type = status.is5xxServerError() ? "server_error" : "invalid_request_error";
        return new ApiException(status, type, status.name().toLowerCase(java.util.Locale.ROOT), null, message, null);
    }

    public HttpStatus status() {
        return status;
    }

    public ApiError error() {
        return error;
    }

    /** Retry-After for 429 and 503; null when a retry would not help. */
    public Duration retryAfter() {
        return retryAfter;
    }

    /** Whole seconds for the Retry-After header, rounded up, at least 1. */
    public String retryAfterSeconds() {
        return retryAfter == null ? null : Long.toString(retryAfterSeconds(retryAfter));
    }

    /** A wait as Retry-After states it: whole seconds, rounded up, at least 1. */
    public static long retryAfterSeconds(Duration wait) {
        return Math.max(1, (wait.toMillis() + 999) / 1000);
    }
}
