package dev.pagewarden.core.sampling;

import java.util.Arrays;

/**
 * Picks the next token from logits: greedy, or temperature + nucleus (top-p) sampling driven by a
 * per-request xorshift generator, so a seed reproduces its output on any machine and JVM.
 */
public final class Sampler {
    private final SamplingParams params;
    private long state;
    private float[] probs = new float[0];
    private Integer[] order = new Integer[0];

    public Sampler(SamplingParams params) {
        this.params = params;
        // A zero xorshift state would stay zero forever.
        this.state = params.seed() == 0 ? 0x9E3779B97F4A7C15L : params.seed();
    }

    public int sample(float[] logits) {
        if (params.isGreedy()) {
            return argmax(logits);
        }
        int n = logits.length;
        if (probs.length != n) {
            probs = new float[n];
        }
        float max = Float.NEGATIVE_INFINITY;
        for (float l : logits) {
            max = Math.max(max, l);
        }
        double sum = 0;
        for (int i = 0; i < n; i++) {
            probs[i] = (float) StrictMath.exp((logits[i] - max) / params.temperature());
            sum += probs[i];
        }
        for (int i = 0; i < n; i++) {
            probs[i] = (float) (probs[i] / sum);
        }
        float coin = nextFloat();
        return params.topP() < 1f ? nucleus(coin) : multinomial(coin);
    }

    /**
     * Continues after a token that another sampler with the same parameters drew first (a prefill node
     * samples a request's first token, its decode node the rest): consumes the draw that sampling used, so
     * the tokens after it are the ones this sampler would have drawn had it sampled the first one itself.
     */
    public void skipDraw() {
        if (!params.isGreedy()) {
            nextFloat();
        }
    }

    /** Index of the largest logit; the lowest index wins a tie. */
    public static int argmax(float[] logits) {
        int best = 0;
        for (int i = 1; i < logits.length; i++) {
            if (logits[i] > logits[best]) {
                best = i;
            }
        }
        return best;
    }

    private int multinomial(float coin) {
        float cdf = 0f;
        for (int i = 0; i < probs.length; i++) {
            cdf += probs[i];
            if (coin < cdf) {
                return i;
            }
        }
        return probs.length - 1; // rounding
    }

    /** Samples among the smallest set of most likely tokens whose mass exceeds top_p. */
    private int nucleus(float coin) {
        int n = probs.length;
        // Tokens below this cannot be in the nucleus; skipping them keeps the sort short.
        float cutoff = (1f - params.topP()) / (n - 1);
        if (order.length != n) {
            order = new Integer[n];
        }
        int m = 0;
        for (int i = 0; i < n; i++) {
            if (probs[i] >= cutoff) {
                order[m++] = i;
            }
        }
        Arrays.sort(order, 0, m, (a, b) -> {
            int c = Float.compare(probs[b], probs[a]);
            return c != 0 ? c : Integer.compare(a, b);
        });
        float cum = 0f;
        int last = m - 1;
        for (int i = 0; i < m; i++) {
            cum += probs[order[i]];
            if (cum > params.topP()) {
                last = i;
                break;
            }
        }
        float r = coin * cum;
        float cdf = 0f;
        for (int i = 0; i <= last; i++) {
            cdf += probs[order[i]];
            if (r < cdf) {
                return order[i];
            }
        }
        return order[last];
    }

    /** xorshift64*, top 24 bits as a float in [0, 1). */
    private float nextFloat() {
        state ^= state >>> 12;
        state ^= state << 25;
        state ^= state >>> 27;
        long r = state * 0x2545F4914F6CDD1DL;
        return (r >>> 40) / 16777216.0f;
    }
}
