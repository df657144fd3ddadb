package dev.pagewarden.core.engine;

import dev.pagewarden.core.testing.RealModelTest;
import dev.pagewarden.core.model.Llama2cLoader;
import dev.pagewarden.core.model.load.LoadedModel;
import dev.pagewarden.core.request.GenerationRequest;
import dev.pagewarden.core.request.GenerationResult;
import dev.pagewarden.core.request.InvalidRequestException;
import dev.pagewarden.core.request.RequestAbortedException;
import dev.pagewarden.core.request.RequestHandle;
import dev.pagewarden.core.request.RequestRejectedException;
import dev.pagewarden.core.request.RequestState;
import dev.pagewarden.core.request.TokenListener;
import dev.pagewarden.core.sampling.SamplingParams;
import dev.pagewarden.core.spi.EngineMetrics;
import dev.pagewarden.core.testing.TestModels;
import dev.pagewarden.core.tokenizer.TokenizerBin;
import org.junit.jupiter.api.Test;

import java.lang.foreign.Arena;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutionException;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

class EngineBehaviourTest extends RealModelTest {



    static Engine engine(EngineConfig cfg) {
        return Engine.builder(model, cfg.toBuilder().backend("cpu").build()).build();
    }

    static int[] prompt(int len) {
        int[] p = new int[len];
        p[0] = 1;
        for (int i = 1; i < len; i++) {
            p[i] = 3 + (i * 37) % 500;
        }
        return p;
    }

    @Test
    void badInputIsRefusedWithTheParameterNamed() {
        assertThatThrownBy(() -> new GenerationRequest("t", new int[0], 5, SamplingParams.greedy()))
                .isInstanceOfSatisfying(InvalidRequestException.class, e -> assertThat(e.param()).isEqualTo("prompt"))
                .hasMessageContaining("empty");
        assertThatThrownBy(() -> new GenerationRequest("t", prompt(3), 0, SamplingParams.greedy()))
                .isInstanceOfSatisfying(InvalidRequestException.class, e -> assertThat(e.param()).isEqualTo("max_tokens"));
        assertThatThrownBy(() -> new GenerationRequest("t", prompt(3), -4, SamplingParams.greedy()))
                .hasMessageContaining("-4");
        assertThatThrownBy(() -> new SamplingParams(-1f, 1f, 0)).hasMessageContaining("temperature");
        assertThatThrownBy(() -> new SamplingParams(1f, 0f, 0)).hasMessageContaining("top_p");
        try (Engine e = engine(EngineConfig.defaults())) {
            assertThatThrownBy(() -> e.submit(new GenerationRequest("t", new int[]{1, 512}, 5, SamplingParams.greedy()),
                    TokenListener.NONE)).isInstanceOf(InvalidRequestException.class).hasMessageContaining("512");
        }
    }

    @Test
    void overlongRequestIsRejectedBeforeAnyPageIsReserved() {
        try (Engine e = engine(EngineConfig.defaults())) {
            assertThat(e.contextWindow()).isEqualTo(512);
            RequestHandle h = e.submit(new GenerationRequest("t", prompt(500), 13, SamplingParams.greedy()), TokenListener.NONE);
            assertThatThrownBy(() -> h.result().get(5, TimeUnit.SECONDS))
                    .hasCauseInstanceOf(RequestRejectedException.class)
                    .hasMessageContaining("512").hasMessageContaining("513");
            assertThat(h.state()).isInstanceOf(RequestState.Rejected.class);
            assertThat(((RequestState.Rejected) h.state()).code()).isEqualTo("context_length_exceeded");
            assertThat(e.decodeKv().peakUsedPages()).isZero();
            assertThat(e.prefillKv().peakUsedPages()).isZero();
        }
    }

    @Test
    void windowLargerThanAPoolRefusesToStartUnderStrictPolicy() {
        assertThatThrownBy(() -> engine(EngineConfig.builder().poolTokens(128, 1024).build()))
                .isInstanceOf(IllegalStateException.class)
                .hasMessageContaining("512").hasMessageContaining("128").hasMessageContaining("strict");
    }

