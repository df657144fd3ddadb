package dev.pagewarden.core.sampling;

import java.util.BitSet;

/**
 * A restriction on which tokens may come next (structured outputs): a state machine over the tokens a request
 * generates. The {@link Sampler} masks out every token the current state does not allow, after all other logit
 * controls, and advances the state with each token it picks; the mask depends only on the request's own tokens, so
 * a constrained request samples the same in a batch as alone.
 */
public interface TokenConstraint {
    /** The state before the first generated token. */
    State start();

    /**
     * The text this constraint compiles from over a model's vocabulary (a response format's schema), for an engine
     * node that compiles it again; null when it has none (such a constraint cannot leave this process).
     */
    default String source() {
        return null;
    }

    /** Immutable: a sequence keeps its state across a preemption and re-prefill. */
    interface State {
        /** The tokens that may come next (shared: never modified by the caller). */
        BitSet allowed();

        /** Whether the output is complete: the request ends here, nothing may follow. */
        boolean complete();

        /** The state after {@code token}; throws {@link IllegalArgumentException} for a token it does not allow. */
        State advance(int token);
    }
}
