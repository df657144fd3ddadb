package dev.pagewarden.core.engine;

import dev.pagewarden.core.request.GenerationRequest;
import dev.pagewarden.core.request.GenerationResult;
import dev.pagewarden.core.request.InvalidRequestException;
import dev.pagewarden.core.request.RequestHandle;
import dev.pagewarden.core.request.TokenListener;
import dev.pagewarden.core.sampling.SamplingParams;
import dev.pagewarden.core.sampling.TokenLogprobs;
import dev.pagewarden.core.testing.RealModelTest;
import dev.pagewarden.oracle.EngineRuns;
import org.junit.jupiter.api.Test;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.assertj.core.api.Assertions.within;

/** Penalties, bias, filters, seeds and log probabilities on the real model, batched and alone. */
class SamplingControlsEngineTest extends RealModelTest {

    private static final int[] PROMPT = {1, 365, 122, 347, 261, 431};

    private static Engine engine() {
        return Engine.builder(model, EngineConfig.builder().backend("cpu").build()).build();
    }

    @Test
    void penalisedRequestsAreBitIdenticalBatchedAndAlone() throws Exception {
        List<GenerationRequest> reqs = new ArrayList<>(ContinuousBatchingTest.workload(8, 7));
        SamplingParams g = SamplingParams.greedy();
        reqs.add(new GenerationRequest("p1", PROMPT, 40, g.withPenalties(0.8f, 0.6f, 1f)));
        reqs.add(new GenerationRequest("p2", PROMPT, 40, g.withPenalties(0f, 0f, 1.5f)));
        reqs.add(new GenerationRequest("p3", PROMPT, 40, g.withPenalties(-0.5f, 0.3f, 1.2f).withLogitBias(Map.of(400, 5f))));
        reqs.add(new GenerationRequest("p4", PROMPT, 40, new SamplingParams(0.9f, 0.95f, 42)
                .withPenalties(0.4f, 0.4f, 1.1f).withFilters(20, 0.05f)));
        reqs.add(new GenerationRequest("p5", PROMPT, 40, g));
        List<GenerationResult> batched = ContinuousBatchingTest.together(reqs, 120);
        for (int i = 0; i < reqs.size(); i++) {
            assertThat(batched.get(i).outputTokens()).as("request %d", i)
                    .isEqualTo(ContinuousBatchingTest.alone(reqs.get(i)).outputTokens());
        }
        // the penalties do change the output
        int[] plain = batched.getLast().outputTokens();
        for (int i = reqs.size() - 5; i < reqs.size() - 1; i++) {
            assertThat(batched.get(i).outputTokens()).as("request %d", i).isNotEqualTo(plain);
        }
    }

    @Test
    void theSameSeedSamplesTheSameOutputAndAnotherSeedAnother() throws Exception {
        SamplingParams p = new SamplingParams(1.0f, 1f, 1234).withPenalties(0.3f, 0.2f, 1.1f);
        GenerationResult a = ContinuousBatchingTest.alone(new GenerationRequest("s", PROMPT, 48, p));
        GenerationResult b = ContinuousBatchingTest.alone(new GenerationRequest("s", PROMPT, 48, p));
        GenerationResult c = ContinuousBatchingTest.alone(new GenerationRequest("s", PROMPT, 48, p.withSeed(1235)));
        assertThat(a.outputTokens()).isEqualTo(b.outputTokens()).isNotEqualTo(c.outputTokens());
    }

    @Test
    void logprobsAreTheModelsOwnAndNameTheChosenToken() throws Exception {
        List<TokenLogprobs> seen = new CopyOnWriteArrayList<>();
        TokenListener listener = new TokenListener() {
            @Override
            public void onToken(long requestId, int token) {
                throw new AssertionError("the logprobs variant is called");
            }

            @Override
            public void onToken(long requestId, int token, TokenLogprobs logprobs) {
                assertThat(logprobs.chosen().token()).isEqualTo(token);
                seen.add(logprobs);
            }
        };
        int[] out;
        try (Engine engine = engine()) {
            out = engine.submit(new GenerationRequest("l", PROMPT, 12, SamplingParams.greedy().withLogprobs(5)), listener)
                    .result().get(60, TimeUnit.SECONDS).outputTokens();
        }
        assertThat(seen).hasSize(out.length);
        int[] all = new int[PROMPT.length + out.length];
        System.arraycopy(PROMPT, 0, all, 0, PROMPT.length);
        System.arraycopy(out, 0, all, PROMPT.length, out.length);
        float[][] rows = EngineRuns.teacherForcedLogits(model, all);
        for (int i = 0; i < out.length; i++) {
            double[] want = EngineRuns.logSoftmax(rows[PROMPT.length - 1 + i]);
            TokenLogprobs lp = seen.get(i);
            // greedy: the chosen token is the most likely, with the very same number
            assertThat(lp.top()).hasSize(5);
            assertThat(lp.top().getFirst()).isEqualTo(lp.chosen());
            assertThat((double) lp.chosen().logprob()).as("token %d", i).isCloseTo(want[out[i]], within(1e-3));
            for (TokenLogprobs.Logprob alt : lp.top()) {
                assertThat((double) alt.logprob()).isCloseTo(want[alt.token()], within(1e-3));
            }
        }
    }

    @Test
    void aBiasOutsideTheVocabularyIsRefusedNamingLogitBias() {
        try (Engine engine = engine()) {
            assertThatThrownBy(() -> engine.validate(new GenerationRequest("v", PROMPT, 4,
                    SamplingParams.greedy().withLogitBias(Map.of(512, 1f)))))
                    .isInstanceOfSatisfying(InvalidRequestException.class, e -> assertThat(e.param()).isEqualTo("logit_bias"));
        }
    }
}
