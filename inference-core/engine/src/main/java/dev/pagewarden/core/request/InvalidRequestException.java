package dev.pagewarden.core.request;

/** A request the engine can never serve as given; {@code param} names the offending field. */
public class InvalidRequestException extends RuntimeException {
    private final String param;
    private final String code;

    public InvalidRequestException(String param, String message) {
        this(param, "invalid_request", message);
    }

    public InvalidRequestException(String param, String code, String message) {
        super(message);
        this.param = param;
        this.code = code;
    }

    public String param() {
        return param;
    }

    public String code() {
        return code;
    }
}
