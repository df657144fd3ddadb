package dev.pagewarden.platform.tenant;

import jakarta.persistence.Column;
import jakarta.persistence.Entity;
import jakarta.persistence.GeneratedValue;
import jakarta.persistence.GenerationType;
import jakarta.persistence.Id;
import jakarta.persistence.Table;

import java.time.Instant;

/** A stored API key: its public prefix and a salted hash of its secret, never the secret itself. */
@Entity
@Table(name = "api_keys")
public class ApiKey {
    @Id
    @GeneratedValue(strategy = GenerationType.IDENTITY)
    private Long id;
    @Column(name = "tenant_id", nullable = false, updatable = false)
    private String tenantId;
    @Column(nullable = false, unique = true, updatable = false)
    private String prefix;
    @Column(nullable = false, updatable = false)
    private byte[] salt;
    @Column(nullable = false, updatable = false)
    private byte[] hash;
    private String name;
    @Column(name = "created_at", nullable = false, updatable = false)
    private Instant createdAt;
    @Column(name = "revoked_at")
    private Instant revokedAt;

    protected ApiKey() {
    }

    ApiKey(String tenantId, String prefix, byte[] salt, byte[] hash, String name, Instant createdAt) {
        this.tenantId = tenantId;
        this.prefix = prefix;
        this.salt = salt.clone();
        this.hash = hash.clone();
        this.name = name;
        this.createdAt = createdAt;
    }

    public String tenantId() {
        return tenantId;
    }

    public String prefix() {
        return prefix;
    }

    byte[] salt() {
        return salt.clone();
    }

    byte[] hash() {
        return hash.clone();
    }

    public String name() {
        return name;
    }

    public Instant createdAt() {
        return createdAt;
    }

    public Instant revokedAt() {
        return revokedAt;
    }

    public boolean revoked() {
        return revokedAt != null;
    }

    void revoke(Instant at) {
        if (revokedAt == null) {
            revokedAt = at;
        }
    }
}
