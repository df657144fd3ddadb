package dev.pagewarden.core.sampling;

import org.junit.jupiter.api.Test;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.Comparator;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.SplittableRandom;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.assertj.core.api.Assertions.within;

/**
 * Each logit control against numbers worked out by hand, and the whole chain against an independent
 * double-precision implementation of the documented order on random small vocabularies.
 */
class SamplingControlsTest {

    private static float[] dist(SamplingParams p, float[] logits, int[] prompt, int... output) {
        Sampler s = new Sampler(p, prompt);
        for (int t : output) {
            s.skipDraw(t);
        }
        return s.distribution(logits);
    }

    private static float[] logs(double... probs) {
        float[] out = new float[probs.length];
        for (int i = 0; i < probs.length; i++) {
            out[i] = (float) Math.log(probs[i]);
        }
        return out;
    }

    @Test
    void logitBiasAddsToTheLogit() {
        // logits 0, 0, 0 with +ln 2 on token 1: probabilities 1/4, 1/2, 1/4
        SamplingParams p = new SamplingParams(1f, 1f, 1).withLogitBias(Map.of(1, (float) Math.log(2)));
        assertThat(dist(p, new float[]{0, 0, 0}, new int[0])).containsExactly(new float[]{0.25f, 0.5f, 0.25f}, within(1e-6f));
        // -100 all but bans a token, even for greedy
        SamplingParams ban = SamplingParams.greedy().withLogitBias(Map.of(2, -100f));
        assertThat(new Sampler(ban).sample(new float[]{1f, 2f, 3f})).isEqualTo(1);
    }

    @Test
    void repetitionPenaltyDividesPositiveAndMultipliesNegativeLogitsOfPromptAndOutput() {
        // penalty 2: token 0 (prompt, logit 2 -> 1), token 2 (output, logit -1 -> -2), token 1 untouched (1)
        SamplingParams p = new SamplingParams(1f, 1f, 1).withPenalties(0f, 0f, 2f);
        float[] got = dist(p, new float[]{2f, 1f, -1f}, new int[]{0}, 2);
        double z = Math.exp(1) + Math.exp(1) + Math.exp(-2);
        assertThat(got).containsExactly(new float[]{(float) (Math.exp(1) / z), (float) (Math.exp(1) / z),
                (float) (Math.exp(-2) / z)}, within(1e-6f));
    }

    @Test
    void presenceOnceFrequencyPerCountOverTheOutputOnly() {
        // output: token 0 twice, token 1 once; token 2 only in the prompt (no presence/frequency there)
        // logits 1, 1, 1, 1 -> 1 - 0.5 - 2*0.25 = 0, 1 - 0.5 - 0.25 = 0.25, 1, 1
        SamplingParams p = new SamplingParams(1f, 1f, 1).withPenalties(0.5f, 0.25f, 1f);
        float[] got = dist(p, new float[]{1f, 1f, 1f, 1f}, new int[]{2}, 0, 1, 0);
        double[] e = {Math.exp(0), Math.exp(0.25), Math.exp(1), Math.exp(1)};
        double z = Arrays.stream(e).sum();
        for (int i = 0; i < 4; i++) {
            assertThat(got[i]).as("token %d", i).isCloseTo((float) (e[i] / z), within(1e-6f));
        }
        // negative penalties encourage repeats
        SamplingParams again = SamplingParams.greedy().withPenalties(-1f, 0f, 1f);
        Sampler s = new Sampler(again);
        assertThat(s.sample(new float[]{1f, 1.5f})).isEqualTo(1);
        assertThat(s.sample(new float[]{1.5f, 1f})).as("1 + 1 beats 1.5").isEqualTo(1);
    }

    @Test
    void topKKeepsTheKMostLikelyRenormalized() {
        float[] got = dist(new SamplingParams(1f, 1f, 1).withFilters(2, 0f), logs(0.1, 0.5, 0.3, 0.1), new int[0]);
        assertThat(got).containsExactly(new float[]{0f, 0.625f, 0.375f, 0f}, within(1e-6f));
        // ties at the k-th place go to the lowest id
        float[] tie = dist(new SamplingParams(1f, 1f, 1).withFilters(2, 0f), logs(0.2, 0.4, 0.2, 0.2), new int[0]);
        assertThat(tie).containsExactly(new float[]{1f / 3, 2f / 3, 0f, 0f}, within(1e-6f));
    }

    @Test
    void topPKeepsTheSmallestNucleusAboveTheMass() {
        // 0.5 + 0.3 = 0.8 > 0.7: two tokens stay
        float[] got = dist(new SamplingParams(1f, 0.7f, 1), logs(0.1, 0.5, 0.3, 0.1), new int[0]);
        assertThat(got).containsExactly(new float[]{0f, 0.625f, 0.375f, 0f}, within(1e-6f));
    }

