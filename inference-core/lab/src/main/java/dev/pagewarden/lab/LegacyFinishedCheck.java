package dev.pagewarden.lab;

import dev.pagewarden.core.policy.PromptOverflow;

/**
 * {@link Fault#LEGACY_FINISHED_CHECK}: the 2026 engine's handling of a prompt over the prefill pool. Admission
 * lets it through; prefill "rejects" it but sends a one-token placeholder, whose finished check decode never saw,
 * and decode carries on.
 */
final class LegacyFinishedCheck implements PromptOverflow {

    @Override
    public boolean admissionChecksPoolFit() {
        return false;
    }

    @Override
    public Verdict atPrefill(int[] prompt) {
        return new Prefill(new int[]{prompt[0]});
    }
}
