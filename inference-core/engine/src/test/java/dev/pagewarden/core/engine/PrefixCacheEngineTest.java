package dev.pagewarden.core.engine;

import dev.pagewarden.core.kv.KvPool;
import dev.pagewarden.core.request.GenerationRequest;
import dev.pagewarden.core.request.GenerationResult;
import dev.pagewarden.core.request.PrefixCaching;
import dev.pagewarden.core.request.TokenListener;
import dev.pagewarden.core.sampling.SamplingParams;
import dev.pagewarden.core.spi.EngineMetrics;
import dev.pagewarden.core.testing.IsolationFixtures;
import dev.pagewarden.core.testing.RealModelTest;
import org.junit.jupiter.api.Test;

import java.util.Arrays;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The batch-invariance oracle extended to prefix reuse: a request whose prompt starts with cached pages of its
 * scope answers bit for bit what it answers with the cache off and alone on a fresh engine; another tenant or
 * another prompt cache key never hits.
 */
class PrefixCacheEngineTest extends RealModelTest {
    static final int PAGE = 16;

    private static EngineConfig config(boolean cache) {
        return EngineConfig.builder().backend("cpu").prefillChunkTokens(24).prefixCache(cache).build();
    }

    private static GenerationRequest request(String tenant, int[] prompt, SamplingParams sampling, PrefixCaching caching) {
        return new GenerationRequest(tenant, prompt, 24, sampling, caching);
    }

    private static GenerationResult run(Engine engine, GenerationRequest r) throws Exception {
        GenerationResult result = engine.submit(r, TokenListener.NONE).result().get(60, TimeUnit.SECONDS);
        // prefill pages are kept or freed by the transfer thread right after the receiver's ack
        KvPool prefill = engine.prefillKv();
        assertThat(IsolationFixtures.eventually(5_000,
                () -> prefill.freePages() + prefill.cachedPages() == prefill.capacityPages())).isTrue();
        return result;
    }

    private static GenerationResult alone(GenerationRequest r) throws Exception {
        try (Engine e = Engine.builder(model, config(false)).build()) {
            return run(e, r);
        }
    }

    @Test
    void aHitAnswersBitForBitWhatTheSameRequestAnswersWithoutTheCache() throws Exception {
        int[] prompt = IsolationFixtures.prompt(70, 11);
        PrefixCaching tenantWide = PrefixCaching.on(null, "completion");
        AtomicInteger hitTokens = new AtomicInteger();
        AtomicInteger missTokens = new AtomicInteger();
        AtomicInteger cachedPages = new AtomicInteger();
        EngineMetrics metrics = new EngineMetrics() {
            @Override
            public void prefixCacheLookup(int hit, int miss) {
                hitTokens.addAndGet(hit);
                missTokens.addAndGet(miss);
            }

            @Override
            public void prefixCachePages(int pages) {
                cachedPages.set(pages);
            }
        };
        for (SamplingParams sampling : new SamplingParams[] {SamplingParams.greedy(), new SamplingParams(0.8f, 0.9f, 77)}) {
            GenerationRequest a = request("tenant-a", prompt, sampling, tenantWide);
            hitTokens.set(0);
            missTokens.set(0);
            try (Engine engine = Engine.builder(model, config(true)).metrics(metrics).build()) {
                GenerationResult first = run(engine, a);
                assertThat(first.cachedTokens()).isZero();
                assertThat(engine.prefillKv().cachedPages()).as("the full pages of 70 tokens").isEqualTo(70 / PAGE);

                GenerationResult hit = run(engine, a);
                // every full page but one that would hold the last prompt token, whose logits give the first output
                assertThat(hit.cachedTokens()).isEqualTo((70 - 1) / PAGE * PAGE);
                assertThat(hit.outputTokens()).isEqualTo(first.outputTokens());

                // another tenant, or the same tenant under a prompt cache key, with the very same prompt: no hit
                GenerationResult other = run(engine, request("tenant-b", prompt, sampling, tenantWide));
                assertThat(other.cachedTokens()).isZero();
                assertThat(other.outputTokens()).isEqualTo(first.outputTokens());
                GenerationResult keyed = run(engine, request("tenant-a", prompt, sampling, PrefixCaching.on("k1", "completion")));
                assertThat(keyed.cachedTokens()).isZero();
                GenerationResult keyedAgain = run(engine, request("tenant-a", prompt, sampling, PrefixCaching.on("k1", "completion")));
                assertThat(keyedAgain.cachedTokens()).isEqualTo(64);
                assertThat(keyedAgain.outputTokens()).isEqualTo(first.outputTokens());

                // a next turn: the previous prompt and answer, then new tokens, starts with the cached pages
                int[] next = Arrays.copyOf(prompt, prompt.length + first.outputTokens().length + 9);
                System.arraycopy(first.outputTokens(), 0, next, prompt.length, first.outputTokens().length);
                for (int i = prompt.length + first.outputTokens().length; i < next.length; i++) {
                    next[i] = 40 + i % 300;
                }
                GenerationRequest turn = request("tenant-a", next, sampling, tenantWide);
                GenerationResult turnHit = run(engine, turn);
                assertThat(turnHit.cachedTokens()).isEqualTo(64);
                assertThat(turnHit.outputTokens()).isEqualTo(alone(turn).outputTokens());

                assertThat(hitTokens.get()).isEqualTo(64 * 3);
                assertThat(missTokens.get()).isPositive();
                assertThat(cachedPages.get()).isEqualTo(engine.prefillKv().cachedPages());
                try (Engine off = Engine.builder(model, config(false)).build()) {
                    GenerationResult noCache = run(off, a);
                    assertThat(noCache.cachedTokens()).isZero();
                    assertThat(hit.outputTokens()).isEqualTo(noCache.outputTokens());
                    assertThat(off.prefillKv().cachedPages()).isZero();
                }
                assertThat(hit.outputTokens()).isEqualTo(alone(a).outputTokens());
            }
        }
    }

    @Test
    void aRequestWithCachingOffNeitherReusesNorLeavesPages() throws Exception {
        int[] prompt = IsolationFixtures.prompt(40, 3);
        try (Engine engine = Engine.builder(model, config(true)).build()) {
            run(engine, request("tenant-a", prompt, SamplingParams.greedy(), PrefixCaching.OFF));
            assertThat(engine.prefillKv().cachedPages()).isZero();
            run(engine, request("tenant-a", prompt, SamplingParams.greedy(), PrefixCaching.on(null, null)));
            assertThat(engine.prefillKv().cachedPages()).isEqualTo(2);
            GenerationResult off = run(engine, request("tenant-a", prompt, SamplingParams.greedy(), PrefixCaching.OFF));
            assertThat(off.cachedTokens()).isZero();
        }
    }

    @Test
    void cachedPagesMakeRoomForNewPromptsInsteadOfHoldingThemBack() throws Exception {
        // a prefill pool of 8 pages: every new prompt of 5 full pages evicts the older cached ones
        EngineConfig small = config(true).toBuilder().contextWindow(128).poolTokens(128, 512).build();
        try (Engine engine = Engine.builder(model, small).build()) {
            for (int seed = 0; seed < 4; seed++) {
                GenerationResult r = run(engine, request("tenant-a", IsolationFixtures.prompt(90, seed),
                        SamplingParams.greedy(), PrefixCaching.on(null, null)));
                assertThat(r.cachedTokens()).isZero();
            }
            assertThat(engine.prefillKv().cacheEvictions()).isPositive();
        }
    }
}
