package dev.pagewarden.platform.engine;

import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;
import org.springframework.beans.factory.annotation.Value;
import org.springframework.stereotype.Component;

import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.LongAdder;

/**
 * Each tenant's requests waiting for admission and tokens served (prompt and generated) on this replica:
 * {@code engine_tenant_queue_depth{tenant}} and {@code engine_tenant_served_tokens_total{tenant}}. Only the first
 * {@code pagewarden.metrics.tenant-labels-max} tenants seen get a label of their own; the others add up under
 * {@code tenant="other"}, so a platform with thousands of tenants does not grow thousands of series. The admin page
 * reads the exact numbers per tenant here.
 */
@Component
public class TenantMeters {
    /** The label the tenants beyond the cap share. */
    public static final String OTHER = "other";

    private final MeterRegistry registry;
    private final int maxLabels;
    private final Map<String, String> labels = new ConcurrentHashMap<>();
    /** Tenants with a label of their own; guarded by {@link #labels}. */
    private int ownLabels;
    private final Map<String, AtomicInteger> queued = new ConcurrentHashMap<>();
    private final Map<String, LongAdder> served = new ConcurrentHashMap<>();
    private final Map<String, Counter> servedCounters = new ConcurrentHashMap<>();

    TenantMeters(MeterRegistry registry, @Value("${pagewarden.metrics.tenant-labels-max:20}") int maxLabels) {
        if (maxLabels < 0) {
            throw new IllegalArgumentException("pagewarden.metrics.tenant-labels-max must be 0 or more, got " + maxLabels);
        }
        this.registry = registry;
        this.maxLabels = maxLabels;
    }

    /** {@code tenant} has {@code depth} requests waiting now. Called under the engine's admission lock: cheap. */
    void queued(String tenant, int depth) {
        queued.computeIfAbsent(tenant, t -> {
            label(t);
            return new AtomicInteger();
        }).set(depth);
    }

    /** {@code tokens} more were served to {@code tenant}. */
    void served(String tenant, long tokens) {
        served.computeIfAbsent(tenant, t -> new LongAdder()).add(tokens);
        servedCounters.computeIfAbsent(label(tenant), l -> Counter.builder("engine.tenant.served.tokens")
                .description("tokens served per tenant: prompt tokens at admission, generated tokens as sampled")
                .tag("tenant", l).register(registry)).increment(tokens);
    }

    /** Requests of {@code tenant} waiting for admission now. */
    public int queued(String tenant) {
        AtomicInteger q = queued.get(tenant);
        return q == null ? 0 : q.get();
    }

    /** Tokens served to {@code tenant} since this replica started. */
    public long served(String tenant) {
        LongAdder s = served.get(tenant);
        return s == null ? 0 : s.sum();
    }

    /** The label {@code tenant}'s series carry: its own while fewer than the cap have one, else {@link #OTHER}. */
    private String label(String tenant) {
        String known = labels.get(tenant);
        if (known != null) {
            return known;
        }
        synchronized (labels) {
            String label = labels.get(tenant);
            if (label == null) {
                label = ownLabels < maxLabels ? tenant : OTHER;
                if (label.equals(tenant)) {
                    ownLabels++;
                }
                String l = label;
                // registering an existing gauge again returns it: "other" is registered once
                Gauge.builder("engine.tenant.queue.depth", this, m -> m.depth(l))
                        .description("requests waiting for admission per tenant").tag("tenant", l).register(registry);
                labels.put(tenant, label);
            }
            return label;
        }
    }

    private double depth(String label) {
        return queued.entrySet().stream().filter(e -> label.equals(labels.get(e.getKey())))
                .mapToInt(e -> e.getValue().get()).sum();
    }
}
