package dev.pagewarden.lab;

import dev.pagewarden.core.model.load.LoadedModel;
import dev.pagewarden.core.model.load.ModelLoader;
import dev.pagewarden.core.testing.TestModels;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import dev.pagewarden.core.sampling.SamplingParams;
import java.util.SplittableRandom;

import dev.pagewarden.core.lineage.LineageEvent;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeSet;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Every scenario of the incident-replay lab against its expectation: clean is clean; with the
 * detectors on a fault exposes nobody; with them off the same fault really exposes (or corrupts),
 * which proves the fault is real and that the detectors are what stopped it.
 */
class ReplayLabTest {
    static LoadedModel model;
    static final Map<String, ReplayLab.Result> results = new LinkedHashMap<>();

    @BeforeAll
    static void runAll() throws Exception {
        model = ModelLoader.load(TestModels.stories260K(), TestModels.tok512());
        ReplayLab lab = new ReplayLab(model, 2026);
        for (ReplayLab.Scenario s : ReplayLab.scenarios()) {
            ReplayLab.Result r = lab.run(s);
            System.out.println(ReplayLab.row(r));
            results.put(s.name(), r);
        }
    }

    @AfterAll
    static void close() {
        if (model != null) {
            model.close();
        }
    }

    /**
     * The normal waves every scenario sends mix greedy, penalised, seeded and JSON-constrained requests, so "every
     * delivered output equals its isolated run" covers them all.
     */
    @Test
    void normalTrafficMixesPenalisedSeededAndConstrainedRequests() {
        List<SamplingParams> kinds = new ReplayLab(model, 2026).workload().normalWave(new SplittableRandom(1), 3).stream()
                .map(LabWorkload.Planned::sampling).toList();
        assertThat(kinds).anyMatch(p -> p.isGreedy() && p.constraint() == null && p.logitBias().isEmpty() && p.presencePenalty() == 0f);
        assertThat(kinds).anyMatch(p -> p.isGreedy() && p.presencePenalty() != 0f && !p.logitBias().isEmpty());
        assertThat(kinds).anyMatch(p -> !p.isGreedy() && p.topK() > 0 && p.minP() > 0f);
        assertThat(kinds).anyMatch(p -> p.constraint() != null);
    }

    @Test
    void cleanScenarioHasNoExposureRejectsOverCapacityAndReturnsEveryPage() {
        ReplayLab.Result r = results.get("clean");
        assertThat(r.served()).isPositive();
        assertThat(r.outputMismatches()).isZero();
        assertThat(r.crossTenantReads()).isZero();
        assertThat(r.exposedRequests()).isZero();
        assertThat(r.detectedRequests()).isZero();
        assertThat(r.detectors()).isEmpty();
        assertThat(r.overCapacityRejected()).isEqualTo(r.overCapacitySubmitted()).isPositive();
        assertThat(r.poolsFreeAtEnd()).isTrue();
        assertThat(r.served() + r.rejected() + r.aborted() + r.failed()).isEqualTo(r.submitted());
    }

    @Test
    void withDetectorsOnNoFaultExposesAnyone() {
        for (ReplayLab.Result r : results.values()) {
            if (r.name().endsWith("-undetected") || r.name().equals("clean") || r.name().equals("preemption")
                    || r.name().equals("prefix-reuse")) {
                continue; // no fault to see
            }
            assertThat(r.exposedRequests()).as(r.name()).isZero();
            assertThat(r.undetectedExposedRequests()).as(r.name()).isZero();
            assertThat(r.outputMismatches()).as(r.name() + ": every delivered output equals its isolated run").isZero();
            assertThat(r.detectedRequests()).as(r.name() + ": the fault was seen").isPositive();
            assertThat(r.crossTenantReads()).as(r.name() + ": no foreign data was read").isZero();
            assertThat(r.poolsFreeAtEnd()).as(r.name()).isTrue();
        }
    }

    @Test
    void preemptionUnderAFullDecodePoolExposesNobodyAndChangesNoOutput() {
        ReplayLab.Result r = results.get("preemption");
        assertThat(r.preemptions()).as("the small decode pool ran out").isPositive();
        assertThat(r.served()).isPositive();
        assertThat(r.failed()).as("nobody preempted too often").isZero();
        assertThat(r.outputMismatches()).as("every delivered output equals its isolated run").isZero();
        assertThat(r.crossTenantReads()).isZero();
        assertThat(r.exposedRequests()).isZero();
        assertThat(r.detectedRequests()).isZero();
        assertThat(r.detectors()).isEmpty();
        assertThat(r.overCapacityRejected()).isEqualTo(r.overCapacitySubmitted()).isPositive();
        assertThat(r.poolsFreeAtEnd()).isTrue();
        assertThat(r.served() + r.rejected() + r.aborted() + r.failed()).isEqualTo(r.submitted());
        assertThat(r.toJson()).containsEntry("preemptions", r.preemptions());
        assertThat(results.get("clean").toJson()).doesNotContainKey("preemptions");
    }