    @Test
    void clampPolicyLowersTheWindowAndSaysSo() {
        java.util.List<dev.pagewarden.core.safety.SafetyEvent> events = new java.util.concurrent.CopyOnWriteArrayList<>();
        try (Engine e = Engine.builder(model, EngineConfig.builder().backend("cpu").poolTokens(128, 1024)
                .capacityPolicy(CapacityPolicy.CLAMP).build()).safety(events::add).build()) {
            assertThat(e.contextWindow()).isEqualTo(128);
            assertThat(events).singleElement().satisfies(ev -> {
                assertThat(ev.type()).isEqualTo(dev.pagewarden.core.safety.SafetyEvent.Type.CAPACITY_CLAMPED);
                assertThat(ev.severity()).isEqualTo(dev.pagewarden.core.safety.SafetyEvent.Severity.WARNING);
                assertThat(ev.details()).contains("512").contains("128");
            });
        }
    }

    @Test
    void fullQueueRejectsWithRetryableOverload() throws Exception {
        // Decode pool of 64 tokens, whole reservations: one request holding 60 leaves no room; queue bound 1.
        CountDownLatch firstTokenSeen = new CountDownLatch(1);
        CountDownLatch letGo = new CountDownLatch(1);
        try (Engine e = engine(EngineConfig.builder().poolTokens(64, 64).contextWindow(64).maxQueue(1)
                .decodeHeadroomPages(EngineConfig.FULL_RESERVATION).build())) {
            RequestHandle holder = e.submit(new GenerationRequest("a", prompt(10), 50, SamplingParams.greedy()), (id, tok) -> {
                firstTokenSeen.countDown();
                try {
                    letGo.await();
                } catch (InterruptedException ex) {
                    Thread.currentThread().interrupt();
                }
            });
            assertThat(firstTokenSeen.await(30, TimeUnit.SECONDS)).isTrue();
            RequestHandle waiting = e.submit(new GenerationRequest("b", prompt(10), 40, SamplingParams.greedy()), TokenListener.NONE);
            RequestHandle refused = e.submit(new GenerationRequest("c", prompt(10), 40, SamplingParams.greedy()), TokenListener.NONE);
            assertThatThrownBy(() -> refused.result().get(5, TimeUnit.SECONDS)).cause()
                    .isInstanceOfSatisfying(RequestRejectedException.class, ex -> {
                        assertThat(ex.code()).isEqualTo("overloaded");
                        assertThat(ex.retryable()).isTrue();
                    });
            assertThat(waiting.state()).isInstanceOf(RequestState.Admitted.class);
            letGo.countDown();
            holder.result().get(60, TimeUnit.SECONDS);
            GenerationResult second = waiting.result().get(60, TimeUnit.SECONDS);
            assertThat(second.outputTokens()).isNotEmpty();
        }
    }

    @Test
    void abortMidDecodeEndsTheRequestAndFreesItsPages() throws Exception {
        AtomicReference<RequestHandle> self = new AtomicReference<>();
        CountDownLatch started = new CountDownLatch(1);
        try (Engine e = engine(EngineConfig.defaults())) {
            RequestHandle h = e.submit(new GenerationRequest("t", prompt(20), 300, SamplingParams.greedy()), (id, tok) -> {
                try {
                    started.await();
                } catch (InterruptedException ex) {
                    Thread.currentThread().interrupt();
                }
                self.get().abort("client went away");
            });
            self.set(h);
            started.countDown();
            assertThatThrownBy(() -> h.result().get(30, TimeUnit.SECONDS)).isInstanceOf(ExecutionException.class)
                    .hasCauseInstanceOf(RequestAbortedException.class).hasMessageContaining("client went away");
            assertThat(h.state()).isInstanceOf(RequestState.Aborted.class);
            ContinuousBatchingTest.assertAllFree(e.decodeKv());
            ContinuousBatchingTest.assertAllFree(e.prefillKv());
        }
    }

