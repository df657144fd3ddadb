package dev.pagewarden.core.engine;

import dev.pagewarden.lab.LabFaults;
import dev.pagewarden.core.request.GenerationRequest;
import dev.pagewarden.core.request.TokenListener;
import dev.pagewarden.core.safety.SafetyEvent;
import dev.pagewarden.core.sampling.SamplingParams;
import dev.pagewarden.core.spi.Clock;
import dev.pagewarden.core.testing.IsolationFixtures;
import dev.pagewarden.core.testing.IsolationFixtures.CountingMetrics;
import dev.pagewarden.core.testing.RealModelTest;
import org.junit.jupiter.api.Test;

import java.time.Duration;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;

import static dev.pagewarden.core.testing.IsolationFixtures.eventually;
import static org.assertj.core.api.Assertions.assertThat;

/** The known-answer canary runs alongside real traffic and says so when its answer changes. */
class CanaryTest extends RealModelTest {

    static void traffic(Engine e, int requests) throws Exception {
        for (int i = 0; i < requests; i++) {
            e.submit(new GenerationRequest("tenant-" + (i % 3), IsolationFixtures.prompt(20 + 7 * i, i), 24,
                    SamplingParams.greedy()), TokenListener.NONE).result().get(60, TimeUnit.SECONDS);
        }
    }

    @Test
    void onAHealthyEngineTheCanaryKeepsPassingUnderTraffic() throws Exception {
        CountingMetrics metrics = new CountingMetrics();
        List<SafetyEvent> events = new CopyOnWriteArrayList<>();
        EngineConfig cfg = EngineConfig.builder().backend("cpu").canaryInterval(Duration.ofMillis(20)).build();
        try (Engine e = Engine.builder(model, cfg).metrics(metrics).safety(events::add).build()) {
            traffic(e, 6);
            assertThat(eventually(20_000, () -> metrics.get("canary:pass") >= 3)).as("canary checks ran").isTrue();
        }
        assertThat(metrics.get("canary:fail")).isZero();
        assertThat(events).noneMatch(ev -> ev.type() == SafetyEvent.Type.CANARY_MISMATCH);
    }

    @Test
    void whenPagesAreNotWhatTheyShouldBeTheCanaryFires() throws Exception {
        // Lab: a dropped transfer page that nobody checks. The canary's last prompt page is then
        // whatever the pool page held before - other requests' KV once traffic has run.
        CountingMetrics metrics = new CountingMetrics();
        List<SafetyEvent> events = new CopyOnWriteArrayList<>();
        EngineConfig cfg = EngineConfig.builder().backend("cpu").canaryInterval(Duration.ofMillis(20)).build();
        try (Engine e = Engine.builder(model, cfg).metrics(metrics).safety(events::add)
                .faultHooks(LabFaults.parse(List.of("drop-transfer-page", "detectors-off")).hooks(null)).build()) {
            traffic(e, 6);
            assertThat(eventually(20_000, () -> metrics.get("canary:fail") >= 1)).as("canary failed at least once").isTrue();
        }
        assertThat(events).anySatisfy(ev -> {
            assertThat(ev.type()).isEqualTo(SafetyEvent.Type.CANARY_MISMATCH);
            assertThat(ev.severity()).isEqualTo(SafetyEvent.Severity.CRITICAL);
            assertThat(ev.details()).contains("golden");
        });
    }
}
