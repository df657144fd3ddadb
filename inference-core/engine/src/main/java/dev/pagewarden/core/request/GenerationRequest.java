package dev.pagewarden.core.request;

import dev.pagewarden.core.sampling.SamplingParams;

/**
 * What a caller asks the engine for: continue {@code promptTokens} (already tokenized, BOS included
 * if wanted) by at most {@code maxNewTokens} tokens. {@code caching} says whether its prompt may use the
 * engine's prefix cache and in which scope (an engine without a prefix cache ignores it).
 */
public record GenerationRequest(String tenant, int[] promptTokens, int maxNewTokens, SamplingParams sampling,
                                PrefixCaching caching) {
    /** A request in its tenant's prefix cache scope without a key. */
    public GenerationRequest(String tenant, int[] promptTokens, int maxNewTokens, SamplingParams sampling) {
        this(tenant, promptTokens, maxNewTokens, sampling, PrefixCaching.on(null, null));
    }

    public GenerationRequest {
        if (caching == null) {
            caching = PrefixCaching.OFF;
        }
        if (tenant == null || tenant.isBlank()) {
            throw new InvalidRequestException("tenant", "tenant must be non-empty");
        }
        if (promptTokens == null || promptTokens.length == 0) {
            throw new InvalidRequestException("prompt", "prompt is empty: at least one token is needed");
        }
        if (maxNewTokens <= 0) {
            throw new InvalidRequestException("max_tokens", "max_tokens must be > 0, got " + maxNewTokens);
        }
        if (sampling == null) {
            throw new InvalidRequestException("sampling", "sampling parameters are missing");
        }
        promptTokens = promptTokens.clone();
    }

    @Override
    public int[] promptTokens() {
        return promptTokens.clone();
    }

    public int promptLength() {
        return promptTokens.length;
    }
}
