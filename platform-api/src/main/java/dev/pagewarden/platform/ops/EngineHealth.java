package dev.pagewarden.platform.ops;

import dev.pagewarden.platform.completion.Draining;
import dev.pagewarden.platform.engine.EngineHost;
import org.springframework.boot.health.contributor.Health;
import org.springframework.boot.health.contributor.HealthIndicator;
import org.springframework.stereotype.Component;

/** Ready to serve: a model is loaded, its engine passed the capacity check at start, and admission is open. */
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
        Health.Builder b = draining.active() ? Health.outOfService().withDetail("reason", "shutting down") : Health.up();
        return b.withDetail("model", m.id())
                .withDetail("backend", m.engine().backendName())
                .withDetail("context_window", m.contextWindow())
                .withDetail("capacity_check", "passed: the window fits both KV pools")
                .withDetail("prefill_pool_tokens", m.engine().prefillPool().capacityTokens())
                .withDetail("decode_pool_tokens", m.engine().decodePool().capacityTokens())
                .withDetail("queued", m.engine().queued())
                .build();
    }
}
