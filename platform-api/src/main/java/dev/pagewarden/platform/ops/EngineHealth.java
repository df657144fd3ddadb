package dev.pagewarden.platform.ops;

import dev.pagewarden.platform.completion.Draining;
import dev.pagewarden.platform.engine.EngineHost;
import org.springframework.boot.health.contributor.Health;
import org.springframework.boot.health.contributor.HealthIndicator;
import org.springframework.stereotype.Component;

/**
 * Ready to serve: a model is loaded, its engine passed the capacity check at start, and admission is open; with
 * engine nodes, a prefill and a decode node are both up (each checked its own capacity at its start).
 */
@Component("engine")
class EngineHealth implements HealthIndicator {
    private final EngineHost host;
    private final Draining draining;

    EngineHealth(EngineHost host, Draining draining) {
        this.host = host;
        this.draining = draining;
    }

    @Override
    public Health health() {
        if (host.served().isEmpty()) {
            return Health.down().withDetail("reason", host.unavailableReason()).build();
        }
        var m = host.served().get();
        boolean nodes = host.servesFromNodes();
        Health.Builder b = draining.active() ? Health.outOfService().withDetail("reason", "shutting down")
                : nodes && m.contextWindow() == 0
                ? Health.down().withDetail("reason", "no prefill node and decode node are both up")
                : Health.up();
        return b.withDetail("model", m.id())
                .withDetail("backend", m.engine().backendName())
                .withDetail("context_window", m.contextWindow())
                .withDetail("capacity_check", nodes ? "checked by each engine node at its start"
                        : "passed: the window fits both KV pools")
                .withDetail("prefill_pool_tokens", m.engine().prefillPool().capacityTokens())
                .withDetail("decode_pool_tokens", m.engine().decodePool().capacityTokens())
                .withDetail("queued", m.engine().queued())
                .build();
    }
}
