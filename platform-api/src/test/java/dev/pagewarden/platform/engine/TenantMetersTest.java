package dev.pagewarden.platform.engine;

import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

class TenantMetersTest {

    @Test
    void onlyTheCappedNumberOfTenantsGetALabelTheRestAddUpUnderOther() {
        SimpleMeterRegistry registry = new SimpleMeterRegistry();
        TenantMeters meters = new TenantMeters(registry, 2);
        meters.queued("a", 3);
        meters.served("b", 10);
        meters.queued("c", 4);
        meters.queued("d", 5);
        meters.served("c", 7);
        meters.served("d", 8);
        meters.served("a", 1);

        assertThat(registry.find("engine.tenant.queue.depth").gauges()).extracting(g -> g.getId().getTag("tenant"))
                .containsExactlyInAnyOrder("a", "b", "other");
        assertThat(registry.get("engine.tenant.queue.depth").tag("tenant", "a").gauge().value()).isEqualTo(3);
        assertThat(registry.get("engine.tenant.queue.depth").tag("tenant", "other").gauge().value()).isEqualTo(9);
        assertThat(registry.find("engine.tenant.served.tokens").counters()).extracting(c -> c.getId().getTag("tenant"))
                .containsExactlyInAnyOrder("a", "b", "other");
        assertThat(registry.get("engine.tenant.served.tokens").tag("tenant", "other").counter().count()).isEqualTo(15);
        assertThat(registry.get("engine.tenant.served.tokens").tag("tenant", "b").counter().count()).isEqualTo(10);

        // the admin page still sees each tenant on its own
        assertThat(meters.queued("d")).isEqualTo(5);
        assertThat(meters.served("c")).isEqualTo(7);
        assertThat(meters.served("nobody")).isZero();

        meters.queued("d", 0);
        assertThat(registry.get("engine.tenant.queue.depth").tag("tenant", "other").gauge().value()).isEqualTo(4);
    }

    @Test
    void aCapOfZeroPutsEveryTenantUnderOther() {
        SimpleMeterRegistry registry = new SimpleMeterRegistry();
        TenantMeters meters = new TenantMeters(registry, 0);
        meters.served("a", 2);
        meters.queued("b", 1);
        assertThat(registry.getMeters()).extracting(m -> m.getId().getTag("tenant")).containsOnly("other");
    }
}