    @Test
    void withDetectorsOffTheSameFaultsReallyExposeOrCorrupt() {
        assertThat(results.get("incident-2026-undetected").exposedRequests()).isPositive();
        assertThat(results.get("incident-2026-undetected").foreignContent()).isNotEmpty();
        assertThat(results.get("drop-transfer-page-undetected").exposedRequests()).isPositive();
        assertThat(results.get("abort-during-transfer-undetected").crossTenantReads()).isPositive();
        assertThat(results.get("corrupt-transfer-byte-undetected").outputMismatches()).isPositive();
        for (ReplayLab.Result r : results.values()) {
            if (r.name().endsWith("-undetected")) {
                assertThat(r.detectors()).as(r.name() + ": detectors were off").isEmpty();
                assertThat(r.undetectedExposedRequests()).isEqualTo(r.exposedRequests());
            }
        }
    }

    @Test
    void theIncidentScenarioIsTheOriginalBugAndIsStoppedAtTheHandoff() {
        ReplayLab.Result on = results.get("incident-2026");
        assertThat(on.faults()).contains("skip-capacity-check", "legacy-finished-check");
        assertThat(on.detectors()).containsKey("transfer-incomplete");
        assertThat(on.failed()).isEqualTo(on.overCapacitySubmitted());
    }

    @Test
    void heavyPrefixReuseInsideEachTenantExposesNobodyAndChangesNoOutput() throws Exception {
        ReplayLab.Result r = results.get("prefix-reuse");
        assertThat(r.reusedPromptTokens()).as("cached prompt pages were reused").isGreaterThanOrEqualTo(20L * 16);
        assertThat(r.served()).isEqualTo(r.submitted());
        assertThat(r.outputMismatches()).as("a hit's output equals the same request alone, cache off").isZero();
        assertThat(r.crossTenantReads()).isZero();
        assertThat(r.exposedRequests()).isZero();
        assertThat(r.detectedRequests()).isZero();
        assertThat(r.detectors()).isEmpty();
        assertThat(r.poolsFreeAtEnd()).isTrue();
        assertThat(r.toJson()).containsEntry("reused_prompt_tokens", r.reusedPromptTokens());
        assertThat(results.get("clean").toJson()).doesNotContainKey("reused_prompt_tokens");

        // the lineage: every REUSE reads a page epoch that was cached in the reader's own scope, by its tenant
        List<LineageEvent> events = java.util.Collections.synchronizedList(new ArrayList<>());
        ReplayLab.Result again = new ReplayLab(model, 2026).run(ReplayLab.scenario("prefix-reuse"), events::add);
        assertThat(again.toJson()).isEqualTo(r.toJson());
        Map<String, LineageEvent> cached = new HashMap<>();
        List<LineageEvent> reuses = new ArrayList<>();
        for (LineageEvent e : events) {
            switch (e.kind()) {
                case CACHE -> cached.put(e.page() + "@" + e.epoch(), e);
                case REUSE -> reuses.add(e);
                default -> { }
            }
        }
        assertThat(reuses).hasSizeGreaterThanOrEqualTo(20);
        TreeSet<String> reusingTenants = new TreeSet<>();
        reuses.forEach(e -> reusingTenants.add(e.tenant()));
        assertThat(reusingTenants).as("every tenant reused its pages").isEqualTo(new TreeSet<>(LabWorkload.TENANTS.keySet()));
        for (LineageEvent reuse : reuses) {
            LineageEvent cache = cached.get(reuse.page() + "@" + reuse.epoch());
            assertThat(cache).as("REUSE %s reads a cached page epoch", reuse).isNotNull();
            assertThat(reuse.peerEpoch()).as("same scope digest").isEqualTo(cache.peerEpoch());
            assertThat(reuse.tenant()).isEqualTo(cache.tenant());
        }
        // acme and globex send the same system prompt, each from its own cached pages
        assertThat(reuses.stream().filter(e -> e.tenant().equals("globex"))).isNotEmpty();
    }

    @Test
    void aLookupThatIgnoresTheScopeIsRefusedByTheReadCheckAndExposesWithoutIt() {
        ReplayLab.Result on = results.get("prefix-cross-scope");
        assertThat(on.faults()).containsExactly("ignore-cache-scope");
        assertThat(on.detectors()).containsOnlyKeys("owner-tag-mismatch");
        assertThat(on.detectedRequests()).isPositive().isEqualTo(on.failed());
        assertThat(on.crossTenantReads()).isZero();

        ReplayLab.Result off = results.get("prefix-cross-scope-undetected");
        assertThat(off.crossTenantReads()).isPositive();
        assertThat(off.crossTenantReaders()).hasSize(on.detectedRequests());
        // the shared system prompt: globex reads acme's cached pages, nobody else crosses
        assertThat(off.foreignReads()).isNotEmpty().allSatisfy(f -> {
            assertThat(f.readerTenant()).isEqualTo("globex");
            assertThat(f.writerTenant()).isEqualTo("acme");
        });
        assertThat(off.exposedRequests()).isEqualTo(off.crossTenantReaders().size());
        assertThat(off.outputMismatches()).as("the same tokens give the same KV: the leak is silent").isZero();
    }
}
