package dev.pagewarden.core.engine;

import dev.pagewarden.core.lineage.LineageEvent;
import dev.pagewarden.core.lineage.LineageEvent.Kind;
import dev.pagewarden.core.request.GenerationRequest;
import dev.pagewarden.core.request.RequestHandle;
import dev.pagewarden.core.request.RequestState;
import dev.pagewarden.core.request.TokenListener;
import dev.pagewarden.core.sampling.SamplingParams;
import dev.pagewarden.core.testing.IsolationFixtures.CountingMetrics;
import dev.pagewarden.core.testing.IsolationFixtures.Events;
import dev.pagewarden.core.testing.IsolationFixtures.TestClock;
import dev.pagewarden.core.testing.RealModelTest;
import dev.pagewarden.lab.IsolationOracle;
import dev.pagewarden.lab.LabFaults;
import org.junit.jupiter.api.Test;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import java.util.function.Predicate;

import static dev.pagewarden.core.testing.IsolationFixtures.prompt;
import static org.assertj.core.api.Assertions.assertThat;

/**
 * A preemption while KV transfers are in flight and late writes may still land: the pool is full of a running
 * request's pages, a request whose transfer is under way, and an aborted request's pages deferred until their
 * transfer's ack (every frame is delayed, so its writes land after the abort). The running request that needs a
 * page is the only one that may lose pages: the one in transfer keeps its own, the deferred pages go to nobody
 * before their ack, and every output equals the request alone on a fresh engine.
 */
class PreemptionDuringTransferTest extends RealModelTest {

    static int[] alone(GenerationRequest r) throws Exception {
        try (Engine e = Engine.builder(model, EngineConfig.builder().backend("cpu").build()).build()) {
            return e.submit(r, TokenListener.NONE).result().get(60, TimeUnit.SECONDS).outputTokens();
        }
    }

    static void stepUntil(Engine e, Predicate<Engine> done) {
        for (int i = 0; i < 100_000 && !done.test(e); i++) {
            e.step();
        }
        assertThat(done.test(e)).as("reached").isTrue();
    }

    @Test
    void preemptionNeverTakesPagesOfATransferInFlightNorDeferredPagesBeforeTheirAck() throws Exception {
        // decode pool of 8 pages; A reserves 2, B 3, C 3: full while B and C are in transfer
        EngineConfig cfg = EngineConfig.builder().backend("cpu").pageTokens(16).contextWindow(128).poolTokens(256, 128)
                .decodeHeadroomPages(1).build();
        SamplingParams longGreedy = new SamplingParams(0f, 1f, 0, true);
        GenerationRequest a = new GenerationRequest("tenant-a", prompt(10, 1), 100, longGreedy);
        GenerationRequest b = new GenerationRequest("tenant-b", prompt(30, 2), 60, longGreedy);
        GenerationRequest c = new GenerationRequest("tenant-c", prompt(20, 3), 60, longGreedy);
        CountingMetrics metrics = new CountingMetrics();
        IsolationOracle oracle = new IsolationOracle();
        List<LineageEvent> lineage = new CopyOnWriteArrayList<>();
        Map<Long, RequestHandle> byId = new HashMap<>();
        List<String> problems = new ArrayList<>();
        RequestHandle ha;
        RequestHandle hb;
        RequestHandle hc;
        try (Engine e = Engine.builder(model, cfg).metrics(metrics).safety(new Events()).clock(new TestClock())
                .lineage(ev -> {
                    lineage.add(ev);
                    if (ev.kind() == Kind.PREEMPT && ev.worker().equals("decode-0")
                            && !(byId.get(ev.requestId()).state() instanceof RequestState.Decoding)) {
                        problems.add("preempted request " + ev.requestId() + " in " + byId.get(ev.requestId()).state());
                    }
                })
                .faultHooks(LabFaults.parse(List.of("delay-transfer-writes=60")).hooks(oracle)).stepped().build()) {
            ha = e.submit(a, TokenListener.NONE);
            byId.put(ha.id(), ha);
            stepUntil(e, x -> ha.state() instanceof RequestState.Decoding);
            hb = e.submit(b, TokenListener.NONE);
            hc = e.submit(c, TokenListener.NONE);
            byId.put(hb.id(), hb);
            byId.put(hc.id(), hc);
            assertThat(e.decodeKv().freePages()).as("pool full").isZero();
            stepUntil(e, x -> hc.state() instanceof RequestState.Transferring);
            hc.abort("client gone during transfer");
            assertThat(hb.state()).isInstanceOf(RequestState.Transferring.class);
            stepUntil(e, x -> !x.step());
            assertThat(e.decodeKv().freePages()).isEqualTo(e.decodeKv().capacityPages());
            assertThat(e.prefillKv().freePages()).isEqualTo(e.prefillKv().capacityPages());
        }
        assertThat(problems).isEmpty();
        assertThat(metrics.get("preemption:requeued")).as("A could not grow while B and C held the rest").isPositive();
        assertThat(metrics.get("deferred:drained")).isEqualTo(1);
        assertThat(hc.state()).isInstanceOf(RequestState.Aborted.class);
        assertThat(ha.result().get(0, TimeUnit.SECONDS).outputTokens()).isEqualTo(alone(a));
        assertThat(hb.result().get(0, TimeUnit.SECONDS).outputTokens()).isEqualTo(alone(b));
        assertThat(oracle.crossTenantSlots(ha.id())).isZero();
        assertThat(oracle.crossTenantSlots(hb.id())).isZero();

        // per decode page: once DEFERRED, nothing but its own late writes until DRAIN; B's pages never PREEMPTed
        // before B's transfer was verified
        Map<Integer, Kind> state = new HashMap<>();
        Map<Integer, Long> deferredFor = new HashMap<>();
        int lateWrites = 0;
        boolean bVerified = false;
        for (LineageEvent ev : lineage) {
            if (!ev.worker().equals("decode-0")) {
                continue;
            }
            if (ev.requestId() == hb.id() && ev.kind() == Kind.VERIFY) {
                bVerified = true;
            }
            if (ev.requestId() == hb.id() && ev.kind() == Kind.PREEMPT) {
                assertThat(bVerified).as("B preempted only once its transfer was done").isTrue();
            }
            Kind before = state.get(ev.page());
            if (before == Kind.DEFER) {
                assertThat(ev.requestId()).as("deferred page " + ev.page() + " touched by another request: " + ev)
                        .isEqualTo(deferredFor.get(ev.page()));
                assertThat(ev.kind()).as("deferred page " + ev.page()).isIn(Kind.TRANSFER_IN, Kind.DRAIN);
                if (ev.kind() == Kind.TRANSFER_IN) {
                    lateWrites++;
                    continue; // still deferred
                }
            }
            if (ev.kind() == Kind.DEFER) {
                deferredFor.put(ev.page(), ev.requestId());
            }
            state.put(ev.page(), ev.kind());
        }
        assertThat(lateWrites).as("C's frames landed after the abort, in its own deferred pages").isPositive();
    }
}
