package dev.pagewarden.core.engine;

import dev.pagewarden.core.kv.KvPool;
import dev.pagewarden.core.lineage.LineageEvent;
import dev.pagewarden.core.request.GenerationRequest;
import dev.pagewarden.core.request.GenerationResult;
import dev.pagewarden.core.request.RequestFailedException;
import dev.pagewarden.core.request.RequestHandle;
import dev.pagewarden.core.request.RequestRejectedException;
import dev.pagewarden.core.request.RequestState;
import dev.pagewarden.core.request.TokenListener;
import dev.pagewarden.core.sampling.SamplingParams;
import dev.pagewarden.core.testing.IsolationFixtures.CountingMetrics;
import dev.pagewarden.core.testing.RealModelTest;
import org.junit.jupiter.api.Test;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;

import static dev.pagewarden.core.testing.IsolationFixtures.prompt;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * Pages on demand: requests reserve their prompt's pages plus a headroom and take more as they decode; a pool that
 * runs out preempts the most recently admitted running request, which is re-prefilled later and continues. Its
 * output, like every other, is bit-identical to the same request alone on a fresh engine; a request preempted too
 * often fails with a clear error instead of looping.
 */
class PreemptionTest extends RealModelTest {
    /** Decode pool of 8 pages of 16 tokens, window 128: each request fits alone, a few together do not. */
    static EngineConfig.Builder tight() {
        return EngineConfig.builder().backend("cpu").pageTokens(16).contextWindow(128).poolTokens(256, 128)
                .decodeHeadroomPages(1);
    }

    static List<GenerationRequest> workload() {
        List<GenerationRequest> list = new ArrayList<>();
        for (int i = 0; i < 6; i++) {
            SamplingParams sampling = i % 2 == 0 ? new SamplingParams(0f, 1f, 0, true)
                    : new SamplingParams(0.9f, 0.95f, 500 + i, true);
            list.add(new GenerationRequest("tenant-" + (i % 3), prompt(8 + 5 * i, i), 60 + 7 * i, sampling));
        }
        return list;
    }

    static int[] alone(GenerationRequest r) throws Exception {
        try (Engine e = Engine.builder(model, EngineConfig.builder().backend("cpu").build()).build()) {
            return e.submit(r, TokenListener.NONE).result().get(60, TimeUnit.SECONDS).outputTokens();
        }
    }

    static void runUntilIdle(Engine e) {
        for (int i = 0; i < 100_000; i++) {
            if (!e.step()) {
                return;
            }
        }
        throw new AssertionError("engine still busy");
    }

    static void assertAllFree(KvPool pool) {
        assertThat(pool.freePages()).as(pool.name() + " " + pool.countByState()).isEqualTo(pool.capacityPages());
    }

    @Test
    void preemptedRequestsGiveTheirAloneOutputsAndStreamEachTokenOnce() throws Exception {
        List<GenerationRequest> reqs = workload();
        CountingMetrics metrics = new CountingMetrics();
        List<LineageEvent> lineage = new CopyOnWriteArrayList<>();
        Map<Long, List<Integer>> streamed = new ConcurrentHashMap<>();
        Map<Long, RequestHandle> byId = new HashMap<>();
        List<String> victimStates = new ArrayList<>();
        List<RequestHandle> handles = new ArrayList<>();
        try (Engine e = Engine.builder(model, tight().build()).metrics(metrics).lineage(ev -> {
            lineage.add(ev);
            if (ev.kind() == LineageEvent.Kind.PREEMPT) { // the victim is still decoding when its pages go
                victimStates.add(byId.get(ev.requestId()).state().getClass().getSimpleName());
            }
        }).stepped().build()) {
            for (GenerationRequest r : reqs) {
                RequestHandle h = e.submit(r, (id, tok) -> streamed.computeIfAbsent(id, k -> new ArrayList<>()).add(tok));
                byId.put(h.id(), h);
                handles.add(h);
            }
            runUntilIdle(e);
            assertAllFree(e.decodeKv());
            assertAllFree(e.prefillKv());
        }
        assertThat(metrics.get("preemption:requeued")).as("the tight pool preempts").isGreaterThan(0);
        assertThat(metrics.get("preemption:preempted_too_often")).isZero();
        assertThat(victimStates).isNotEmpty().containsOnly("Decoding");
        for (int i = 0; i < reqs.size(); i++) {
            GenerationResult r = handles.get(i).result().get(0, TimeUnit.SECONDS);
            int[] expected = alone(reqs.get(i));
            assertThat(r.outputTokens()).as("request " + i + " vs alone").isEqualTo(expected);
            assertThat(streamed.get(r.requestId())).as("streamed once each, in order")
                    .containsExactly(java.util.Arrays.stream(expected).boxed().toArray(Integer[]::new));
        }
        // each preempted page epoch: its reads end, then PREEMPT, then RELEASE; never another owner in between
        Map<String, LineageEvent.Kind> last = new HashMap<>();
        for (LineageEvent ev : lineage) {
            String key = ev.page() + "@" + ev.epoch();
            if (ev.kind() == LineageEvent.Kind.RELEASE && last.get(key) == LineageEvent.Kind.PREEMPT) {
                last.put(key, LineageEvent.Kind.RELEASE);
                continue;
            }
            if (last.get(key) == LineageEvent.Kind.PREEMPT) {
                throw new AssertionError("page epoch " + key + ": " + ev.kind() + " after PREEMPT");
            }
            last.put(key, ev.kind());
        }
        assertThat(lineage).filteredOn(ev -> ev.kind() == LineageEvent.Kind.PREEMPT).isNotEmpty();
    }

