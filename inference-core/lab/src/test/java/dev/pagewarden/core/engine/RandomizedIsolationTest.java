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
import dev.pagewarden.core.request.RequestAbortedException;
import dev.pagewarden.core.request.RequestFailedException;
import dev.pagewarden.core.request.RequestHandle;
import dev.pagewarden.core.request.RequestRejectedException;
import dev.pagewarden.core.request.TokenListener;
import dev.pagewarden.core.sampling.SamplingParams;
import dev.pagewarden.core.spi.Clock;
import dev.pagewarden.core.spi.EngineMetrics;
import dev.pagewarden.core.testing.IsolationFixtures;
import dev.pagewarden.core.testing.IsolationFixtures.CountingMetrics;
import dev.pagewarden.core.testing.IsolationFixtures.Events;
import org.junit.jupiter.api.Test;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.SplittableRandom;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;

import static dev.pagewarden.core.testing.IsolationFixtures.eventually;
import static org.assertj.core.api.Assertions.assertThat;

/**
 * Seeded chaos with the detectors on: several tenants, random prompt lengths (some over the window),
 * random max tokens, aborts at random points (right after submission, from a token listener at a
 * random token, from another thread after a random pause), and a random per-frame transfer delay.
 * A clean workload must give: every completed output equal to its isolated run, no safety event, no
 * deferred-release timeout, no cross-tenant read in ground truth, all pages free at the end, and
 * outcomes that add up. Seed: {@code -Dpagewarden.seed=N} (printed on failure).
 */
class RandomizedIsolationTest extends RealModelTest {
    static final int WINDOW = 128;



    record Template(int[] prompt, int maxNew) {
        boolean overWindow() {
            return prompt.length + maxNew > WINDOW;
        }
    }

    private static final Map<Integer, int[]> ISOLATED = new HashMap<>();

    static int[] isolated(int key, Template t) throws Exception {
        int[] cached = ISOLATED.get(key);
        if (cached != null) {
            return cached;
        }
        try (Engine e = Engine.builder(model, EngineConfig.builder().backend("cpu").build()).build()) {
            int[] out = e.submit(new GenerationRequest("alone", t.prompt(), t.maxNew(), SamplingParams.greedy()),
                    TokenListener.NONE).result().get(60, TimeUnit.SECONDS).outputTokens();
            ISOLATED.put(key, out);
            return out;
        }
    }

