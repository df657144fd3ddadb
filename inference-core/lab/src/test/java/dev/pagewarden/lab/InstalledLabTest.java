package dev.pagewarden.lab;

import dev.pagewarden.core.engine.Engine;
import dev.pagewarden.core.engine.EngineConfig;
import dev.pagewarden.core.faultlab.FaultLab;
import dev.pagewarden.core.faultlab.LabEngine;
import dev.pagewarden.core.faultlab.Replay;
import dev.pagewarden.core.faultlab.ReplayTarget;
import dev.pagewarden.core.model.load.LoadedModel;
import dev.pagewarden.core.model.load.ModelLoader;
import dev.pagewarden.core.testing.TestModels;
import dev.pagewarden.core.tokenizer.Tokenizer;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/** The lab as an application finds it through the engine's SPI, and a replay through an engine it did not build. */
class InstalledLabTest {
    static LoadedModel model;

    @BeforeAll
    static void load() {
        model = ModelLoader.load(TestModels.stories260K(), TestModels.tok512());
    }

    @AfterAll
    static void close() {
        if (model != null) {
            model.close();
        }
    }

    private static FaultLab lab() {
        return FaultLab.load(InstalledLabTest.class.getClassLoader()).orElseThrow();
    }

    @Test
    void theServiceFileNamesTheLab() {
        assertThat(FaultLab.installed(InstalledLabTest.class.getClassLoader())).isTrue();
        assertThat(lab()).isInstanceOf(InstalledLab.class);
    }

    @Test
    void scenariosAndTheirFaultsAreTheReplayLabs() {
        FaultLab lab = lab();
        assertThat(lab.scenarios()).isEqualTo(ReplayLab.scenarios().stream().map(ReplayLab.Scenario::name).toList());
        assertThat(lab.scenarioFaults("incident-2026")).containsExactly("legacy-finished-check", "skip-capacity-check");
        assertThatThrownBy(() -> lab.scenarioFaults("no-such")).isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("unknown scenario 'no-such'");
        assertThat(lab.tenants()).containsExactly("acme", "globex", "initech", "umbrella");
    }

    @Test
    void engineFaultsAreParsedAndReachTheHooks() {
        FaultLab lab = lab();
        assertThatThrownBy(() -> lab.engine(List.of("no-such-fault"))).isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("unknown lab fault 'no-such-fault'");
        LabEngine off = lab.engine(List.of("detectors-off", " skip-capacity-check"));
        assertThat(off.faults()).containsExactly("skip-capacity-check", "detectors-off");
        assertThat(off.hooks().checksOn()).isFalse();
        assertThat(off.hooks().observesSteps()).as("the oracle watches every step").isTrue();
        LabEngine none = lab.engine(List.of());
        assertThat(none.faults()).isEmpty();
        assertThat(none.hooks().checksOn()).isTrue();
    }

    @Test
    void replayThroughARunningEngineReportsEveryRequestAndTheOraclesTruth() throws Exception {
        FaultLab lab = lab();
        Replay clean = replay(lab, "clean", 192);
        assertThat(clean.truth().get("exposed_requests")).isEqualTo(0);
        assertThat(clean.truth().get("cross_tenant_reader_ids")).isEqualTo(List.of());
        assertThat(clean.requests()).anyMatch(r -> r.outcome() == Replay.Outcome.REJECTED)
                .anyMatch(r -> r.outcome() == Replay.Outcome.SERVED);

        Replay incident = replay(lab, "incident-2026-undetected", 320);
        assertThat((List<?>) incident.truth().get("cross_tenant_reader_ids")).as("the 2026 fault really exposes").isNotEmpty();
        assertThat((List<?>) incident.truth().get("reader_tenants")).isNotEmpty()
                .allSatisfy(t -> assertThat((String) t).startsWith("id-"));
    }

    private static Replay replay(FaultLab lab, String scenario, int window) throws InterruptedException {
        LabEngine labEngine = lab.engine(lab.scenarioFaults(scenario));
        EngineConfig cfg = EngineConfig.builder().backend("cpu").pageTokens(ReplayLab.PAGE_TOKENS)
                .poolTokens(ReplayLab.PREFILL_POOL_TOKENS, ReplayLab.DECODE_POOL_TOKENS).contextWindow(window).build();
        Tokenizer tokenizer = new Tokenizer(model.vocabulary());
        Map<String, String> ids = new LinkedHashMap<>();
        lab.tenants().forEach(t -> ids.put(t, "id-" + t));
        try (Engine engine = Engine.builder(model, cfg).faultHooks(labEngine.hooks()).build()) {
            Replay r = labEngine.replay(scenario, new ReplayTarget(engine, text -> tokenizer.encode(text, true, false), ids));
            Map<String, Object> truth = r.truth();
            assertThat(truth.get("scenario")).isEqualTo(scenario);
            assertThat(truth.get("submitted")).isEqualTo(r.requests().size());
            assertThat((int) truth.get("served") + (int) truth.get("rejected") + (int) truth.get("failed"))
                    .isEqualTo(r.requests().size());
            assertThat(r.requests()).allSatisfy(s -> assertThat(ids.values()).contains(s.tenantId()));
            assertThat(r.requests().stream().filter(s -> s.outcome() == Replay.Outcome.SERVED).count())
                    .isEqualTo(((Integer) truth.get("served")).longValue());
            return r;
        }
    }
}