    @Test
    void minPDropsTokensBelowAFractionOfTheMostLikely() {
        // threshold 0.5 * 0.4 = 0.2: 0.1 goes, 0.2 and 0.3 stay
        float[] got = dist(new SamplingParams(1f, 1f, 1).withFilters(0, 0.5f), logs(0.4, 0.1, 0.2, 0.3), new int[0]);
        assertThat(got).containsExactly(new float[]{4f / 9, 0f, 2f / 9, 3f / 9}, within(1e-6f));
    }

    @Test
    void temperatureComesAfterThePenaltiesAndBeforeTheFilters() {
        // bias +1 on token 0 (0 -> 1), then temperature 0.5 doubles the logits: 2, 0 -> then top_k 1 leaves token 0
        SamplingParams p = new SamplingParams(0.5f, 1f, 1).withLogitBias(Map.of(0, 1f));
        float[] got = dist(p, new float[]{0f, 0f}, new int[0]);
        assertThat(got[0]).isCloseTo((float) (Math.exp(2) / (Math.exp(2) + 1)), within(1e-6f));
        assertThat(dist(p.withFilters(1, 0f), new float[]{0f, 0f}, new int[0])).containsExactly(1f, 0f);
    }

    @Test
    void samplesStayInsideTheFilteredSupport() {
        SamplingParams p = new SamplingParams(1f, 0.9f, 77).withFilters(3, 0.3f);
        float[] logits = logs(0.3, 0.25, 0.2, 0.15, 0.1);
        // top_k 3 -> 0.3/0.75, 0.25/0.75, 0.2/0.75; top_p 0.9 keeps all three; min_p 0.3 * 0.4 = 0.12: all three
        Sampler s = new Sampler(p);
        int[] counts = new int[5];
        for (int i = 0; i < 3000; i++) {
            counts[s.sample(logits)]++;
        }
        assertThat(counts[3]).isZero();
        assertThat(counts[4]).isZero();
        assertThat(counts[0] / 3000.0).isCloseTo(0.4, within(0.04));
    }

    /** The whole chain on random vocabularies against a float64 implementation of the documented order. */
    @Test
    void theChainMatchesAnIndependentReference() {
        SplittableRandom rnd = new SplittableRandom(2024);
        for (int round = 0; round < 400; round++) {
            int n = 2 + rnd.nextInt(10);
            float[] logits = new float[n];
            for (int i = 0; i < n; i++) {
                logits[i] = (float) (rnd.nextDouble() * 8 - 4);
            }
            int[] prompt = rnd.ints(rnd.nextInt(4), 0, n).toArray();
            int[] output = rnd.ints(rnd.nextInt(6), 0, n).toArray();
            Map<Integer, Float> bias = new HashMap<>();
            if (rnd.nextBoolean()) {
                bias.put(rnd.nextInt(n), (float) (rnd.nextDouble() * 6 - 3));
            }
            float temperature = rnd.nextInt(4) == 0 ? 0f : (float) (0.3 + rnd.nextDouble() * 1.5);
            SamplingParams p = new SamplingParams(temperature, rnd.nextBoolean() ? 1f : (float) (0.3 + rnd.nextDouble() * 0.6),
                    round, false, rnd.nextBoolean() ? 0 : 1 + rnd.nextInt(n), rnd.nextBoolean() ? 0f : (float) rnd.nextDouble() * 0.5f,
                    (float) (rnd.nextDouble() * 4 - 2), (float) (rnd.nextDouble() * 4 - 2),
                    rnd.nextBoolean() ? 1f : (float) (0.5 + rnd.nextDouble() * 1.5), bias, -1);
            double[] want = reference(p, logits, prompt, output);
            float[] got = dist(p, logits, prompt, output);
            for (int i = 0; i < n; i++) {
                assertThat((double) got[i]).as("round %d token %d, %s", round, i, p).isCloseTo(want[i], within(2e-5));
            }
        }
    }

    /** logit_bias, repetition, presence/frequency, temperature (or argmax), top_k, top_p, min_p - in doubles. */
    private static double[] reference(SamplingParams p, float[] logits, int[] prompt, int[] output) {
        int n = logits.length;
        double[] x = new double[n];
        for (int i = 0; i < n; i++) {
            x[i] = logits[i] + p.logitBias().getOrDefault(i, 0f);
        }
        int[] count = new int[n];
        for (int t : output) {
            count[t]++;
        }
        boolean[] seen = new boolean[n];
        for (int t : prompt) {
            seen[t] = true;
        }
        for (int t : output) {
            seen[t] = true;
        }
        for (int i = 0; i < n; i++) {
            if (seen[i]) {
                x[i] = x[i] > 0 ? x[i] / p.repetitionPenalty() : x[i] * p.repetitionPenalty();
            }
            if (count[i] > 0) {
                x[i] -= p.presencePenalty() + (double) p.frequencyPenalty() * count[i];
            }
        }
        double[] out = new double[n];
        if (p.temperature() == 0f) {
            int best = 0;
            for (int i = 1; i < n; i++) {
                if (x[i] > x[best]) {
                    best = i;
                }
            }
            out[best] = 1;
            return out;
        }
        double max = Arrays.stream(x).max().orElseThrow();
        double[] prob = new double[n];
        for (int i = 0; i < n; i++) {
            prob[i] = Math.exp((x[i] - max) / p.temperature());
        }
        normalize(prob);
        List<Integer> byProb = new ArrayList<>();
        for (int i = 0; i < n; i++) {
            byProb.add(i);
        }
        byProb.sort(Comparator.comparingDouble((Integer i) -> -prob[i]).thenComparingInt(i -> i));
        if (p.topK() > 0) {
            for (int r = p.topK(); r < n; r++) {
                prob[byProb.get(r)] = 0;
            }
            normalize(prob);
        }
        if (p.topP() < 1f) {
            double cum = 0;
            int r = 0;
            for (; r < n; r++) {
                cum += prob[byProb.get(r)];
                if (cum > p.topP()) {
                    break;
                }
            }
            for (int q = r + 1; q < n; q++) {
                prob[byProb.get(q)] = 0;
            }
        }
        double top = prob[byProb.getFirst()];
        for (int i = 0; i < n; i++) {
            if (prob[i] < p.minP() * top) {
                prob[i] = 0;
            }
        }
        normalize(prob);
        return prob;
    }