    @Test
    void randomizedWorkloadStaysIsolated() throws Exception {
        long seed = Long.getLong("pagewarden.seed", 20260909L);
        SplittableRandom rnd = new SplittableRandom(seed);
        List<Template> templates = new ArrayList<>();
        for (int i = 0; i < 14; i++) {
            int len = i < 2 ? 100 + rnd.nextInt(60) : 1 + rnd.nextInt(100); // the first two never fit
            int[] p = new int[len];
            p[0] = 1;
            for (int k = 1; k < len; k++) {
                p[k] = 3 + rnd.nextInt(509);
            }
            int maxNew = i < 2 ? 30 + rnd.nextInt(20) : 1 + rnd.nextInt(Math.min(40, WINDOW - len));
            templates.add(new Template(p, maxNew));
        }
        int delay = 3 + rnd.nextInt(6);
        CountingMetrics metrics = new CountingMetrics();
        Events events = new Events();
        EngineConfig cfg = EngineConfig.builder().backend("cpu").contextWindow(WINDOW).poolTokens(WINDOW, 3 * WINDOW)
                .maxBatch(8).build();
        IsolationOracle oracle = new IsolationOracle();
        int n = 48;
        int[] which = new int[n];
        int[] abortKind = new int[n];
        List<RequestHandle> handles = new ArrayList<>();
        ScheduledExecutorService aborter = Executors.newScheduledThreadPool(4);
        String context = "seed " + seed + ", frame delay " + delay + " decode steps";
        try (Engine engine = Engine.builder(model, cfg).metrics(metrics).safety(events)
                .faultHooks(LabFaults.parse(List.of("delay-transfer-writes=" + delay)).hooks(oracle)).build()) {
            for (int i = 0; i < n; i++) {
                which[i] = rnd.nextInt(templates.size());
                Template t = templates.get(which[i]);
                int roll = rnd.nextInt(100);
                abortKind[i] = roll < 50 ? 0 : roll < 60 ? 1 : roll < 75 ? 2 : roll < 85 ? 3 : 4;
                int abortAtToken = 1 + rnd.nextInt(t.maxNew());
                long abortAfterMicros = rnd.nextInt(40_000);
                RequestHandle h = IsolationFixtures.submitAbortingAt(engine, new GenerationRequest("tenant-" + rnd.nextInt(4),
                        t.prompt(), t.maxNew(), SamplingParams.greedy()), abortKind[i] == 2 ? abortAtToken : 0);
                handles.add(h);
                if (abortKind[i] == 1) {
                    h.abort("abort right after submit");
                } else if (abortKind[i] == 3) {
                    aborter.schedule(() -> h.abort("abort from another thread"), abortAfterMicros, TimeUnit.MICROSECONDS);
                } else if (abortKind[i] == 4) {
                    IsolationFixtures.abortWhenTransferring(aborter, h);
                }
            }
            int served = 0, rejected = 0, aborted = 0, failed = 0;
            for (int i = 0; i < n; i++) {
                RequestHandle h = handles.get(i);
                Template t = templates.get(which[i]);
                String what = "request " + i + " (template " + which[i] + ", prompt " + t.prompt().length + ", max "
                        + t.maxNew() + ", abort kind " + abortKind[i] + ", " + context + ")";
                try {
                    GenerationResult r = h.result().get(120, TimeUnit.SECONDS);
                    served++;
                    assertThat(t.overWindow()).as(what + " served though over the window").isFalse();
                    assertThat(r.outputTokens()).as(what + " equals its isolated run").isEqualTo(isolated(which[i], t));
                } catch (ExecutionException e) {
                    switch (e.getCause()) {
                        case RequestRejectedException rj -> {
                            rejected++;
                            assertThat(rj.code()).as(what).isEqualTo("context_length_exceeded");
                            assertThat(t.overWindow()).as(what + " rejected though it fits").isTrue();
                            assertThat(GroundTruth.decodePages(h)).isEmpty();
                        }
                        case RequestAbortedException ab -> {
                            aborted++;
                            assertThat(abortKind[i]).as(what + " aborted without being asked").isNotZero();
                        }
                        case RequestFailedException f -> {
                            failed++;
                            throw new AssertionError(what + " failed in a clean workload: " + f.code() + ": " + f.getMessage(), f);
                        }
                        default -> throw new AssertionError(what, e.getCause());
                    }
                }
                assertThat(oracle.crossTenantSlots(h.id())).as(what + " ground truth cross-tenant reads").isZero();
                assertThat(GroundTruth.detected(h)).as(what + " flagged by a detector").isFalse();
            }
            assertThat(served + rejected + aborted + failed).isEqualTo(n);
            assertThat(rejected).as("rejections counted by admission").isEqualTo(metrics.get("rejected:context_length_exceeded"));
            assertThat(served).as(context).isPositive();
            assertThat(aborted).as(context).isPositive();
            assertThat(rejected).as(context).isPositive();
            assertThat(events.all()).as("no safety event in a clean workload (" + context + ")").isEmpty();
            assertThat(metrics.get("deferred:timeout")).isZero();
            assertThat(metrics.get("lateWriteDropped")).isZero();
            assertThat(metrics.get("transferFailed")).isZero();
            for (KvPool p : List.of(engine.prefillKv(), engine.decodeKv())) {
                assertThat(eventually(10_000, () -> p.countByState().get(PageState.FREE) == p.capacityPages()))
                        .as(p.name() + " all free at the end: " + p.countByState() + " (" + context + ")").isTrue();
            }
            assertThat(eventually(10_000, () -> engine.transfersInFlight() == 0)).isTrue();
            assertThat(engine.queued()).isZero();
            System.out.printf("randomized isolation: %s: %d served, %d rejected, %d aborted, %d deferred releases drained%n",
                    context, served, rejected, aborted, metrics.get("deferred:drained"));
        } finally {
            aborter.shutdownNow();
        }
    }
}
