package dev.pagewarden.core.engine;

import dev.pagewarden.core.testing.RealModelTest;
import dev.pagewarden.core.kv.KvLayout;
import dev.pagewarden.lab.LabFaults;
import dev.pagewarden.lab.LabHooks;
import dev.pagewarden.core.policy.AbortRelease;
import dev.pagewarden.core.policy.CapacityCheck;
import dev.pagewarden.core.policy.PromptOverflow;
import dev.pagewarden.core.request.FinishReason;
import dev.pagewarden.core.request.GenerationRequest;
import dev.pagewarden.core.request.GroundTruth;
import dev.pagewarden.core.request.RequestAbortedException;
import dev.pagewarden.core.request.RequestHandle;
import dev.pagewarden.core.request.RequestRejectedException;
import dev.pagewarden.core.request.RequestState;
import dev.pagewarden.core.sequence.Sequence;
import dev.pagewarden.core.request.TokenListener;
import dev.pagewarden.core.safety.SafetyEvent;
import dev.pagewarden.core.sampling.SamplingParams;
import dev.pagewarden.core.testing.IsolationFixtures;
import dev.pagewarden.core.testing.IsolationFixtures.CountingMetrics;
import dev.pagewarden.core.testing.IsolationFixtures.Events;
import org.junit.jupiter.api.Test;

import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;

import static dev.pagewarden.core.testing.IsolationFixtures.prompt;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/** Invariants 3 and 8: rejection happens before any page or transfer; the window never exceeds the pools. */
class LifecycleAndCapacityTest extends RealModelTest {



    @Test
    void aRejectedRequestNeverReservesAPageNorReachesATransfer() throws Exception {
        CountingMetrics metrics = new CountingMetrics();
        Events events = new Events();
        try (Engine e = Engine.builder(model, EngineConfig.builder().backend("cpu").build()).metrics(metrics).safety(events).build()) {
            RequestHandle h = e.submit(new GenerationRequest("t", prompt(500, 1), 13, SamplingParams.greedy()),
                    TokenListener.NONE);
            assertThat(h.result()).as("rejected synchronously").isCompletedExceptionally();
            assertThatThrownBy(() -> h.result().get(0, TimeUnit.SECONDS)).cause()
                    .isInstanceOfSatisfying(RequestRejectedException.class,
                            r -> assertThat(r.code()).isEqualTo("context_length_exceeded"));
            assertThat(h.state()).isInstanceOf(RequestState.Rejected.class);
            assertThat(GroundTruth.decodePages(h)).isEmpty();
            assertThat(e.decodeKv().peakUsedPages()).isZero();
            assertThat(e.prefillKv().peakUsedPages()).isZero();
            assertThat(e.transfersInFlight()).isZero();
            assertThat(e.queued()).isZero();
            assertThat(metrics.get("rejected:context_length_exceeded")).isEqualTo(1);
            assertThat(metrics.get("prefillChunk")).as("no prefill ran").isZero();
            assertThat(events.all()).isEmpty();
            // the engine still serves a request that fits
            assertThat(e.submit(new GenerationRequest("t", prompt(10, 1), 5, SamplingParams.greedy()), TokenListener.NONE)
                    .result().get(60, TimeUnit.SECONDS).outputTokens()).isNotEmpty();
        }
    }

    @Test
    void anAbortedRequestCanNeverBeReservedTransferredOrDecoded() {
        Sequence seq = new Sequence(1, new GenerationRequest("t", prompt(5, 1), 3, SamplingParams.greedy()),
                TokenListener.NONE, 0);
        seq.moveTo(new RequestState.Admitted());
        seq.requestAbort("gone");
        seq.abortNow();
        assertThat(seq.result()).isCompletedExceptionally();
        for (RequestState next : List.of(new RequestState.Reserved(), new RequestState.Prefilling(),
                new RequestState.Transferring(), new RequestState.Ready(), new RequestState.Decoding(),
                new RequestState.Admitted())) {
            assertThatThrownBy(() -> seq.moveTo(next)).as("Aborted -> " + next).isInstanceOf(IllegalStateException.class)
                    .hasMessageContaining("Aborted");
        }
        assertThatThrownBy(() -> seq.finish(FinishReason.STOP, 0)).isInstanceOf(IllegalStateException.class);
        assertThatThrownBy(() -> seq.reject("x", "y")).isInstanceOf(IllegalStateException.class);
        assertThatThrownBy(seq::abortNow).as("no second terminal state").isInstanceOf(IllegalStateException.class);
    }

    @Test
    void aRequestAbortedWhileWaitingForPagesNeverGetsAny() throws Exception {
        CountingMetrics metrics = new CountingMetrics();
        CountDownLatch holderRunning = new CountDownLatch(1);
        CountDownLatch letGo = new CountDownLatch(1);
        // whole reservations: the holder's 60 tokens leave no room for the next request
        try (Engine e = Engine.builder(model, EngineConfig.builder().backend("cpu").contextWindow(64).poolTokens(64, 64)
                .decodeHeadroomPages(EngineConfig.FULL_RESERVATION).build()).metrics(metrics).safety(new Events()).build()) {
            RequestHandle holder = e.submit(new GenerationRequest("a", prompt(10, 1), 50, SamplingParams.greedy()),
                    (id, tok) -> {
                        holderRunning.countDown();
                        try {
                            letGo.await(30, TimeUnit.SECONDS);
                        } catch (InterruptedException ex) {
                            Thread.currentThread().interrupt();
                        }
                    });
            assertThat(holderRunning.await(30, TimeUnit.SECONDS)).isTrue();
            int chunksBefore = metrics.get("prefillChunk");
            RequestHandle waiting = e.submit(new GenerationRequest("b", prompt(10, 2), 40, SamplingParams.greedy()),
                    TokenListener.NONE);
            assertThat(waiting.state()).isInstanceOf(RequestState.Admitted.class);
            waiting.abort("changed my mind");
            assertThat(waiting.result()).isCompletedExceptionally();
            assertThat(waiting.state()).isInstanceOf(RequestState.Aborted.class);
            letGo.countDown();
            holder.result().get(60, TimeUnit.SECONDS);
            assertThat(GroundTruth.decodePages(waiting)).isEmpty();
            assertThat(metrics.get("prefillChunk")).as("the aborted request was never prefilled").isEqualTo(chunksBefore);
            assertThatThrownBy(() -> waiting.result().get(0, TimeUnit.SECONDS)).isInstanceOf(ExecutionException.class)
                    .hasCauseInstanceOf(RequestAbortedException.class);
            ContinuousBatchingTest.assertAllFree(e.decodeKv());
        }
    }

