package dev.pagewarden.platform.engine;

/**
 * A hook called on the decode thread before each generated token goes to its client. Production
 * uses {@link #OPEN}; tests install one that holds a request at a known step, so that a client
 * disconnect really lands mid-generation.
 */
@FunctionalInterface
public interface TokenGate {
    /** {@code index}: 0 for the request's first generated token. */
    void beforeToken(long requestId, int index);

    TokenGate OPEN = (requestId, index) -> { };
}
