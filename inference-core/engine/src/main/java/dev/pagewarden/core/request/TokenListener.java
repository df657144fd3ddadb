package dev.pagewarden.core.request;

import dev.pagewarden.core.sampling.TokenLogprobs;

/** Receives each generated token as soon as it is sampled, on the decode thread: return quickly. */
@FunctionalInterface
public interface TokenListener {
    void onToken(long requestId, int token);

    /**
     * A token with its log probabilities: null unless the request asked for them.
     */
    default void onToken(long requestId, int token, TokenLogprobs logprobs) {
        onToken(requestId, token);
    }

    TokenListener NONE = (id, token) -> { };
}
