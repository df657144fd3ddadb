package dev.pagewarden.platform.tenant;

import dev.pagewarden.core.request.GenerationRequest;

/**
 * Per-tenant limits enforced before admission; null means unlimited. {@code weight} is the tenant's share in the
 * engine's fair admission ({@value GenerationRequest#MIN_WEIGHT}..{@value GenerationRequest#MAX_WEIGHT}).
 */
public record TenantLimits(Integer requestsPerMinute, Integer tokensPerMinute, Integer maxConcurrent,
                           Integer maxContext, int weight) {
    public static final TenantLimits NONE = new TenantLimits(null, null, null, null);

    /** Limits with the default weight. */
    public TenantLimits(Integer requestsPerMinute, Integer tokensPerMinute, Integer maxConcurrent, Integer maxContext) {
        this(requestsPerMinute, tokensPerMinute, maxConcurrent, maxContext, GenerationRequest.MIN_WEIGHT);
    }

    public TenantLimits {
        positive("requests_per_minute", requestsPerMinute);
        positive("tokens_per_minute", tokensPerMinute);
        positive("max_concurrent", maxConcurrent);
        positive("max_context", maxContext);
        if (weight < GenerationRequest.MIN_WEIGHT || weight > GenerationRequest.MAX_WEIGHT) {
            throw new IllegalArgumentException(weightProblem(weight));
        }
    }

    /** Why {@code weight} is not one: the same words for the API and the admin page. */
    public static String weightProblem(Object weight) {
        return "weight must be an integer from " + GenerationRequest.MIN_WEIGHT + " to " + GenerationRequest.MAX_WEIGHT
                + ", got " + weight;
    }

    private static void positive(String name, Integer v) {
        if (v != null && v <= 0) {
            throw new IllegalArgumentException(name + " must be a positive integer or null (no limit), got " + v);
        }
    }
}
