package dev.pagewarden.core.engine;

import dev.pagewarden.core.testing.RealModelTest;
import dev.pagewarden.core.engine.PoolStats;
import dev.pagewarden.core.kv.KvPool;
import dev.pagewarden.core.kv.PageRef;
import dev.pagewarden.core.kv.PageState;
import dev.pagewarden.lab.IsolationOracle;
import dev.pagewarden.lab.LabFaults;
import dev.pagewarden.core.model.load.LoadedModel;
import dev.pagewarden.core.request.GenerationRequest;
import dev.pagewarden.core.request.GroundTruth;
import dev.pagewarden.core.request.RequestAbortedException;
import dev.pagewarden.core.request.RequestHandle;
import dev.pagewarden.core.request.RequestState;
import dev.pagewarden.core.request.TokenListener;
import dev.pagewarden.core.safety.SafetyEvent;
import dev.pagewarden.core.sampling.SamplingParams;
import dev.pagewarden.core.spi.EngineMetrics;
import dev.pagewarden.core.testing.IsolationFixtures;
import dev.pagewarden.core.testing.IsolationFixtures.CountingMetrics;
import dev.pagewarden.core.testing.IsolationFixtures.Events;
import dev.pagewarden.core.testing.IsolationFixtures.TestClock;
import org.junit.jupiter.api.Test;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;

import static dev.pagewarden.core.testing.IsolationFixtures.eventually;
import static dev.pagewarden.core.testing.IsolationFixtures.prompt;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * Invariants 4 and 5: a page of an aborted request is never reused while a transfer write for it may
 * still be in flight, and a late write never lands in another request's page. The lab delays every
 * transfer frame; deadlines run on a test clock that only the test advances.
 */
class DeferredReleaseTest extends RealModelTest {



    record Run(Engine engine, CountingMetrics metrics, Events events, TestClock clock, IsolationOracle oracle)
            implements AutoCloseable {
        @Override
        public void close() {
            engine.close();
        }
    }

    static Run start(int window, int prefillTokens, int decodeTokens, String... faults) {
        CountingMetrics metrics = new CountingMetrics();
        Events events = new Events();
        TestClock clock = new TestClock();
        EngineConfig cfg = EngineConfig.builder().backend("cpu").contextWindow(window).poolTokens(prefillTokens, decodeTokens)
                .deferredReleaseTimeout(Duration.ofSeconds(1)).build();
        IsolationOracle oracle = new IsolationOracle();
        return new Run(Engine.builder(model, cfg).metrics(metrics).safety(events).clock(clock)
                .faultHooks(LabFaults.parse(List.of(faults)).hooks(oracle)).build(), metrics, events, clock, oracle);
    }

    static int[] isolated(GenerationRequest r) throws Exception {
        try (Engine e = Engine.builder(model, EngineConfig.builder().backend("cpu").build()).build()) {
            return e.submit(r, TokenListener.NONE).result().get(60, TimeUnit.SECONDS).outputTokens();
        }
    }

    /** Submits and waits (bounded) until its transfer is registered with decode and under way. */
    static RequestHandle submitAndAwaitTransfer(Run run, GenerationRequest r) throws InterruptedException {
        RequestHandle h = run.engine().submit(r, TokenListener.NONE);
        assertThat(eventually(30_000, () -> h.state() instanceof RequestState.Transferring
                && run.engine().transfersInFlight() == 1)).as("transfer under way").isTrue();
        return h;
    }

    static void assertAbortedAtOnce(RequestHandle h) {
        assertThat(h.result()).as("completed by the abort call itself").isCompletedExceptionally();
        assertThat(h.state()).isInstanceOf(RequestState.Aborted.class);
        assertThatThrownBy(() -> h.result().get(0, TimeUnit.SECONDS)).isInstanceOf(ExecutionException.class)
                .hasCauseInstanceOf(RequestAbortedException.class);
    }

    static int count(KvPool pool, PageState s) {
        return pool.countByState().get(s);
    }

    static boolean allFree(Run run) {
        return count(run.engine().decodeKv(), PageState.FREE) == run.engine().decodeKv().capacityPages()
                && count(run.engine().prefillKv(), PageState.FREE) == run.engine().prefillKv().capacityPages()
                && run.engine().transfersInFlight() == 0;
    }

