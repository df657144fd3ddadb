package dev.pagewarden.core.request;

/**
 * Admission refused the request before any KV page was reserved. {@code code} is the API error code:
 * {@code context_length_exceeded} (never fits), {@code overloaded} or {@code audit_backpressure} (retry later).
 */
public class RequestRejectedException extends RuntimeException {
    private final String code;

    public RequestRejectedException(String code, String message) {
        super(message);
        this.code = code;
    }

    public String code() {
        return code;
    }

    public boolean retryable() {
        return "overloaded".equals(code) || "audit_backpressure".equals(code);
    }
}