    @Test
    void aRequestPreemptedTooOftenFailsWithAClearErrorAndTheOthersFinish() throws Exception {
        List<GenerationRequest> reqs = workload();
        CountingMetrics metrics = new CountingMetrics();
        List<RequestHandle> handles = new ArrayList<>();
        try (Engine e = Engine.builder(model, tight().maxPreemptions(0).build()).metrics(metrics).stepped().build()) {
            for (GenerationRequest r : reqs) {
                handles.add(e.submit(r, TokenListener.NONE));
            }
            runUntilIdle(e);
            assertAllFree(e.decodeKv());
            assertAllFree(e.prefillKv());
        }
        assertThat(metrics.get("preemption:preempted_too_often")).isGreaterThan(0);
        assertThat(metrics.get("preemption:requeued")).isZero();
        int failed = 0;
        for (int i = 0; i < reqs.size(); i++) {
            RequestHandle h = handles.get(i);
            if (h.state() instanceof RequestState.Failed f) {
                failed++;
                assertThat(f.code()).isEqualTo("preempted_too_often");
                assertThatThrownBy(() -> h.result().get(0, TimeUnit.SECONDS)).isInstanceOf(ExecutionException.class)
                        .cause().isInstanceOfSatisfying(RequestFailedException.class, ex -> {
                            assertThat(ex.code()).isEqualTo("preempted_too_often");
                            assertThat(ex.getMessage()).contains("more than 0 times");
                        });
            } else {
                assertThat(h.result().get(0, TimeUnit.SECONDS).outputTokens()).as("request " + i)
                        .isEqualTo(alone(reqs.get(i)));
            }
        }
        assertThat(failed).isEqualTo(metrics.get("preemption:preempted_too_often"));
    }

    @Test
    void theDoorStillRefusesWhatCanNeverFitWithTheSameError() throws Exception {
        try (Engine e = Engine.builder(model, tight().build()).stepped().build()) {
            RequestHandle h = e.submit(new GenerationRequest("t", prompt(30, 1), 99, SamplingParams.greedy()),
                    TokenListener.NONE);
            assertThatThrownBy(() -> h.result().get(0, TimeUnit.SECONDS)).cause()
                    .isInstanceOfSatisfying(RequestRejectedException.class, ex -> {
                        assertThat(ex.code()).isEqualTo("context_length_exceeded");
                        assertThat(ex.getMessage()).isEqualTo("this model's maximum context length is 128 tokens, but "
                                + "the request needs 129 (30 in the prompt + 99 max new tokens)");
                    });
            assertAllFree(e.decodeKv());
        }
    }

    @Test
    void reservationIsThePromptsPagesPlusHeadroomAndDecodeGrowsOnePageAtATime() throws Exception {
        try (Engine e = Engine.builder(model, tight().build()).stepped().build()) {
            RequestHandle h = e.submit(new GenerationRequest("t", prompt(20, 2), 100, new SamplingParams(0f, 1f, 0, true)),
                    TokenListener.NONE);
            // prompt of 20 tokens: 2 pages, plus 1 of headroom; not the 8 that prompt + max new tokens would take
            assertThat(e.decodeKv().capacityPages() - e.decodeKv().freePages()).isEqualTo(3);
            runUntilIdle(e);
            assertThat(h.result().get(0, TimeUnit.SECONDS).outputTokens()).hasSize(100);
            assertThat(e.decodeKv().peakUsedPages()).as("120 positions").isEqualTo(8);
            assertAllFree(e.decodeKv());
        }
    }
}
