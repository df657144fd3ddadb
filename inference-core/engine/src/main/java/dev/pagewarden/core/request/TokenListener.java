package dev.pagewarden.core.request;

/** Receives each generated token as soon as it is sampled, on the decode thread: return quickly. */
@FunctionalInterface
public interface TokenListener {
    void onToken(long requestId, int token);

    TokenListener NONE = (id, token) -> { };
}