    @Test
    void abortDuringTransferDefersThePagesUntilTheAckThenDrains() throws Exception {
        try (Run run = start(64, 64, 64, "delay-transfer-writes=20")) {
            KvPool decode = run.engine().decodeKv();
            RequestHandle a = submitAndAwaitTransfer(run, new GenerationRequest("tenant-a", prompt(48, 1), 16,
                    SamplingParams.greedy()));
            a.abort("client went away");
            assertAbortedAtOnce(a);
            assertThat(count(decode, PageState.DEFERRED)).as("reservation parked, not freed").isEqualTo(4);
            assertThat(decode.freePages()).isZero();
            assertThat(run.metrics().get("deferred:drained")).as("no ack yet").isZero();

            // the sender finishes its frames, then acks: only that frees the pages
            assertThat(eventually(30_000, () -> allFree(run))).as("drained: " + decode.countByState()).isTrue();
            assertThat(run.metrics().get("deferred:drained")).isEqualTo(1);
            assertThat(run.metrics().get("deferred:timeout")).isZero();
            assertThat(run.events().all()).as("a drained release is not a safety event").isEmpty();

            GenerationRequest c = new GenerationRequest("tenant-c", prompt(40, 3), 24, SamplingParams.greedy());
            RequestHandle hc = run.engine().submit(c, TokenListener.NONE);
            assertThat(hc.result().get(60, TimeUnit.SECONDS).outputTokens()).isEqualTo(isolated(c));
            assertThat(run.oracle().crossTenantSlots(hc.id())).isZero();
        }
    }

    @Test
    void ackThatNeverComesInTimeQuarantinesScrubsAndDropsTheLateWrites() throws Exception {
        try (Run run = start(64, 64, 64, "delay-transfer-writes=20")) {
            KvPool decode = run.engine().decodeKv();
            RequestHandle a = submitAndAwaitTransfer(run, new GenerationRequest("tenant-a", prompt(48, 1), 16,
                    SamplingParams.greedy()));
            List<PageRef> aPages = List.copyOf(GroundTruth.decodePages(a));
            a.abort("client went away");
            assertAbortedAtOnce(a);
            assertThat(count(decode, PageState.DEFERRED)).isEqualTo(4);

            run.clock().advanceMillis(1_500); // past the 1 s deferred-release timeout, frames still in flight
            // pages are freed by the reaper before it reports: wait for the report
            assertThat(eventually(10_000, () -> !run.events().of(SafetyEvent.Type.DEFERRED_RELEASE_TIMEOUT).isEmpty()))
                    .as("reaped: " + decode.countByState()).isTrue();
            assertThat(decode.freePages()).isEqualTo(decode.capacityPages());
            assertThat(run.metrics().get("deferred:timeout")).isEqualTo(1);
            assertThat(run.metrics().get("deferred:drained")).isZero();
            assertThat(run.events().of(SafetyEvent.Type.DEFERRED_RELEASE_TIMEOUT)).singleElement().satisfies(ev -> {
                assertThat(ev.requestId()).isEqualTo(a.id());
                assertThat(ev.tenant()).isEqualTo("tenant-a");
                assertThat(ev.pages()).containsExactlyInAnyOrderElementsOf(aPages.stream().map(PageRef::page).toList());
            });
            for (PageRef p : aPages) {
                assertThat(decode.storage().writers(p.page())).as("scrubbed: writer shadow reset").containsOnly(0L);
            }

            // another tenant takes exactly those pages while a's remaining frames are still on the wire
            GenerationRequest c = new GenerationRequest("tenant-c", prompt(40, 3), 24, SamplingParams.greedy());
            RequestHandle hc = run.engine().submit(c, TokenListener.NONE);
            assertThat(GroundTruth.decodePages(hc).stream().map(PageRef::page).toList())
                    .containsExactlyInAnyOrderElementsOf(aPages.stream().map(PageRef::page).toList());
            int[] out = hc.result().get(60, TimeUnit.SECONDS).outputTokens();

            assertThat(run.metrics().get("lateWriteDropped")).as("a's next frame arrived late and was dropped").isEqualTo(1);
            assertThat(run.events().of(SafetyEvent.Type.LATE_WRITE_DROPPED)).singleElement()
                    .satisfies(ev -> assertThat(ev.requestId()).isEqualTo(a.id()));
            assertThat(out).isEqualTo(isolated(c));
            assertThat(run.oracle().crossTenantSlots(hc.id())).isZero();
            for (PageRef p : aPages) {
                for (int s = 0; s < decode.layout().pageTokens(); s++) {
                    assertThat(decode.storage().writers(p.page())[s]).as("page %d slot %d", p.page(), s).isNotEqualTo(a.id());
                }
            }
            assertThat(eventually(10_000, () -> allFree(run))).isTrue();
        }
    }

