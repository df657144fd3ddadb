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
 * @param cachedTokens     prompt tokens whose KV came from the prefix cache instead of being computed
 */
public record GenerationResult(long requestId, int[] outputTokens, FinishReason finishReason, long queuedNanos,
                               long prefillNanos, long timeToFirstNanos, long totalNanos,
                               dev.pagewarden.core.receipt.Receipt receipt, int cachedTokens) {
    /** A result with no prompt token from the prefix cache. */
    public GenerationResult(long requestId, int[] outputTokens, FinishReason finishReason, long queuedNanos,
                            long prefillNanos, long timeToFirstNanos, long totalNanos,
                            dev.pagewarden.core.receipt.Receipt receipt) {
        this(requestId, outputTokens, finishReason, queuedNanos, prefillNanos, timeToFirstNanos, totalNanos, receipt, 0);
    }

    @Override
    public int[] outputTokens() {
        return outputTokens.clone();
    }
}
