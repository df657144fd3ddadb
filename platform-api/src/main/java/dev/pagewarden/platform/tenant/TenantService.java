package dev.pagewarden.platform.tenant;

import com.github.benmanes.caffeine.cache.Ticker;
import dev.pagewarden.incident.input.StoredText;
import dev.pagewarden.platform.database.ChangeFeed;
import dev.pagewarden.platform.database.DatabaseAvailability;
import dev.pagewarden.platform.database.DatabaseErrors;
import jakarta.annotation.PreDestroy;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.springframework.jdbc.core.JdbcTemplate;
import org.springframework.jdbc.core.simple.JdbcClient;
import org.springframework.stereotype.Service;
import org.springframework.transaction.PlatformTransactionManager;
import org.springframework.transaction.annotation.Transactional;
import org.springframework.transaction.support.TransactionSynchronization;
import org.springframework.transaction.support.TransactionSynchronizationManager;
import org.springframework.transaction.support.TransactionTemplate;
import reactor.core.publisher.Mono;
import reactor.core.scheduler.Schedulers;

import javax.sql.DataSource;
import java.security.MessageDigest;
import java.security.SecureRandom;
import java.time.Clock;
import java.time.Duration;
import java.util.List;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.ArrayBlockingQueue;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.function.Predicate;

/**
 * Tenants, their API keys and limits. Blocking (JPA) except {@link #authenticate}: callers on the event loop
 * go through a bounded elastic scheduler.
 *
 * <p>Verified keys, with their tenant's limits, are served from a bounded cache ({@link KeyCache}) so that a
 * request does not wait on PostgreSQL: an entry older than {@link #REVERIFY_AFTER} is still served while it is
 * re-verified in the background, and is dropped {@link #MAX_STALE} after its last successful verification.
 * Revoking a key or changing limits drops the entries on this replica at once (again after the commit), and on
 * every other replica within a second or so through the {@link ChangeFeed} (topic {@value #TOPIC}); after the
 * feed reconnects, every cached key is re-verified, since notifications sent meanwhile are lost.
 * While the database is known to be down ({@link DatabaseAvailability}) a key not in the cache is answered
 * with {@link AuthUnavailableException} at once instead of a lookup.
 */
@Service
public class TenantService implements ChangeFeed.Subscriber {
    private static final Logger LOG = LoggerFactory.getLogger(TenantService.class);
    /** A cached key is re-checked against the database (in the background) once it is this old. */
    static final Duration REVERIFY_AFTER = Duration.ofSeconds(30);
    /** A cached key the database could not re-check for this long is forgotten (outage bound). */
    static final Duration MAX_STALE = Duration.ofMinutes(10);
    /**
     * How long a request waits for the lookup of a key not in the cache: longer than a pooled connection takes
     * to fail (3 s), so a frozen database trips the breaker through the lookup's own error.
     */
    static final Duration LOOKUP_WAIT = Duration.ofSeconds(5);
    private static final long MAX_KEYS = 100_000;
    private static final SecureRandom RANDOM = new SecureRandom();
    private static final int MAX_NAME = 200;
    static final String TOPIC = "keys";
    private static final String KEY_CHANGE = "key=";
    private static final String TENANT_CHANGE = "tenant=";

    private final TenantRepository tenants;
    private final ApiKeyRepository keys;
    private final Clock clock;
    private final TransactionTemplate readOnly;
    private final DatabaseAvailability database;
    private final KeyCache cache;
    private final JdbcClient jdbc;
    private final TenantDefaults defaults;
    private final Set<String> reverifying = ConcurrentHashMap.newKeySet();
    // two threads of its own: re-verification must not queue behind (or crowd out) request work
    private final ThreadPoolExecutor reverifier = new ThreadPoolExecutor(2, 2, 30, TimeUnit.SECONDS,
            new ArrayBlockingQueue<>(1024), Thread.ofPlatform().name("key-reverify-", 0).daemon().factory(),
            new ThreadPoolExecutor.AbortPolicy());

    /** A key as shown once at creation. */
    public record IssuedKey(String tenantId, String prefix, String key) {
    }

    /** What the database says about a presented key: the principal and the key row's hash it matched. */
    private record Verified(TenantPrincipal principal, byte[] storedHash) {
    }

