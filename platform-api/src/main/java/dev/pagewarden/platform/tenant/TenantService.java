package dev.pagewarden.platform.tenant;

import dev.pagewarden.adminui.input.StoredText;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.springframework.dao.DataAccessException;
import org.springframework.stereotype.Service;
import org.springframework.transaction.PlatformTransactionManager;
import org.springframework.transaction.TransactionException;
import org.springframework.transaction.support.TransactionTemplate;
import org.springframework.transaction.annotation.Transactional;

import java.security.SecureRandom;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.ConcurrentHashMap;

/**
 * Tenants, their API keys and limits. Blocking (JPA): callers on the event loop go through a
 * bounded elastic scheduler. Verified keys are cached for a short while so that a request does not
 * cost a database round trip; revoking a key or changing limits drops the cached entries at once.
 */
@Service
public class TenantService {
    private static final Logger LOG = LoggerFactory.getLogger(TenantService.class);
    private static final Duration AUTH_CACHE = Duration.ofSeconds(30);
    private static final SecureRandom RANDOM = new SecureRandom();
    private static final int MAX_NAME = 200;

    private final TenantRepository tenants;
    private final ApiKeyRepository keys;
    private final Clock clock;
    private final TransactionTemplate readOnly;
    private final Map<String, Cached> authCache = new ConcurrentHashMap<>();

    private record Cached(TenantPrincipal principal, Instant expires) {
    }

    /** A key as shown once at creation. */
    public record IssuedKey(String tenantId, String prefix, String key) {
    }

    public TenantService(TenantRepository tenants, ApiKeyRepository keys, Clock clock,
                         PlatformTransactionManager transactions) {
        this.readOnly = new TransactionTemplate(transactions);
        readOnly.setReadOnly(true);
        this.tenants = tenants;
        this.keys = keys;
        this.clock = clock;
    }

    @Transactional
    public Tenant create(String displayName) {
        String name = StoredText.requireLine("name", displayName, MAX_NAME);
        String id = "t_" + Long.toString(RANDOM.nextLong() >>> 1, 36);
        return tenants.save(new Tenant(id, name, clock.instant()));
    }

    @Transactional(readOnly = true)
    public List<Tenant> list() {
        return tenants.findAll();
    }

    @Transactional(readOnly = true)
    public Tenant get(String tenantId) {
        return tenants.findById(tenantId).orElseThrow(() -> new UnknownTenantException("no tenant '" + tenantId + "'"));
    }

    @Transactional
    public IssuedKey issueKey(String tenantId, String keyName) {
        String name = StoredText.line("name", keyName, MAX_NAME);
        get(tenantId);
        ApiKeySecrets.Issued issued = ApiKeySecrets.issue();
        keys.save(new ApiKey(tenantId, issued.prefix(), issued.salt(), issued.hash(), name, clock.instant()));
        return new IssuedKey(tenantId, issued.prefix(), issued.key());
    }

    @Transactional(readOnly = true)
    public List<ApiKey> keys(String tenantId) {
        get(tenantId);
        return keys.findByTenantIdOrderByCreatedAt(tenantId);
    }

    @Transactional
    public void revokeKey(String tenantId, String prefix) {
        ApiKey key = keys.findByPrefix(prefix).filter(k -> k.tenantId().equals(tenantId))
                .orElseThrow(() -> new UnknownTenantException("tenant '" + tenantId + "' has no key '" + prefix + "'"));
        key.revoke(clock.instant());
        authCache.values().removeIf(c -> c.principal().keyPrefix().equals(prefix));
    }

    @Transactional
    public Tenant setLimits(String tenantId, TenantLimits limits) {
        Tenant tenant = get(tenantId);
        tenant.limits(limits);
        authCache.values().removeIf(c -> c.principal().tenantId().equals(tenantId));
        return tenant;
    }

    /**
     * The caller behind a presented key; empty when the key is unknown, wrong or revoked. Verified
     * keys are remembered for a short while; if PostgreSQL cannot be reached, a key verified before
     * keeps working (the engine keeps serving through a database outage, its audit trail journaled
     * locally) - a key never seen stays refused.
     */
    public Optional<TenantPrincipal> authenticate(String presented) {
        ApiKeySecrets.Parsed parsed = ApiKeySecrets.parse(presented);
        if (parsed == null) {
            return Optional.empty();
        }
        Instant now = clock.instant();
        Cached cached = authCache.get(presented);
        if (cached != null && cached.expires().isAfter(now)) {
            return Optional.of(cached.principal());
        }
        Optional<TenantPrincipal> found;
        try {
            found = readOnly.execute(status -> keys.findByPrefix(parsed.prefix())
                    .filter(k -> !k.revoked())
                    .filter(k -> ApiKeySecrets.matches(k.salt(), k.hash(), parsed.secret()))
                    .flatMap(k -> tenants.findById(k.tenantId()))
                    .filter(Tenant::active)
                    .map(t -> new TenantPrincipal(t.id(), parsed.prefix(), t.limits())));
        } catch (DataAccessException | TransactionException e) {
            if (cached != null) {
                authCache.put(presented, new Cached(cached.principal(), now.plus(AUTH_CACHE)));
                LOG.warn("database unreachable ({}); accepting key {} verified before", e.getMessage(),
                        parsed.prefix());
                return Optional.of(cached.principal());
            }
            throw e;
        }
        if (found.isPresent()) {
            authCache.put(presented, new Cached(found.get(), now.plus(AUTH_CACHE)));
        } else {
            authCache.remove(presented);
        }
        return found;
    }
}
