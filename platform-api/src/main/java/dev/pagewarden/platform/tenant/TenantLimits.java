package dev.pagewarden.platform.tenant;

/** Per-tenant limits enforced before admission; null means unlimited. */
public record TenantLimits(Integer requestsPerMinute, Integer tokensPerMinute, Integer maxConcurrent,
                           Integer maxContext) {
    public static final TenantLimits NONE = new TenantLimits(null, null, null, null);

    public TenantLimits {
        positive("requests_per_minute", requestsPerMinute);
        positive("tokens_per_minute", tokensPerMinute);
        positive("max_concurrent", maxConcurrent);
        positive("max_context", maxContext);
    }

    private static void positive(String name, Integer v) {
        if (v != null && v <= 0) {
            throw new IllegalArgumentException(name + " must be a positive integer or null (no limit), got " + v);
        }
    }
}