    @Test
    void seededSamplingIsReproducibleAndSeedsMatter() throws Exception {
        try (Engine e = engine(EngineConfig.defaults())) {
            int[] a = run(e, new SamplingParams(1.0f, 0.95f, 7));
            int[] b = run(e, new SamplingParams(1.0f, 0.95f, 7));
            int[] c = run(e, new SamplingParams(1.0f, 0.95f, 8));
            assertThat(a).isEqualTo(b);
            assertThat(a).isNotEqualTo(c);
        }
    }

    private static int[] run(Engine e, SamplingParams p) throws Exception {
        return e.submit(new GenerationRequest("t", new int[]{1}, 60, p), TokenListener.NONE)
                .result().get(60, TimeUnit.SECONDS).outputTokens();
    }

    @Test
    void stopFromTheListenerFinishesNormallyWithAReceiptRightAfterThatToken() throws Exception {
        try (Engine e = Engine.builder(model, EngineConfig.builder().backend("cpu").build()).receipts(dev.pagewarden.core.receipt.ReceiptKeys.generate("t")).build()) {
            GenerationResult full = e.submit(new GenerationRequest("t", prompt(6), 30, SamplingParams.greedy()),
                    TokenListener.NONE).result().get(30, TimeUnit.SECONDS);
            AtomicReference<RequestHandle> handle = new AtomicReference<>();
            CountDownLatch submitted = new CountDownLatch(1);
            int[] seen = new int[1];
            RequestHandle h = e.submit(new GenerationRequest("t", prompt(6), 30, SamplingParams.greedy()), (id, token) -> {
                try {
                    submitted.await(); // the handle is published before the first token is judged
                } catch (InterruptedException ex) {
                    Thread.currentThread().interrupt();
                }
                if (++seen[0] == 5) {
                    handle.get().stop(); // as a matched stop string does
                }
            });
            handle.set(h);
            submitted.countDown();
            GenerationResult stopped = h.result().get(30, TimeUnit.SECONDS);
            assertThat(stopped.finishReason()).isEqualTo(dev.pagewarden.core.request.FinishReason.STOP);
            assertThat(stopped.outputTokens()).containsExactly(java.util.Arrays.copyOf(full.outputTokens(), 5));
            assertThat(stopped.receipt()).isNotNull();
            assertThat(e.decodeKv().freePages()).isEqualTo(e.decodeKv().capacityPages());
        }
    }

    @Test
    void requestIdsStartAfterTheConfiguredBase() throws Exception {
        try (Engine e = engine(EngineConfig.builder().requestIdBase(7L << 32).build())) {
            RequestHandle h = e.submit(new GenerationRequest("t", prompt(3), 2, SamplingParams.greedy()), TokenListener.NONE);
            assertThat(h.id()).isEqualTo((7L << 32) + 1);
            assertThat(h.result().get(30, TimeUnit.SECONDS).requestId()).isEqualTo(h.id());
        }
        assertThatThrownBy(() -> EngineConfig.builder().requestIdBase(-1).build()).hasMessageContaining("request_id_base");
    }

    @Test
    void keyedRequestIdsStayInTheBlockAndDoNotCount() throws Exception {
        long base = 7L << 32;
        try (Engine e = engine(EngineConfig.builder().requestIdBase(base).requestIdKey(0x5EED).build())) {
            List<Long> ids = new java.util.ArrayList<>();
            for (int i = 0; i < 4; i++) {
                RequestHandle h = e.submit(new GenerationRequest("t", prompt(3), 1, SamplingParams.greedy()), TokenListener.NONE);
                assertThat(h.result().get(30, TimeUnit.SECONDS).requestId()).isEqualTo(h.id());
                ids.add(h.id());
            }
            assertThat(ids).doesNotHaveDuplicates().allSatisfy(id -> assertThat(id >>> 32).isEqualTo(7L));
            // a tenant comparing two of its own ids learns nothing about the requests in between
            for (int i = 1; i < ids.size(); i++) {
                assertThat(ids.get(i) - ids.get(i - 1)).isNotEqualTo(1L);
            }
        }
    }
}
