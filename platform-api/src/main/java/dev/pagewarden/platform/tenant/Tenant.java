package dev.pagewarden.platform.tenant;

import jakarta.persistence.Column;
import jakarta.persistence.Entity;
import jakarta.persistence.Id;
import jakarta.persistence.Table;

import java.time.Instant;

/** A customer of the platform: its requests, keys, limits and lineage are keyed by {@link #id()}. */
@Entity
@Table(name = "tenants")
public class Tenant {
    @Id
    private String id;
    @Column(name = "display_name", nullable = false)
    private String displayName;
    @Column(name = "created_at", nullable = false, updatable = false)
    private Instant createdAt;
    @Column(nullable = false)
    private String status;
    @Column(name = "requests_per_minute")
    private Integer requestsPerMinute;
    @Column(name = "tokens_per_minute")
    private Integer tokensPerMinute;
    @Column(name = "max_concurrent")
    private Integer maxConcurrent;
    @Column(name = "max_context")
    private Integer maxContext;
    @Column(nullable = false)
    private int weight = 1;
    @Column(name = "prefix_cache", nullable = false)
    private boolean prefixCache = true;

    protected Tenant() {
    }

    Tenant(String id, String displayName, Instant createdAt) {
        this.id = id;
        this.displayName = displayName;
        this.createdAt = createdAt;
        this.status = "ACTIVE";
    }

    public String id() {
        return id;
    }

    public String displayName() {
        return displayName;
    }

    public Instant createdAt() {
        return createdAt;
    }

    public boolean active() {
        return "ACTIVE".equals(status);
    }

    public TenantLimits limits() {
        return new TenantLimits(requestsPerMinute, tokensPerMinute, maxConcurrent, maxContext, weight);
    }

    /** Whether the tenant's prompts may reuse and leave cached prefix pages (only ever within the tenant). */
    public boolean prefixCache() {
        return prefixCache;
    }

    void prefixCache(boolean on) {
        this.prefixCache = on;
    }

    void limits(TenantLimits limits) {
        this.requestsPerMinute = limits.requestsPerMinute();
        this.tokensPerMinute = limits.tokensPerMinute();
        this.maxConcurrent = limits.maxConcurrent();
        this.maxContext = limits.maxContext();
        this.weight = limits.weight();
    }
}
