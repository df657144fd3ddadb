package dev.pagewarden.core.request;

/**
 * A finished generation.
 *
 * @param requestId        the engine's id of the request
 * @param outputTokens     generated tokens (no stop token)
 * @param finishReason     why it ended
 * @param queuedNanos      submission until decode pages were reserved
 * @param prefillNanos     prefill compute time
 * @param timeToFirstNanos submission until the first token was emitted
 * @param totalNanos       submission until completion
 * @param receipt          the signed isolation receipt; null when the engine has no receipt signer
 */
public record GenerationResult(long requestId, int[] outputTokens, FinishReason finishReason, long queuedNanos,
                               long prefillNanos, long timeToFirstNanos, long totalNanos,
                               dev.pagewarden.core.receipt.Receipt receipt) {
    @Override
    public int[] outputTokens() {
        return outputTokens.clone();
    }
}
