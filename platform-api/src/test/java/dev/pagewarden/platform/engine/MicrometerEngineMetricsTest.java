package dev.pagewarden.platform.engine;

import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

/** The engine's preemptions reach the registry as kv_preemptions_total{outcome}. */
class MicrometerEngineMetricsTest {

    @Test
    void preemptionsAreCountedByOutcome() {
        SimpleMeterRegistry registry = new SimpleMeterRegistry();
        MicrometerEngineMetrics metrics = new MicrometerEngineMetrics(registry, new TenantMeters(registry, 20));
        metrics.preemption("requeued");
        metrics.preemption("requeued");
        metrics.preemption("preempted_too_often");
        assertThat(registry.get("kv.preemptions").tag("outcome", "requeued").counter().count()).isEqualTo(2.0);
        assertThat(registry.get("kv.preemptions").tag("outcome", "preempted_too_often").counter().count()).isEqualTo(1.0);
    }
}
