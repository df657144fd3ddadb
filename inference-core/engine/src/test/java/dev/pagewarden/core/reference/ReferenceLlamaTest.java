package dev.pagewarden.core.reference;

import dev.pagewarden.core.model.LlamaWeights;
import dev.pagewarden.core.model.ModelConfig;
import org.junit.jupiter.api.Test;

import java.util.Arrays;
import java.util.List;
import java.util.Random;

import static dev.pagewarden.core.reference.TinyModels.identity;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.assertj.core.api.Assertions.within;

/** The reference forward pass on tiny in-memory models whose outputs can be worked out by hand. */
class ReferenceLlamaTest {
    private static final float EPS = 1e-5f;
    /** The same epsilon as a double, so the hand computations below never round to float. */
    private static final double E = EPS;
    private static final double TOL = 1e-12;

    /** dim 4, two query heads sharing one KV head (head size 2), hidden 1, vocab 4. */
    private static final ModelConfig DIM4 = new ModelConfig(4, 1, 1, 2, 1, 4, 8, EPS, 10000f, false);

    // token 0 = [1,-1,1,-1] and token 1 = [2,0,0,0] both have mean square 1
    private static final float[] EMBEDDING = {1, -1, 1, -1, 2, 0, 0, 0, 0, 0, 0, 1, 0, 0, 1, 0};
    // v = (x0, x1) of the normalised input
    private static final float[] WV_FIRST_TWO = {1, 0, 0, 0, 0, 1, 0, 0};

    private static float[] randomValues(int n, long seed) {
        Random rnd = new Random(seed);
        float[] a = new float[n];
        for (int i = 0; i < n; i++) {
            a[i] = (float) rnd.nextGaussian();
        }
        return a;
    }

    private static double[] rmsnormPlain(double... x) {
        double ss = Arrays.stream(x).map(v -> v * v).sum() / x.length;
        return Arrays.stream(x).map(v -> v / Math.sqrt(ss + E)).toArray();
    }

    @Test
    void singlePositionAttendsOnlyToItsOwnValue() {
        // q and k are random: at position 0 the softmax over one score is 1 whatever they are
        LlamaWeights w = TinyModels.oneLayer(DIM4, EMBEDDING, randomValues(16, 1), randomValues(8, 2), WV_FIRST_TWO,
                identity(4), new float[]{1, 0, 0, 0}, new float[]{1, 0, 0, 0}, new float[]{0, 1, 0, 0}, identity(4));
        double[] logits = new ReferenceLlama(w).forward(0, 0);

        double s = 1 / Math.sqrt(1 + E);            // rmsnorm of [1,-1,1,-1]
        double a = 1 + s;                              // after attention: x = a * [1,-1,1,-1] (v = [s,-s] per head)
        double r = a / Math.sqrt(a * a + E);         // its rmsnorm: r * [1,-1,1,-1]
        double ffn = r / (1 + Math.exp(-r)) * -r;      // w2(silu(w1 h) * w3 h) = silu(h0) * h1 into x0
        double[] expected = rmsnormPlain(a + ffn, -a, a, -a);
        for (int i = 0; i < 4; i++) {
            assertThat(logits[i]).as("logit %d", i).isCloseTo(expected[i], within(TOL));
        }
    }

    @Test
    void zeroQueriesAverageTheCachedValues() {
        // wq = 0 makes every score 0, so position 1 attends equally to positions 0 and 1; FFN is zero
        float[] zeroFfn = new float[4];
        LlamaWeights w = TinyModels.oneLayer(DIM4, EMBEDDING, new float[16], randomValues(8, 3), WV_FIRST_TWO,
                identity(4), zeroFfn, zeroFfn, zeroFfn, identity(4));
        ReferenceLlama model = new ReferenceLlama(w);
        model.forward(0, 0);
        double[] logits = model.forward(1, 1);

        double s = 1 / Math.sqrt(1 + E);
        // v at pos 0 = [s, -s], at pos 1 = [2s, 0]; mean [1.5s, -0.5s] for both heads; x = [2,0,0,0] + that
        double[] expected = rmsnormPlain(2 + 1.5 * s, -0.5 * s, 1.5 * s, -0.5 * s);
        for (int i = 0; i < 4; i++) {
            assertThat(logits[i]).as("logit %d", i).isCloseTo(expected[i], within(TOL));
        }
    }

    @Test
    void queryHeadsShareKvHeadsInConsecutiveGroups() {
        // dim 8, 4 query heads of size 2, 2 KV heads: heads 0,1 read KV head 0 and heads 2,3 KV head 1
        ModelConfig c = new ModelConfig(8, 1, 1, 4, 2, 8, 4, EPS, 10000f, false);
        float[] emb = new float[64];
        Arrays.fill(emb, 0, 8, 1f); // token 0 = all ones, mean square 1
        float[] wv = new float[4 * 8];
        for (int i = 0; i < 4; i++) {
            wv[i * 8 + i] = i + 1; // v = s * [1, 2 | 3, 4]
        }
        float[] zeroFfn = new float[8];
        LlamaWeights w = TinyModels.oneLayer(c, emb, randomValues(64, 4), randomValues(32, 5), wv, identity(8),
                zeroFfn, zeroFfn, zeroFfn, identity(8));
        double[] logits = new ReferenceLlama(w).forward(0, 0);

        double s = 1 / Math.sqrt(1 + E);
        double[] expected = rmsnormPlain(1 + s, 1 + 2 * s, 1 + s, 1 + 2 * s, 1 + 3 * s, 1 + 4 * s, 1 + 3 * s, 1 + 4 * s);
        for (int i = 0; i < 8; i++) {
            assertThat(logits[i]).as("logit %d", i).isCloseTo(expected[i], within(TOL));
        }
    }

