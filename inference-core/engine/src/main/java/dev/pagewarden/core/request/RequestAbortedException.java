package dev.pagewarden.core.request;

/** The request was aborted (by its caller, an operator, or shutdown) before it finished. */
public class RequestAbortedException extends RuntimeException {
    public RequestAbortedException(String message) {
        super(message);
    }
}
