package dev.pagewarden.core.engine;

import dev.pagewarden.core.testing.RealModelTest;
import dev.pagewarden.core.kv.KvPool;
import dev.pagewarden.core.kv.PageState;
import dev.pagewarden.lab.IsolationOracle;
import dev.pagewarden.lab.LabFaults;
import dev.pagewarden.core.model.load.LoadedModel;
import dev.pagewarden.core.request.GenerationRequest;
import dev.pagewarden.core.request.GenerationResult;
import dev.pagewarden.core.request.GroundTruth;
import dev.pagewarden.core.request.RequestFailedException;
import dev.pagewarden.core.request.RequestHandle;
import dev.pagewarden.core.request.RequestState;
import dev.pagewarden.core.request.TokenListener;
import dev.pagewarden.core.safety.SafetyEvent;
import dev.pagewarden.core.sampling.SamplingParams;
import dev.pagewarden.core.spi.Clock;
import dev.pagewarden.core.testing.IsolationFixtures;
import dev.pagewarden.core.testing.IsolationFixtures.CountingMetrics;
import dev.pagewarden.core.testing.IsolationFixtures.Events;
import org.junit.jupiter.api.Test;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;

import static dev.pagewarden.core.testing.IsolationFixtures.eventually;
import static dev.pagewarden.core.testing.IsolationFixtures.prompt;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * Invariant 2 on the real model: a request is decoded only if the tokens received equal the tokens
 * reserved and every checksum verified. Each lab fault is shown twice: caught with the detectors on,
 * and doing real damage (ground truth) with them off.
 */
class HandoffIsolationTest extends RealModelTest {
    /** 64-token pools of 16-token pages: every request reuses the pages the previous one wrote. */
    static final EngineConfig SMALL = EngineConfig.builder().backend("cpu").contextWindow(64).poolTokens(64, 64).build();
    static final SamplingParams FILL = new SamplingParams(0f, 1f, 0, true);



    record Run(Engine engine, CountingMetrics metrics, Events events, IsolationOracle oracle) implements AutoCloseable {
        @Override
        public void close() {
            engine.close();
        }
    }

    static Run start(EngineConfig base, String... faults) {
        CountingMetrics metrics = new CountingMetrics();
        Events events = new Events();
        IsolationOracle oracle = new IsolationOracle();
        return new Run(Engine.builder(model, base).metrics(metrics).safety(events)
                .faultHooks(LabFaults.parse(List.of(faults)).hooks(oracle)).build(), metrics, events, oracle);
    }

    /** Another tenant fills the whole decode pool with its KV first, so stale foreign data is there to be read. */
    static void fillDecodePoolAsOtherTenant(Engine e, int promptLen, int maxNew) throws Exception {
        e.submit(new GenerationRequest("tenant-b", prompt(promptLen, 9), maxNew, FILL), TokenListener.NONE)
                .result().get(60, TimeUnit.SECONDS);
        awaitAllFree(e);
    }

    static void awaitAllFree(Engine e) throws InterruptedException {
        for (KvPool p : List.of(e.prefillKv(), e.decodeKv())) {
            assertThat(eventually(10_000, () -> p.countByState().get(PageState.FREE) == p.capacityPages()))
                    .as(p.name() + " all free: " + p.countByState()).isTrue();
        }
        assertThat(eventually(10_000, () -> e.transfersInFlight() == 0)).as("no transfer in flight").isTrue();
    }

    static RequestFailedException failure(RequestHandle h) {
        Throwable cause = org.assertj.core.api.Assertions.catchThrowableOfType(ExecutionException.class,
                () -> h.result().get(60, TimeUnit.SECONDS)).getCause();
        assertThat(cause).isInstanceOf(RequestFailedException.class);
        return (RequestFailedException) cause;
    }

    static void assertZeroed(KvPool pool, List<Integer> pages) {
        try (Arena arena = Arena.ofConfined()) {
            long bytes = pool.layout().pageBytes();
            MemorySegment zero = arena.allocate(bytes);
            MemorySegment back = arena.allocate(bytes);
            for (int p : pages) {
                pool.storage().readPage(p, back);
                assertThat(back.mismatch(zero)).as("page %d scrubbed", p).isEqualTo(-1L);
            }
        }
    }

