package dev.pagewarden.core.engine;

import dev.pagewarden.core.testing.RealModelTest;
import dev.pagewarden.core.kv.KvPool;
import dev.pagewarden.core.model.Llama2cLoader;
import dev.pagewarden.core.model.load.LoadedModel;
import dev.pagewarden.core.request.GenerationRequest;
import dev.pagewarden.core.request.GenerationResult;
import dev.pagewarden.core.request.RequestHandle;
import dev.pagewarden.core.request.TokenListener;
import dev.pagewarden.core.sampling.SamplingParams;
import dev.pagewarden.core.spi.EngineMetrics;
import dev.pagewarden.core.testing.TestModels;
import dev.pagewarden.core.tokenizer.TokenizerBin;
import org.junit.jupiter.api.Test;

import java.lang.foreign.Arena;
import java.util.ArrayList;
import java.util.List;
import java.util.SplittableRandom;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The isolation oracle on the real model: 16 requests of mixed lengths through prefill -> transfer
 * -> decode, batched together, must give exactly what each gives alone on a fresh engine.
 */
class ContinuousBatchingTest extends RealModelTest {



    static List<GenerationRequest> workload(int n, long seed) {
        SplittableRandom rnd = new SplittableRandom(seed);
        List<GenerationRequest> list = new ArrayList<>();
        for (int i = 0; i < n; i++) {
            int len = 1 + rnd.nextInt(70);
            int[] prompt = new int[len];
            prompt[0] = 1; // BOS
            for (int t = 1; t < len; t++) {
                prompt[t] = 3 + rnd.nextInt(509);
            }
            int maxNew = 5 + rnd.nextInt(60);
            SamplingParams sampling = i % 3 == 0 ? new SamplingParams(0.8f, 0.9f, 1000 + i) : SamplingParams.greedy();
            list.add(new GenerationRequest("tenant-" + (i % 4), prompt, maxNew, sampling));
        }
        return list;
    }

    /** All of {@code reqs} submitted at once to one fresh engine: their results, in order. */
    static List<GenerationResult> together(List<GenerationRequest> reqs, int timeoutSeconds) throws Exception {
        try (Engine e = Engine.builder(model, EngineConfig.builder().backend("cpu").build()).build()) {
            List<RequestHandle> handles = new ArrayList<>();
            for (GenerationRequest r : reqs) {
                handles.add(e.submit(r, TokenListener.NONE));
            }
            List<GenerationResult> out = new ArrayList<>();
            for (RequestHandle h : handles) {
                out.add(h.result().get(timeoutSeconds, TimeUnit.SECONDS));
            }
            return out;
        }
    }

    static GenerationResult alone(GenerationRequest r) throws Exception {
        try (Engine e = Engine.builder(model, EngineConfig.builder().backend("cpu").build()).build()) {
            return e.submit(r, TokenListener.NONE).result().get(60, TimeUnit.SECONDS);
        }
    }

    @Test
    void batchedOutputsEqualIsolatedOutputsAndPagesReturn() throws Exception {
        List<GenerationRequest> reqs = workload(16, 42);
        AtomicInteger maxBatch = new AtomicInteger();
        EngineMetrics metrics = new EngineMetrics() {
            @Override
            public void decodeStep(int batchSize, long nanos) {
                maxBatch.accumulateAndGet(batchSize, Math::max);
            }
        };
        List<GenerationResult> batched = new ArrayList<>();
        try (Engine engine = Engine.builder(model, EngineConfig.builder().backend("cpu").build()).metrics(metrics).build()) {
            List<RequestHandle> handles = new ArrayList<>();
            for (GenerationRequest r : reqs) {
                handles.add(engine.submit(r, TokenListener.NONE));
            }
            for (RequestHandle h : handles) {
                batched.add(h.result().get(120, TimeUnit.SECONDS));
            }
            assertAllFree(engine.prefillKv());
            assertAllFree(engine.decodeKv());
        }
        assertThat(maxBatch.get()).as("largest decode batch").isGreaterThan(1);
        for (int i = 0; i < reqs.size(); i++) {
            assertThat(batched.get(i).outputTokens()).as("request %d", i).isEqualTo(alone(reqs.get(i)).outputTokens());
        }
    }

    static void assertAllFree(KvPool pool) throws InterruptedException {
        // Prefill pages are freed by the transfer thread right after the receiver's answer.
        for (int i = 0; i < 100 && pool.freePages() != pool.capacityPages(); i++) {
            Thread.sleep(10);
        }
        assertThat(pool.freePages()).as(pool.name() + " free pages").isEqualTo(pool.capacityPages());
    }

    @Test
    void greedyStoryIsFluent() throws Exception {
        var vocab = model.vocabulary();
        try (Engine engine = Engine.builder(model, EngineConfig.builder().backend("cpu").build()).build()) {
            GenerationResult r = engine.submit(new GenerationRequest("t", new int[]{1}, 200, SamplingParams.greedy()),
                    TokenListener.NONE).result().get(60, TimeUnit.SECONDS);
            StringBuilder sb = new StringBuilder();
            for (int t : r.outputTokens()) {
                sb.append(vocab.tokens().get(t));
            }
            System.out.println(sb);
            assertThat(sb.toString()).contains("Lily");
        }
    }
}