    /**
     * The sibling bug of 2026 re-opened, on an engine driven step by step: an aborted request's pages
     * are freed at once. Request a (47-token prompt, 3 pages) is aborted as its transfer starts;
     * request c (16-token prompt, 32 new tokens) takes the same three pages and starts decoding while
     * a's frames (each held 5 decode steps) are still on the wire, so a's late frame for page index 1
     * arrives after c wrote position 16 there, while c still decodes.
     */
    private static Outcome abortedNeighbour(String... faults) throws Exception {
        CountingMetrics metrics = new CountingMetrics();
        IsolationOracle oracle = new IsolationOracle();
        EngineConfig cfg = EngineConfig.builder().backend("cpu").contextWindow(48).poolTokens(96, 48)
                .deferredReleaseTimeout(Duration.ofSeconds(1)).build();
        try (Engine e = Engine.builder(model, cfg).metrics(metrics).clock(new TestClock())
                .faultHooks(LabFaults.parse(List.of(faults)).hooks(oracle)).stepped().build()) {
            GenerationRequest ra = new GenerationRequest("tenant-a", prompt(47, 1), 1, SamplingParams.greedy());
            GenerationRequest rc = new GenerationRequest("tenant-c", prompt(16, 5), 32, SamplingParams.greedy());
            RequestHandle a = e.submit(ra, TokenListener.NONE);
            stepUntil(e, () -> a.state() instanceof RequestState.Transferring && e.transfersInFlight() == 1);
            a.abort("client went away");
            assertAbortedAtOnce(a);
            List<Integer> seen = new ArrayList<>();
            RequestHandle c = e.submit(rc, (id, tok) -> seen.add(tok));
            stepUntil(e, () -> seen.size() == 2);
            long writerAtHold = e.decodeKv().storage().writers(GroundTruth.decodePages(c).get(1).page())[0];
            stepUntil(e, () -> e.transfersInFlight() == 0);
            boolean cStillDecoding = !c.result().isDone();
            for (int i = 0; i < 100_000 && e.step(); i++) {
                // to the end: c finishes, every page settles
            }
            int[] out = c.result().get(0, TimeUnit.SECONDS).outputTokens();
            assertThat(writerAtHold).as("precondition: c wrote position 16 before a's late frame for page index 1"
                    + " arrived").isEqualTo(c.id());
            assertThat(cStillDecoding).as("a's transfer ended while c was decoding").isTrue();
            assertThat(e.pools()).allMatch(PoolStats::allFree);
            return new Outcome(out, isolated(rc), oracle.crossTenantSlots(c.id()), metrics.get("lateWriteDropped"));
        }
    }

    /** Steps a stepped engine until {@code done} holds (bounded). */
    static void stepUntil(Engine e, java.util.function.BooleanSupplier done) {
        for (int i = 0; i < 100_000 && !done.getAsBoolean(); i++) {
            e.step();
        }
        assertThat(done.getAsBoolean()).as("reached within 100000 steps").isTrue();
    }

    record Outcome(int[] output, int[] isolated, int crossTenantSlots, int lateWritesDropped) {
    }

    @Test
    void immediateReleaseWithDetectorsOnDropsTheLateWrites() throws Exception {
        Outcome o = abortedNeighbour("immediate-release-on-abort", "delay-transfer-writes=5");
        assertThat(o.lateWritesDropped()).isGreaterThanOrEqualTo(1);
        assertThat(o.crossTenantSlots()).isZero();
        assertThat(o.output()).isEqualTo(o.isolated());
    }

    @Test
    void immediateReleaseWithDetectorsOffLetsTheLateWriteIntoTheNeighbour() throws Exception {
        Outcome o = abortedNeighbour("immediate-release-on-abort", "delay-transfer-writes=5", "detectors-off");
        assertThat(o.lateWritesDropped()).isZero();
        assertThat(o.crossTenantSlots()).as("ground truth: c read a's late-written KV").isPositive();
    }
}