    public TenantService(TenantRepository tenants, ApiKeyRepository keys, Clock clock,
                         PlatformTransactionManager transactions, DatabaseAvailability database,
                         DataSource dataSource, ChangeFeed feed, TenantDefaults defaults) {
        reverifier.allowCoreThreadTimeOut(true);
        this.defaults = defaults;
        this.readOnly = new TransactionTemplate(transactions);
        readOnly.setReadOnly(true);
        this.tenants = tenants;
        this.keys = keys;
        this.clock = clock;
        this.database = database;
        this.cache = new KeyCache(MAX_KEYS, REVERIFY_AFTER, MAX_STALE, Ticker.systemTicker());
        JdbcTemplate template = new JdbcTemplate(dataSource);
        template.setQueryTimeout(5);
        this.jdbc = JdbcClient.create(template);
        feed.subscribe(TOPIC, this);
    }

    @PreDestroy
    void stop() {
        reverifier.shutdownNow();
    }

    @Transactional
    public Tenant create(String displayName) {
        String name = StoredText.requireLine("name", displayName, MAX_NAME);
        String id = "t_" + Long.toString(RANDOM.nextLong() >>> 1, 36);
        Tenant tenant = new Tenant(id, name, clock.instant());
        tenant.limits(defaults.limits());
        return tenants.save(tenant);
    }

    /** The limits a new tenant starts with. */
    public TenantDefaults defaults() {
        return defaults;
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
        forget(p -> p.keyPrefix().equals(prefix));
        tellReplicas(KEY_CHANGE + prefix);
    }

    @Transactional
    public Tenant setLimits(String tenantId, TenantLimits limits) {
        return change(tenantId, t -> t.limits(limits));
    }

    /** Switches the tenant's prefix cache on or off; cached keys pick it up at once here, on other replicas after the commit. */
    @Transactional
    public Tenant setPrefixCache(String tenantId, boolean on) {
        return change(tenantId, t -> t.prefixCache(on));
    }

    /** Changes a tenant's settings: this replica's cached keys forget it now, the others when they hear of it. */
    private Tenant change(String tenantId, java.util.function.Consumer<Tenant> how) {
        Tenant tenant = get(tenantId);
        how.accept(tenant);
        forget(p -> p.tenantId().equals(tenantId));
        tellReplicas(TENANT_CHANGE + tenantId);
        return tenant;
    }

    /** In the caller's transaction: the other replicas hear of it when (and only if) it commits. */
    private void tellReplicas(String detail) {
        jdbc.sql("SELECT pg_notify(?, ?)").params(ChangeFeed.CHANNEL, ChangeFeed.payload(TOPIC, detail))
                .query().singleRow();
    }

    /** Another replica revoked a key or changed a tenant: drop what this one cached of it. */
    @Override
    public void changed(String detail) {
        if (detail.startsWith(KEY_CHANGE)) {
            String prefix = detail.substring(KEY_CHANGE.length());
            cache.invalidate(p -> p.keyPrefix().equals(prefix));
        } else if (detail.startsWith(TENANT_CHANGE)) {
            String tenantId = detail.substring(TENANT_CHANGE.length());
            cache.invalidate(p -> p.tenantId().equals(tenantId));
        } else {
            LOG.warn("ignoring an unknown key change '{}'", detail);
        }
    }

    /**
     * After a (re)connect of the feed: re-verifies every cached key now, on the feed's thread, so a revocation
     * whose notification was lost is applied before new notifications are read. A key the database cannot check
     * stays cached (as in {@link #reverify}).
     */
    @Override
    public void resync() {
        cache.entries().forEach(this::reverify);
    }

    /** Drops cached keys now and once more after the commit, so no lookup racing the change keeps the old state. */
    private void forget(Predicate<TenantPrincipal> which) {
        cache.invalidate(which);
        if (TransactionSynchronizationManager.isSynchronizationActive()) {
            TransactionSynchronizationManager.registerSynchronization(new TransactionSynchronization() {
                @Override
                public void afterCompletion(int status) {
                    cache.invalidate(which);
                }
            });
        }
    }