    @Test
    void strictPolicyRefusesToStartNamingBothNumbers() {
        assertThatThrownBy(() -> Engine.builder(model, EngineConfig.builder().backend("cpu").poolTokens(1024, 256).build()).build())
                .isInstanceOf(IllegalStateException.class)
                .hasMessageContaining("configured context window 512").hasMessageContaining("decode-0 256 tokens")
                .hasMessageContaining("strict");
    }

    @Test
    void clampPolicyStartsWithTheLoweredWindowAndEnforcesIt() throws Exception {
        Events events = new Events();
        CountingMetrics metrics = new CountingMetrics();
        try (Engine e = Engine.builder(model, EngineConfig.builder().backend("cpu").poolTokens(96, 1024)
                .capacityPolicy(CapacityPolicy.CLAMP).build()).metrics(metrics).safety(events).build()) {
            assertThat(e.contextWindow()).isEqualTo(96);
            assertThat(events.of(SafetyEvent.Type.CAPACITY_CLAMPED)).singleElement()
                    .satisfies(ev -> assertThat(ev.details()).contains("512").contains("96"));
            RequestHandle over = e.submit(new GenerationRequest("t", prompt(90, 1), 7, SamplingParams.greedy()),
                    TokenListener.NONE);
            assertThatThrownBy(() -> over.result().get(5, TimeUnit.SECONDS)).cause()
                    .isInstanceOfSatisfying(RequestRejectedException.class,
                            r -> assertThat(r.code()).isEqualTo("context_length_exceeded"))
                    .hasMessageContaining("96");
            assertThat(e.prefillKv().peakUsedPages()).isZero();
            RequestHandle fits = e.submit(new GenerationRequest("t", prompt(90, 1), 6, SamplingParams.greedy()),
                    TokenListener.NONE);
            assertThat(fits.result().get(60, TimeUnit.SECONDS).outputTokens()).isNotEmpty();
        }
    }

    @Test
    void byteBudgetsGiveTheExpectedPageCounts() {
        KvLayout layout = KvLayout.of(model.config(), 16);
        long page = layout.pageBytes();
        try (Engine e = Engine.builder(model, EngineConfig.builder().backend("cpu").contextWindow(160)
                .kvBytes(10 * page + page - 1, 20 * page).build()).build()) {
            assertThat(e.prefillKv().capacityPages()).isEqualTo(10);
            assertThat(e.decodeKv().capacityPages()).isEqualTo(20);
            assertThat(e.contextWindow()).isEqualTo(160);
        }
        assertThatThrownBy(() -> Engine.builder(model, EngineConfig.builder().backend("cpu").contextWindow(161)
                .kvBytes(10 * page, 20 * page).build()).build())
                .as("one token over what 10 pages hold").isInstanceOf(IllegalStateException.class)
                .hasMessageContaining("161").hasMessageContaining("prefill-0 160 tokens");
        assertThatThrownBy(() -> Engine.builder(model, EngineConfig.builder().backend("cpu").kvBytes(page - 1, page).build()).build()).isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("holds no page");
    }

    @Test
    void labFaultsReachTheEngineOnlyThroughItsHooks() {
        assertThat(LabFaults.parse(List.of("detectors-off")).hooks(null).checksOn()).isFalse();
        assertThat(LabFaults.NONE.hooks(null).checksOn()).isTrue();
        assertThat(dev.pagewarden.core.fault.FaultHooks.NONE.checksOn()).isTrue();
        assertThat(dev.pagewarden.core.fault.FaultHooks.NONE.capacityCheck()).isSameAs(CapacityCheck.ENFORCED);
        assertThat(dev.pagewarden.core.fault.FaultHooks.NONE.abortRelease()).isSameAs(AbortRelease.DEFER_UNTIL_ACK);
        assertThat(dev.pagewarden.core.fault.FaultHooks.NONE.promptOverflow()).isSameAs(PromptOverflow.REFUSE);
        assertThat(LabFaults.NONE.hooks(null).capacityCheck()).isSameAs(CapacityCheck.ENFORCED);
        assertThat(LabFaults.NONE.hooks(null).abortRelease()).isSameAs(AbortRelease.DEFER_UNTIL_ACK);
        assertThat(LabFaults.NONE.hooks(null).promptOverflow()).isSameAs(PromptOverflow.REFUSE);
        LabHooks incident = LabFaults.parse(List.of("skip-capacity-check", "legacy-finished-check",
                "immediate-release-on-abort")).hooks(null);
        assertThat(incident.capacityCheck()).isNotSameAs(CapacityCheck.ENFORCED);
        assertThat(incident.abortRelease()).isNotSameAs(AbortRelease.DEFER_UNTIL_ACK);
        assertThat(incident.promptOverflow()).isNotSameAs(PromptOverflow.REFUSE);
    }

}