    private static void normalize(double[] v) {
        double sum = Arrays.stream(v).sum();
        for (int i = 0; i < v.length; i++) {
            v[i] /= sum;
        }
    }

    @Test
    void logprobsAreTheRawLogSoftmaxAgainstFloat64() {
        SplittableRandom rnd = new SplittableRandom(7);
        for (int round = 0; round < 50; round++) {
            int n = 5 + rnd.nextInt(600);
            float[] logits = new float[n];
            double scale = round % 5 == 0 ? 1000 : 10; // large magnitudes: a naive exp would overflow
            for (int i = 0; i < n; i++) {
                logits[i] = (float) (rnd.nextDouble() * scale - scale / 2);
            }
            int token = rnd.nextInt(n);
            TokenLogprobs lp = Sampler.logprobs(logits, token, 5);
            double max = Double.NEGATIVE_INFINITY;
            for (float l : logits) {
                max = Math.max(max, l);
            }
            java.math.BigDecimal sum = java.math.BigDecimal.ZERO;
            for (float l : logits) {
                sum = sum.add(java.math.BigDecimal.valueOf(Math.exp(l - max)));
            }
            double lse = max + Math.log(sum.doubleValue());
            assertThat((double) lp.chosen().logprob()).isCloseTo(logits[token] - lse, within(1e-6 * Math.max(1, Math.abs(logits[token] - lse))));
            Integer[] ids = new Integer[n];
            for (int i = 0; i < n; i++) {
                ids[i] = i;
            }
            Arrays.sort(ids, Comparator.comparingDouble((Integer i) -> -logits[i]).thenComparingInt(i -> i));
            assertThat(lp.top()).hasSize(5);
            for (int r = 0; r < 5; r++) {
                assertThat(lp.top().get(r).token()).isEqualTo(ids[r]);
                assertThat((double) lp.top().get(r).logprob()).isCloseTo(logits[ids[r]] - lse, within(1e-5));
            }
        }
    }

    @Test
    void logprobsIgnoreTheControlsAndSamplingReturnsThem() {
        // bias moves the choice, not the reported (raw) log probabilities
        SamplingParams p = SamplingParams.greedy().withLogitBias(Map.of(0, 10f)).withLogprobs(1);
        Sampler s = new Sampler(p);
        float[] logits = logs(0.25, 0.75);
        assertThat(s.sample(logits)).isZero();
        assertThat(s.lastLogprobs().chosen().token()).isZero();
        assertThat((double) s.lastLogprobs().chosen().logprob()).isCloseTo(Math.log(0.25), within(1e-6));
        assertThat(s.lastLogprobs().top()).containsExactly(new TokenLogprobs.Logprob(1, s.lastLogprobs().top().getFirst().logprob()));
        assertThat((double) s.lastLogprobs().top().getFirst().logprob()).isCloseTo(Math.log(0.75), within(1e-6));
        assertThat(new Sampler(SamplingParams.greedy()).lastLogprobs()).isNull();
    }

    @Test
    void outOfRangeValuesAreRefused() {
        SamplingParams g = SamplingParams.greedy();
        assertThatThrownBy(() -> g.withFilters(-1, 0f)).hasMessageContaining("top_k");
        assertThatThrownBy(() -> g.withFilters(0, 1.5f)).hasMessageContaining("min_p");
        assertThatThrownBy(() -> g.withPenalties(2.5f, 0f, 1f)).hasMessageContaining("presence_penalty");
        assertThatThrownBy(() -> g.withPenalties(0f, -3f, 1f)).hasMessageContaining("frequency_penalty");
        assertThatThrownBy(() -> g.withPenalties(0f, 0f, 0f)).hasMessageContaining("repetition_penalty");
        assertThatThrownBy(() -> g.withLogitBias(Map.of(1, 101f))).hasMessageContaining("logit_bias");
        assertThatThrownBy(() -> g.withLogprobs(21)).hasMessageContaining("20");
    }
}
