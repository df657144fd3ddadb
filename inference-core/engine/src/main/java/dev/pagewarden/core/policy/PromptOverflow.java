package dev.pagewarden.core.policy;

/**
 * What the serving path does with a prompt the prefill pool cannot hold. In production admission turns such a
 * prompt away before any page is reserved, and a prefill stage that meets one anyway (a cluster's prefill node,
 * behind another node's admission) fails the request.
 */
public interface PromptOverflow {

    /** Production: refused at admission, and failed with context_length_exceeded should prefill meet one. */
    PromptOverflow REFUSE = prompt -> new Refuse("prompt of " + prompt.length + " tokens does not fit the prefill pool");

    /** What prefill does with the prompt. */
    sealed interface Verdict permits Refuse, Prefill {
    }

    /** The request fails with context_length_exceeded, saying {@code message}. */
    record Refuse(String message) implements Verdict {
    }

    /** Prefill {@code tokens} in the prompt's place. */
    record Prefill(int[] tokens) implements Verdict {
    }

    /** Whether admission checks that a request fits the pools (prompt the prefill pool, reservation the decode pool). */
    default boolean admissionChecksPoolFit() {
        return true;
    }

    /** Called by prefill for a prompt whose pages exceed its pool. */
    Verdict atPrefill(int[] prompt);
}