    /**
     * The caller behind a presented key: empty when the key is malformed, unknown, wrong or revoked; an
     * {@link AuthUnavailableException} when it cannot be checked (database unreachable and the key not verified
     * recently). A cached key answers at once, on the calling thread, without touching the database (a due
     * re-verification runs in the background); only a key not in the cache is looked up, off the caller's thread
     * and for at most {@link #LOOKUP_WAIT}.
     */
    public Mono<Optional<TenantPrincipal>> authenticate(String presented) {
        ApiKeySecrets.Parsed parsed = ApiKeySecrets.parse(presented);
        if (parsed == null) {
            return Mono.just(Optional.empty());
        }
        String digest = KeyCache.digest(presented);
        KeyCache.Entry cached = cache.get(digest);
        if (cached != null) {
            if (cache.dueForReverify(cached)) {
                reverifyLater(digest, cached);
            }
            return Mono.just(Optional.of(cached.principal()));
        }
        if (database.refusing()) {
            return Mono.error(unavailable(parsed.prefix(), null));
        }
        return Mono.fromCallable(() -> lookup(parsed, digest))
                .subscribeOn(Schedulers.boundedElastic())
                // a slow answer is refused (fail closed) but does not mark the database down: only a real
                // connection or socket failure of the lookup itself does, in lookup()
                .timeout(LOOKUP_WAIT)
                .onErrorMap(e -> !(e instanceof AuthUnavailableException), e -> {
                    if (!(e instanceof TimeoutException) && !DatabaseErrors.unavailable(e)) {
                        LOG.error("key lookup for {} failed", parsed.prefix(), e);
                    }
                    return unavailable(parsed.prefix(), e);
                });
    }

    private AuthUnavailableException unavailable(String prefix, Throwable cause) {
        LOG.warn("cannot verify key {}: the database is unreachable{}", prefix,
                cause == null ? " (known down)" : " (" + cause + ")");
        return new AuthUnavailableException("The API key cannot be verified right now: the platform's database is "
                + "unreachable and this key was not used recently. Retry shortly.", DatabaseAvailability.COOLDOWN, cause);
    }

    /** Blocking: verifies the key against its row and caches the result. */
    private Optional<TenantPrincipal> lookup(ApiKeySecrets.Parsed parsed, String digest) {
        long epoch = cache.epoch();
        Optional<Verified> found = database.call(() -> readOnly.execute(status -> keys.findByPrefix(parsed.prefix())
                .filter(k -> !k.revoked())
                .filter(k -> ApiKeySecrets.matches(k.salt(), k.hash(), parsed.secret()))
                .flatMap(k -> current(k, parsed.prefix()))));
        found.ifPresent(v -> cache.put(digest, v.principal(), v.storedHash(), epoch));
        return found.map(Verified::principal);
    }

    /** The key's tenant, if active, with its limits now. */
    private Optional<Verified> current(ApiKey key, String prefix) {
        return tenants.findById(key.tenantId()).filter(Tenant::active)
                .map(t -> new Verified(new TenantPrincipal(t.id(), prefix, t.limits(), t.prefixCache()), key.hash()));
    }

    /**
     * Re-checks a cached key in the background (stale-while-revalidate): still the same row, not revoked, tenant
     * active, limits as they are now. Skipped while the database is known down; the entry then ages out at
     * {@link #MAX_STALE}.
     */
    private void reverifyLater(String digest, KeyCache.Entry cached) {
        if (!reverifying.add(digest)) {
            return;
        }
        if (database.refusing()) {
            reverifying.remove(digest);
            return;
        }
        try {
            reverifier.execute(() -> {
                try {
                    reverify(digest, cached);
                } finally {
                    reverifying.remove(digest);
                }
            });
        } catch (RuntimeException e) {
            reverifying.remove(digest); // queue full: try again on a later use
        }
    }

    private void reverify(String digest, KeyCache.Entry cached) {
        String prefix = cached.principal().keyPrefix();
        long epoch = cache.epoch();
        Optional<Verified> now;
        try {
            now = database.call(() -> readOnly.execute(status -> keys.findByPrefix(prefix)
                    .filter(k -> !k.revoked())
                    .filter(k -> MessageDigest.isEqual(k.hash(), cached.storedHash()))
                    .flatMap(k -> current(k, prefix))));
        } catch (RuntimeException e) {
            LOG.warn("could not re-verify key {} ({}); serving it from the cache for now", prefix, e.getMessage());
            return;
        }
        if (now.isPresent()) {
            cache.put(digest, now.get().principal(), now.get().storedHash(), epoch);
        } else {
            cache.remove(digest);
            LOG.info("key {} is no longer valid (revoked, or its tenant deactivated); dropped from the cache", prefix);
        }
    }
}
