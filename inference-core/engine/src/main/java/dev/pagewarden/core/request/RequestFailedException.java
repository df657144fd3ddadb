package dev.pagewarden.core.request;

/** The engine stopped a request; {@code code} is the API error code (for example kv_transfer_failed). */
public class RequestFailedException extends RuntimeException {
    private final String code;

    public RequestFailedException(String code, String message) {
        super(message);
        this.code = code;
    }

    public RequestFailedException(String code, String message, Throwable cause) {
        super(message, cause);
        this.code = code;
    }

    public String code() {
        return code;
    }
}
