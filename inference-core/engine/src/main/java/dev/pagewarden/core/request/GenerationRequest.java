package dev.pagewarden.core.request;

import dev.pagewarden.core.sampling.SamplingParams;

/**
 * What a caller asks the engine for: continue {@code promptTokens} (already tokenized, BOS included
 * if wanted) by at most {@code maxNewTokens} tokens. {@code weight} is the tenant's share in fair admission
 * ({@value #MIN_WEIGHT}..{@value #MAX_WEIGHT}, as its operator set it; {@value #MIN_WEIGHT} when nobody did):
 * among tenants waiting, one of weight 2 is served twice the tokens of one of weight 1. {@code caching} says
 * whether its prompt may use the engine's prefix cache and in which scope (an engine without a prefix cache
 * ignores it).
 */
public record GenerationRequest(String tenant, int[] promptTokens, int maxNewTokens, SamplingParams sampling,
                                int weight, PrefixCaching caching) {
    public static final int MIN_WEIGHT = 1;
    public static final int MAX_WEIGHT = 100;

    /** A request of a tenant with the default weight, in its tenant's prefix cache scope without a key. */
    public GenerationRequest(String tenant, int[] promptTokens, int maxNewTokens, SamplingParams sampling) {
        this(tenant, promptTokens, maxNewTokens, sampling, MIN_WEIGHT, PrefixCaching.on(null, null));
    }

    /** A request of a tenant with this weight, in its tenant's prefix cache scope without a key. */
    public GenerationRequest(String tenant, int[] promptTokens, int maxNewTokens, SamplingParams sampling, int weight) {
        this(tenant, promptTokens, maxNewTokens, sampling, weight, PrefixCaching.on(null, null));
    }

    /** A request of a tenant with the default weight, in the prefix cache scope {@code caching} says. */
    public GenerationRequest(String tenant, int[] promptTokens, int maxNewTokens, SamplingParams sampling,
                             PrefixCaching caching) {
        this(tenant, promptTokens, maxNewTokens, sampling, MIN_WEIGHT, caching);
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
        if (weight < MIN_WEIGHT || weight > MAX_WEIGHT) {
            throw new InvalidRequestException("weight", "weight must be between " + MIN_WEIGHT + " and " + MAX_WEIGHT
                    + ", got " + weight);
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
