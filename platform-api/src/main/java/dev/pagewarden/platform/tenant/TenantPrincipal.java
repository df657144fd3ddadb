package dev.pagewarden.platform.tenant;

/** Who is calling the tenant API: the tenant, the key it used (by prefix) and its limits at that moment. */
public record TenantPrincipal(String tenantId, String keyPrefix, TenantLimits limits, boolean prefixCache) {
    /** A tenant with the prefix cache on (the default). */
    public TenantPrincipal(String tenantId, String keyPrefix, TenantLimits limits) {
        this(tenantId, keyPrefix, limits, true);
    }
}
