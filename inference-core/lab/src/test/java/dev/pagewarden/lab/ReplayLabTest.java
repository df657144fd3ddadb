package dev.pagewarden.lab;

import dev.pagewarden.core.model.load.LoadedModel;
import dev.pagewarden.core.model.load.ModelLoader;
import dev.pagewarden.core.testing.TestModels;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

import java.util.LinkedHashMap;
import java.util.Map;

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
            if (r.name().endsWith("-undetected") || r.name().equals("clean") || r.name().equals("preemption")) {
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
}
