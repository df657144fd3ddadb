package dev.pagewarden.core.sampling;

import java.util.List;

/**
 * The log probabilities of one generated token: the chosen one's and the most likely alternatives' (most likely
 * first, ties to the lowest id), from the model's raw logits.
 */
public record TokenLogprobs(Logprob chosen, List<Logprob> top) {
    public TokenLogprobs {
        top = List.copyOf(top);
    }

    /** A token id and its natural-log probability. */
    public record Logprob(int token, float logprob) {
    }
}
