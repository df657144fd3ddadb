package dev.pagewarden.platform.adminport;

import dev.pagewarden.incident.PlatformPort;
import dev.pagewarden.core.engine.InferenceEngine;
import dev.pagewarden.core.engine.PoolStats;
import dev.pagewarden.core.safety.SafetyEvent;
import dev.pagewarden.platform.audit.SafetyEventRecorder;
import dev.pagewarden.platform.config.PagewardenProperties;
import dev.pagewarden.platform.engine.EngineHost;
import dev.pagewarden.platform.engine.ServedModel;
import dev.pagewarden.platform.engine.TenantMeters;
import dev.pagewarden.platform.tenant.TenantLimits;
import dev.pagewarden.platform.tenant.TenantService;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.MeterRegistry;
import org.springframework.stereotype.Component;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;
import java.util.TreeMap;
import java.util.function.Consumer;

/** {@link PlatformPort} over the platform's own services: no logic of its own beyond translation. */
@Component
class PlatformAdapter implements PlatformPort {
    private final EngineHost host;
    private final SafetyEventRecorder safety;
    private final TenantService tenants;
    private final MeterRegistry registry;
    private final PagewardenProperties properties;
    private final LabReplayRunner lab;
    private final TenantMeters tenantMeters;

    PlatformAdapter(EngineHost host, SafetyEventRecorder safety, TenantService tenants, MeterRegistry registry,
                    PagewardenProperties properties, LabReplayRunner lab, TenantMeters tenantMeters) {
        this.tenantMeters = tenantMeters;
        this.host = host;
        this.safety = safety;
        this.tenants = tenants;
        this.registry = registry;
        this.properties = properties;
        this.lab = lab;
    }

    @Override
    public String nodeId() {
        return safety.node();
    }

    @Override
    public Optional<String> servedModel() {
        return host.served().map(ServedModel::id);
    }

    @Override
    public int contextWindow() {
        return host.served().map(s -> s.engine().contextWindow()).orElse(0);
    }

    @Override
    public List<Pool> pools() {
        List<Pool> out = new ArrayList<>();
        host.served().ifPresent(s -> {
            InferenceEngine engine = s.engine();
            for (PoolStats pool : engine.pools()) {
                out.add(new Pool(pool.name(), pool.capacityTokens(), pool.pagesByState()));
            }
        });
        return out;
    }

    @Override
    public Counters counters() {
        return new Counters(byTag("kv.deferred.release", "outcome"), byTag("kv.admission.rejections", "reason"));
    }

    private Map<String, Double> byTag(String name, String tag) {
        Map<String, Double> out = new TreeMap<>();
        for (Counter c : registry.find(name).counters()) {
            out.merge(String.valueOf(c.getId().getTag(tag)), c.count(), Double::sum);
        }
        return out;
    }

    @Override
    public boolean isModelPrivate(String model) {
        return host.isPrivate(model);
    }

    @Override
    public void setModelPrivate(String model, boolean makePrivate, String actor) {
        try {
            host.setPrivate(model, makePrivate, actor);
        } catch (dev.pagewarden.platform.error.ApiException e) {
            throw new IllegalArgumentException(e.getMessage(), e);
        }
    }

    @Override
    public void onSafetyEvent(Consumer<SafetyEvent> subscriber) {
        safety.subscribe(subscriber);
    }

    @Override
    public List<SafetyEvent> recentSafetyEvents() {
        return safety.recent();
    }

    @Override
    public List<PlatformPort.Tenant> tenants() {
        return tenants.list().stream().map(PlatformAdapter::view).toList();
    }

    @Override
    public NewTenantLimits newTenantLimits() {
        return new NewTenantLimits(tenants.defaults().maxConcurrent(), tenants.defaults().tokensPerMinute());
    }

    @Override
    public PlatformPort.Tenant createTenant(String name) {
        return view(tenants.create(name));
    }

    @Override
    public String issueKey(String tenantId, String name) {
        return unknownTenant(() -> tenants.issueKey(tenantId, name).key());
    }

    @Override
    public List<Key> keys(String tenantId) {
        return unknownTenant(() -> tenants.keys(tenantId).stream()
                .map(k -> new Key(k.prefix(), k.name(), k.createdAt(), k.revokedAt())).toList());
    }

    @Override
    public void revokeKey(String tenantId, String prefix) {
        unknownTenant(() -> {
            tenants.revokeKey(tenantId, prefix);
            return null;
        });
    }

    @Override
    public PlatformPort.Tenant setLimits(String tenantId, Integer rpm, Integer tpm, Integer concurrent, Integer context,
                                         int weight) {
        return unknownTenant(() -> view(tenants.setLimits(tenantId, new TenantLimits(rpm, tpm, concurrent, context,
                weight))));
    }

    @Override
    public TenantShare share(String tenantId) {
        int weight = unknownTenant(() -> tenants.get(tenantId).limits().weight());
        return new TenantShare(weight, tenantMeters.queued(tenantId), tenantMeters.served(tenantId));
    }

    @Override
    public boolean labEnabled() {
        return properties.lab().enabled();
    }

    @Override
    public boolean labInstalled() {
        return lab.installed();
    }

    @Override
    public List<String> labScenarios() {
        return lab.scenarios();
    }

    @Override
    public List<String> labFaults() {
        return properties.lab().faults();
    }

    @Override
    public Map<String, Object> runLabReplay(String scenario) throws InterruptedException {
        return lab.run(scenario);
    }

    /** The UI reports unknown tenants as bad input (400 with the reason). */
    private static <T> T unknownTenant(java.util.function.Supplier<T> call) {
        try {
            return call.get();
        } catch (dev.pagewarden.platform.tenant.UnknownTenantException e) {
            throw new java.util.NoSuchElementException(e.getMessage());
        }
    }

    private static PlatformPort.Tenant view(dev.pagewarden.platform.tenant.Tenant t) {
        TenantLimits l = t.limits();
        return new PlatformPort.Tenant(t.id(), t.displayName(), t.createdAt(), t.active(), l.requestsPerMinute(),
                l.tokensPerMinute(), l.maxConcurrent(), l.maxContext());
    }

}