    private static void assertCaught(Run run, RequestHandle h, SafetyEvent.Type type, String detail) throws Exception {
        RequestFailedException f = failure(h);
        assertThat(f.code()).isEqualTo("kv_transfer_failed");
        assertThat(h.state()).isInstanceOf(RequestState.Failed.class);
        assertThat(run.events().of(type)).singleElement().satisfies(ev -> {
            assertThat(ev.requestId()).isEqualTo(h.id());
            assertThat(ev.tenant()).isEqualTo("tenant-a");
            assertThat(ev.worker()).isEqualTo("decode-0");
            assertThat(ev.details()).contains(detail);
            assertThat(ev.pages()).isNotEmpty();
        });
        assertThat(run.metrics().get("transferFailed")).isEqualTo(1);
        assertThat(run.metrics().get("violation:" + type.label())).isEqualTo(1);
        assertThat(GroundTruth.detected(h)).isTrue();
        assertThat(run.oracle().crossTenantSlots(h.id())).as("nothing was read").isZero();
        awaitAllFree(run.engine());
        // the quarantined pages went through the scrub before returning to the free list
        assertZeroed(run.engine().decodeKv(), run.events().of(type).get(0).pages());
    }

    @Test
    void droppedPageFailsTheRequestAndItsPagesComeBackScrubbed() throws Exception {
        try (Run run = start(SMALL, "drop-transfer-page")) {
            // (no warm-up: the fault is engine-wide, every transfer on this engine drops its last page)
            RequestHandle h = run.engine().submit(new GenerationRequest("tenant-a", prompt(40, 1), 24,
                    SamplingParams.greedy()), TokenListener.NONE);
            assertCaught(run, h, SafetyEvent.Type.TRANSFER_INCOMPLETE, "page index 2 never arrived");
        }
    }

    @Test
    void droppedPageWithDetectorsOffIsDeliveredOverForeignKv() throws Exception {
        try (Run run = start(SMALL, "drop-transfer-page", "detectors-off")) {
            fillDecodePoolAsOtherTenant(run.engine(), 40, 24);
            RequestHandle h = run.engine().submit(new GenerationRequest("tenant-a", prompt(40, 1), 24,
                    SamplingParams.greedy()), TokenListener.NONE);
            GenerationResult r = h.result().get(60, TimeUnit.SECONDS);
            assertThat(r.outputTokens()).as("delivered").isNotEmpty();
            // page index 2 (positions 32..39) was never sent: tenant-b's KV was read in its place
            assertThat(run.oracle().crossTenantSlots(h.id())).isGreaterThanOrEqualTo(8);
            assertThat(run.oracle().tokensFromForeignData(h.id())).isPositive();
            assertThat(GroundTruth.detected(h)).isFalse();
            assertThat(run.events().all()).as("nobody noticed").isEmpty();
            awaitAllFree(run.engine());
        }
    }

    @Test
    void corruptedByteFailsTheRequestWithChecksumMismatch() throws Exception {
        try (Run run = start(SMALL, "corrupt-transfer-byte")) {
            RequestHandle h = run.engine().submit(new GenerationRequest("tenant-a", prompt(40, 1), 24,
                    SamplingParams.greedy()), TokenListener.NONE);
            assertCaught(run, h, SafetyEvent.Type.CHECKSUM_MISMATCH, "checksum mismatch on page index 0");
        }
    }

    @Test
    void corruptedByteWithDetectorsOffIsDelivered() throws Exception {
        try (Run run = start(SMALL, "corrupt-transfer-byte", "detectors-off")) {
            RequestHandle h = run.engine().submit(new GenerationRequest("tenant-a", prompt(40, 1), 24,
                    SamplingParams.greedy()), TokenListener.NONE);
            assertThat(h.result().get(60, TimeUnit.SECONDS).outputTokens()).isNotEmpty();
            assertThat(h.state()).isInstanceOf(RequestState.Finished.class);
            assertThat(run.events().all()).isEmpty();
            assertThat(run.metrics().get("transferFailed")).isZero();
            awaitAllFree(run.engine());
        }
    }