    @Test
    void ropeRotatesAdjacentPairsPerHead() {
        // head size 4: pair (0,1) turns by pos * 1, pair (2,3) by pos / 10000^(2/4) = pos * 0.01
        double[] v = {1, 0, 1, 0, 0, 1, 0, 1};
        ReferenceLlama.rope(v, 4, 1, 10000);
        double[] expected = {Math.cos(1), Math.sin(1), Math.cos(0.01), Math.sin(0.01),
                -Math.sin(1), Math.cos(1), -Math.sin(0.01), Math.cos(0.01)};
        for (int i = 0; i < v.length; i++) {
            assertThat(v[i]).as("element %d", i).isCloseTo(expected[i], within(TOL));
        }
        double[] same = {3, 4, 5, 6};
        ReferenceLlama.rope(same, 4, 0, 10000);
        assertThat(same).containsExactly(3, 4, 5, 6);
    }

    @Test
    void ropeScoresDependOnlyOnRelativePosition() {
        Random rnd = new Random(6);
        double[] q = rnd.doubles(8).toArray();
        double[] k = rnd.doubles(8).toArray();
        assertThat(rotatedDot(q, k, 9, 4)).isCloseTo(rotatedDot(q, k, 5, 0), within(TOL))
                .isCloseTo(rotatedDot(q, k, 300, 295), within(1e-9));
    }

    private static double rotatedDot(double[] q, double[] k, int qPos, int kPos) {
        double[] qr = q.clone();
        double[] kr = k.clone();
        ReferenceLlama.rope(qr, 8, qPos, 10000);
        ReferenceLlama.rope(kr, 8, kPos, 10000);
        double dot = 0;
        for (int i = 0; i < q.length; i++) {
            dot += qr[i] * kr[i];
        }
        return dot;
    }

    @Test
    void randomGqaModelIsFiniteDeterministicAndRestartable() {
        ModelConfig c = new ModelConfig(16, 24, 2, 4, 2, 32, 16, EPS, 10000f, false);
        LlamaWeights w = TinyModels.random(c, 7);
        int[] tokens = new Random(8).ints(16, 0, 32).toArray();
        ReferenceLlama model = new ReferenceLlama(w);
        double[][] first = new double[16][];
        for (int pos = 0; pos < 16; pos++) {
            first[pos] = model.forward(tokens[pos], pos);
            assertThat(first[pos]).hasSize(32);
            assertThat(Arrays.stream(first[pos]).allMatch(Double::isFinite)).isTrue();
            assertThat(Arrays.stream(first[pos]).distinct().count()).isGreaterThan(1);
        }
        ReferenceLlama fresh = new ReferenceLlama(w);
        for (int pos = 0; pos < 16; pos++) {
            assertThat(fresh.forward(tokens[pos], pos)).containsExactly(first[pos]);
            assertThat(model.forward(tokens[pos], pos)).containsExactly(first[pos]); // restart from 0 reuses the cache
        }
        // later positions do see the earlier ones
        ReferenceLlama other = new ReferenceLlama(w);
        other.forward((tokens[0] + 1) % 32, 0);
        assertThat(other.forward(tokens[1], 1)).isNotEqualTo(first[1]);
    }

    @Test
    void badTokensAndPositionsAreRejected() {
        ReferenceLlama model = new ReferenceLlama(TinyModels.random(new ModelConfig(8, 8, 1, 2, 1, 8, 4, EPS, 10000f, true), 9));
        assertThatThrownBy(() -> model.forward(8, 0)).hasMessageContaining("token id 8");
        assertThatThrownBy(() -> model.forward(0, 1)).hasMessageContaining("position 1");
        model.forward(0, 0);
        model.forward(0, 1);
        assertThatThrownBy(() -> model.forward(0, 3)).hasMessageContaining("position 3");
        assertThatThrownBy(() -> ReferenceLlama.greedy(model, new int[]{1, 2}, 3)).hasMessageContaining("seq_len 4");
        assertThatThrownBy(() -> ReferenceLlama.greedy(model, new int[0], 1)).hasMessageContaining("prompt");
    }

    @Test
    void greedyPicksTheArgmaxAndReportsTheMargin() {
        assertThat(ReferenceLlama.top2(new double[]{1, 3, 3, 0})).isEqualTo(new ReferenceLlama.Step(1, 2, 0));
        assertThat(ReferenceLlama.top2(new double[]{5, 1, 2.5})).isEqualTo(new ReferenceLlama.Step(0, 2, 2.5));
        assertThat(ReferenceLlama.top2(new double[]{-1, -4, 2})).isEqualTo(new ReferenceLlama.Step(2, 0, 3));

        ModelConfig c = new ModelConfig(16, 24, 2, 4, 2, 32, 16, EPS, 10000f, true);
        ReferenceLlama model = new ReferenceLlama(TinyModels.random(c, 10));
        int[] prompt = {1, 5, 7};
        List<ReferenceLlama.Step> steps = ReferenceLlama.greedySteps(model, prompt, 13);
        assertThat(steps).hasSize(13).allMatch(s -> s.margin() >= 0 && s.token() != s.runnerUp());
        int[] tokens = ReferenceLlama.greedy(model, prompt, 13);
        assertThat(tokens).containsExactly(steps.stream().mapToInt(ReferenceLlama.Step::token).toArray());
        // step 0's token is the argmax after the prompt
        ReferenceLlama fresh = new ReferenceLlama(TinyModels.random(c, 10));
        double[] logits = null;
        for (int pos = 0; pos < prompt.length; pos++) {
            logits = fresh.forward(prompt[pos], pos);
        }
        assertThat(tokens[0]).isEqualTo(ReferenceLlama.top2(logits).token());
    }
}
