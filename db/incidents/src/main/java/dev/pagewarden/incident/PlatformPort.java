package dev.pagewarden.incident;

import dev.pagewarden.core.safety.SafetyEvent;

import java.time.Instant;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.function.Consumer;

/**
 * What the admin UI needs from the running platform, implemented by the platform (admin-ui must not
 * depend on it). Every method may block; callers on the event loop use {@link Blocking}.
 */
public interface PlatformPort {

    /** The served model's API id, if a model is loaded. */
    Optional<String> servedModel();

    /** The engine's effective (advertised) context window in tokens; 0 without a model. */
    int contextWindow();

    /** One KV pool (worker) with its capacity and pages by state (lower-case state names). */
    record Pool(String worker, long capacityTokens, Map<String, Integer> pagesByState) {
    }

    List<Pool> pools();

    /** Engine counters: deferred releases by outcome, admission rejections by reason. */
    record Counters(Map<String, Double> deferredReleases, Map<String, Double> rejections) {
    }

    Counters counters();

    boolean isModelPrivate(String model);

    /** The operator's take-down switch (the tenant API answers 503 model_unavailable while private). */
    void setModelPrivate(String model, boolean makePrivate, String actor);

    /** This replica's node id: the node its engine's pools, safety events and lineage rows belong to. */
    String nodeId();

    /** Called on the detecting thread: subscribers must hand off, never block. */
    void onSafetyEvent(Consumer<SafetyEvent> subscriber);

    List<SafetyEvent> recentSafetyEvents();

    // tenants

    record Tenant(String id, String name, Instant createdAt, boolean active, Integer requestsPerMinute,
                  Integer tokensPerMinute, Integer maxConcurrent, Integer maxContext) {
    }

    record Key(String prefix, String name, Instant createdAt, Instant revokedAt) {
    }

    List<Tenant> tenants();

    Tenant createTenant(String name);

    /** The limits a new tenant starts with (the operator's settings); an admin may change them per tenant. */
    record NewTenantLimits(int maxConcurrent, int tokensPerMinute) {
    }

    NewTenantLimits newTenantLimits();

    /** Issues a key; the returned secret is shown once. */
    String issueKey(String tenantId, String name);

    List<Key> keys(String tenantId);

    void revokeKey(String tenantId, String prefix);

    /** Sets every limit and the fair-admission weight; a null limit is no limit. */
    Tenant setLimits(String tenantId, Integer requestsPerMinute, Integer tokensPerMinute, Integer maxConcurrent,
                     Integer maxContext, int weight);

    /**
     * A tenant's turn in fair admission on this replica: its weight, its requests waiting for admission now and the
     * tokens served to it (prompt and generated) since this replica started.
     */
    record TenantShare(int weight, int queued, long servedTokens) {
    }

    TenantShare share(String tenantId);

    // lab

    boolean labEnabled();

    /** Whether the incident-replay lab is installed in the platform (it is off unless also enabled). */
    boolean labInstalled();

    /** The names of the replay scenarios the lab knows, in the lab's order. */
    List<String> labScenarios();

    List<String> labFaults();

    /** Runs a replay scenario's traffic through the running engine; returns the scenario's own ground truth. */
    Map<String, Object> runLabReplay(String scenario) throws InterruptedException;
}