    /** The 2026 configuration: window 512, prefill pool 64 tokens, decode pool 128; admission does not check pool fit. */
    static final EngineConfig INCIDENT = EngineConfig.builder().backend("cpu").poolTokens(64, 128).build();

    @Test
    void legacyPlaceholderTransferIsCaughtAsIncomplete() throws Exception {
        try (Run run = start(INCIDENT, "legacy-finished-check", "skip-capacity-check")) {
            assertThat(run.engine().contextWindow()).isEqualTo(512);
            fillDecodePoolAsOtherTenant(run.engine(), 60, 60);
            assertThat(run.events().all()).isEmpty();
            RequestHandle h = run.engine().submit(new GenerationRequest("tenant-a", prompt(100, 1), 20,
                    SamplingParams.greedy()), TokenListener.NONE);
            assertCaught(run, h, SafetyEvent.Type.TRANSFER_INCOMPLETE, "1 of 100 reserved tokens received");
        }
    }

    @Test
    void legacyPlaceholderWithDetectorsOffDecodesOverAnotherTenantsKv() throws Exception {
        try (Run run = start(INCIDENT, "legacy-finished-check", "skip-capacity-check", "detectors-off")) {
            fillDecodePoolAsOtherTenant(run.engine(), 60, 60);
            RequestHandle h = run.engine().submit(new GenerationRequest("tenant-a", prompt(100, 1), 20,
                    SamplingParams.greedy()), TokenListener.NONE);
            GenerationResult r = h.result().get(60, TimeUnit.SECONDS);
            assertThat(r.outputTokens()).as("the 2026 symptom: a 200 with an answer").isNotEmpty();
            // positions 1..99 were never transferred: every one of them that anybody ever wrote holds
            // tenant-b's KV (the tail slots of b's last prefill and decode pages were never written at all)
            assertThat(run.oracle().crossTenantSlots(h.id())).isGreaterThanOrEqualTo(90);
            // every token after the first (which prefill sampled from the placeholder alone) came from foreign KV
            assertThat(run.oracle().tokensFromForeignData(h.id())).isEqualTo(r.outputTokens().length - 1);
            assertThat(run.events().all()).isEmpty();
            awaitAllFree(run.engine());
        }
    }

    @Test
    void aCleanEngineServesTheSameRequestsCorrectly() throws Exception {
        // control for the tests above: same workload, no fault, output equals the isolated run
        List<int[]> outputs = new ArrayList<>();
        for (int i = 0; i < 2; i++) {
            try (Run run = start(SMALL)) {
                if (i == 1) {
                    fillDecodePoolAsOtherTenant(run.engine(), 40, 24);
                }
                RequestHandle h = run.engine().submit(new GenerationRequest("tenant-a", prompt(40, 1), 24,
                        SamplingParams.greedy()), TokenListener.NONE);
                outputs.add(h.result().get(60, TimeUnit.SECONDS).outputTokens());
                assertThat(run.oracle().crossTenantSlots(h.id())).isZero();
                assertThat(run.events().all()).isEmpty();
            }
        }
        assertThat(outputs.get(1)).isEqualTo(outputs.get(0));
    }

    @Test
    void repeatedHandoffFailuresLeakNoPage() throws Exception {
        try (Run run = start(SMALL, "drop-transfer-page")) {
            for (int i = 0; i < 3; i++) {
                RequestHandle h = run.engine().submit(new GenerationRequest("tenant-" + i, prompt(20 + 10 * i, i), 8,
                        SamplingParams.greedy()), TokenListener.NONE);
                assertThat(failure(h).code()).isEqualTo("kv_transfer_failed");
                awaitAllFree(run.engine());
            }
            assertThat(run.metrics().get("transferFailed")).isEqualTo(3);
            assertThat(run.events().of(SafetyEvent.Type.TRANSFER_INCOMPLETE)).hasSize(3);
        }
    }
}
