package dev.pagewarden.core.engine;

import dev.pagewarden.core.testing.RealModelTest;
import dev.pagewarden.core.kv.KvPool;
import dev.pagewarden.core.kv.PageRef;
import dev.pagewarden.core.kv.PageState;
import dev.pagewarden.core.lab.LabFaults;
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



    record Run(Engine engine, CountingMetrics metrics, Events events, TestClock clock) implements AutoCloseable {
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
                .deferredReleaseTimeout(Duration.ofSeconds(1)).lab(true, LabFaults.parse(List.of(faults))).groundTruth(true).build();
        return new Run(new Engine(model, cfg, metrics, events, clock), metrics, events, clock);
    }

    static int[] isolated(GenerationRequest r) throws Exception {
        try (Engine e = new Engine(model, EngineConfig.builder().backend("cpu").build(), EngineMetrics.NONE)) {
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
        return count(run.engine().decodePool(), PageState.FREE) == run.engine().decodePool().capacityPages()
                && count(run.engine().prefillPool(), PageState.FREE) == run.engine().prefillPool().capacityPages()
                && run.engine().transfersInFlight() == 0;
    }

    @Test
    void abortDuringTransferDefersThePagesUntilTheAckThenDrains() throws Exception {
        try (Run run = start(64, 64, 64, "delay-transfer-writes=200")) {
            KvPool decode = run.engine().decodePool();
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
            assertThat(GroundTruth.crossTenantSlotsRead(hc)).isZero();
        }
    }

    @Test
    void ackThatNeverComesInTimeQuarantinesScrubsAndDropsTheLateWrites() throws Exception {
        try (Run run = start(64, 64, 64, "delay-transfer-writes=500")) {
            KvPool decode = run.engine().decodePool();
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
                assertThat(decode.slotWriter(p.page(), 0)).as("scrubbed: ground truth reset").isZero();
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
            assertThat(GroundTruth.crossTenantSlotsRead(hc)).isZero();
            for (PageRef p : aPages) {
                for (int s = 0; s < decode.layout().pageTokens(); s++) {
                    assertThat(decode.slotWriter(p.page(), s)).as("page %d slot %d", p.page(), s).isNotEqualTo(a.id());
                }
            }
            assertThat(eventually(10_000, () -> allFree(run))).isTrue();
        }
    }

    /**
     * The sibling bug of 2026 re-opened: an aborted request's pages are freed at once. Request a
     * (47-token prompt, 3 pages) is aborted as its transfer starts; request c (16-token prompt,
     * 32 new tokens) takes the same three pages and starts decoding while a's frames are still in
     * flight. c's listener holds c after its first decode step until a's transfer is over, so a's
     * late frame for page index 1 arrives after c wrote position 16 there.
     */
    private static Outcome abortedNeighbour(String... faults) throws Exception {
        try (Run run = start(48, 96, 48, faults)) {
            GenerationRequest ra = new GenerationRequest("tenant-a", prompt(47, 1), 1, SamplingParams.greedy());
            GenerationRequest rc = new GenerationRequest("tenant-c", prompt(16, 5), 32, SamplingParams.greedy());
            RequestHandle a = submitAndAwaitTransfer(run, ra);
            a.abort("client went away");
            assertAbortedAtOnce(a);
            AtomicReference<Boolean> aOver = new AtomicReference<>();
            AtomicReference<Long> writerAtHold = new AtomicReference<>();
            AtomicReference<RequestHandle> cRef = new AtomicReference<>();
            List<Integer> seen = new ArrayList<>();
            CountDownLatch cStarted = new CountDownLatch(1);
            RequestHandle c = run.engine().submit(rc, (id, tok) -> {
                seen.add(tok);
                if (seen.size() == 2) {
                    cStarted.countDown();
                    List<PageRef> table = GroundTruth.decodePages(cRef.get());
                    writerAtHold.set(run.engine().decodePool().slotWriter(table.get(1).page(), 0));
                    try {
                        aOver.set(eventually(10_000, () -> run.engine().transfersInFlight() == 0));
                    } catch (InterruptedException e) {
                        Thread.currentThread().interrupt();
                    }
                }
            });
            cRef.set(c);
            int[] out = c.result().get(60, TimeUnit.SECONDS).outputTokens();
            assertThat(writerAtHold.get()).as("timing precondition: c wrote position 16 before a's late frame for page index 1"
                    + " arrived (raise the delay if this machine is slower)").isEqualTo(c.id());
            assertThat(aOver.get()).as("a's transfer ended while c was held").isTrue();
            assertThat(eventually(10_000, () -> allFree(run))).isTrue();
            return new Outcome(out, isolated(rc), GroundTruth.crossTenantSlotsRead(c), run.metrics().get("lateWriteDropped"));
        }
    }

    record Outcome(int[] output, int[] isolated, int crossTenantSlots, int lateWritesDropped) {
    }

    @Test
    void immediateReleaseWithDetectorsOnDropsTheLateWrites() throws Exception {
        Outcome o = abortedNeighbour("immediate-release-on-abort", "delay-transfer-writes=500");
        assertThat(o.lateWritesDropped()).isGreaterThanOrEqualTo(1);
        assertThat(o.crossTenantSlots()).isZero();
        assertThat(o.output()).isEqualTo(o.isolated());
    }

    @Test
    void immediateReleaseWithDetectorsOffLetsTheLateWriteIntoTheNeighbour() throws Exception {
        Outcome o = abortedNeighbour("immediate-release-on-abort", "delay-transfer-writes=500", "detectors-off");
        assertThat(o.lateWritesDropped()).isZero();
        assertThat(o.crossTenantSlots()).as("ground truth: c read a's late-written KV").isPositive();
    }
}
