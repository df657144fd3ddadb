package dev.pagewarden.core.sampling;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.BitSet;
import java.util.List;

/**
 * Picks the next token from one request's logits, driven by a per-request xorshift generator, so a seed
 * reproduces its output on any machine and JVM. Each step applies the request's controls in this order:
 * <ol>
 *     <li>{@code logit_bias}: each listed token's bias is added to its logit;</li>
 *     <li>{@code repetition_penalty} (vLLM/HF): for every token in the prompt or the output so far, a positive
 *     logit is divided by it, a negative one multiplied;</li>
 *     <li>{@code presence_penalty} and {@code frequency_penalty} (OpenAI): for every token in the output so far,
 *     the presence penalty is subtracted once and the frequency penalty times its count;</li>
 *     <li>{@code response_format} (a {@link TokenConstraint}): every token the request's constraint does not allow
 *     next gets a logit of minus infinity;</li>
 *     <li>temperature 0 takes the argmax here (ties to the lowest id: the filters below always keep it);
 *     otherwise the probabilities are softmax(logits / temperature);</li>
 *     <li>{@code top_k}: only the k most likely tokens stay (ties to the lowest id), renormalized;</li>
 *     <li>{@code top_p}: only the smallest set of most likely tokens whose mass exceeds top_p stays;</li>
 *     <li>{@code min_p}: tokens less likely than min_p times the most likely one go;</li>
 *     <li>a draw from what is left, in proportion to its probability.</li>
 * </ol>
 * Everything is per request and in a fixed order of float operations, so a request samples the same in a batch
 * as alone. Log probabilities (when asked for) are the model's own: the log-softmax of the raw logits, before
 * the bias, the penalties and the temperature (vLLM's default).
 */
public final class Sampler {
    private final SamplingParams params;
    private final int[] prompt;
    private final int[] biasIds;
    private final float[] biasValues;
    private long state;
    private float[] probs = new float[0];
    private float[] adjusted = new float[0];
    private float[] sorted = new float[0];
    private Integer[] order = new Integer[0];
    /** Mass left by the nucleus search (sum of what it kept). */
    private float nucleusMass;
    /** Output tokens so far, and per token id its count in the output and whether the prompt or output holds it. */
    private int[] output = new int[0];
    private int outputCount;
    private int[] counts;
    private boolean[] seen;
    private TokenLogprobs lastLogprobs;
    /** Where the request's constraint stands after the tokens so far; null when it has none. */
    private TokenConstraint.State constraint;
    private float[] masked = new float[0];

    public Sampler(SamplingParams params) {
        this(params, new int[0]);
    }

    /** A sampler for a request with this prompt (the repetition penalty counts its tokens). */
    public Sampler(SamplingParams params, int[] prompt) {
        this.params = params;
        this.prompt = params.repetitionPenalty() != 1f ? prompt.clone() : new int[0];
        this.biasIds = params.biasIds();
        this.biasValues = new float[biasIds.length];
        for (int i = 0; i < biasIds.length; i++) {
            biasValues[i] = params.logitBias().get(biasIds[i]);
        }
        // A zero xorshift state would stay zero forever.
        this.state = params.seed() == 0 ? 0x9E3779B97F4A7C15L : params.seed();
        this.constraint = params.constraint() == null ? null : params.constraint().start();
    }

    /** Whether the request's constraint is satisfied and allows nothing more (never, without one). */
    public boolean constraintComplete() {
        return constraint != null && constraint.complete();
    }

    public int sample(float[] logits) {
        float[] x = mask(adjust(logits));
        int token;
        if (params.isGreedy()) {
            token = argmax(x);
        } else {
            float mass = probabilities(x);
            float coin = nextFloat();
            token = params.topP() < 1f ? nucleus(coin) : multinomial(coin * mass);
        }
        lastLogprobs = params.logprobs() >= 0 ? logprobs(logits, token, params.logprobs()) : null;
        record(token);
        return token;
    }

    /** The log probabilities of the token {@link #sample} returned last; null when the request asked for none. */
    public TokenLogprobs lastLogprobs() {
        return lastLogprobs;
    }

    /**
     * Continues after a token that another sampler with the same parameters drew first (a prefill node
     * samples a request's first token, its decode node the rest): consumes the draw that sampling used, and
     * counts the token for the penalties, so the tokens after it are the ones this sampler would have drawn
     * had it sampled the first one itself.
     */
    public void skipDraw(int firstToken) {
        skipDraw(firstToken, null);
    }

    /** {@link #skipDraw(int)}, with the log probabilities the other sampler gave that token (null: none). */
    public void skipDraw(int firstToken, TokenLogprobs logprobs) {
        if (!params.isGreedy()) {
            nextFloat();
        }
        lastLogprobs = logprobs;
        record(firstToken);
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

    /**
     * The log-softmax of {@code logits} at {@code token} and at the {@code top} most likely ids (ties to the
     * lowest id): the maximum subtracted first and the normalizer summed in double, so no exponent overflows.
     */
    public static TokenLogprobs logprobs(float[] logits, int token, int top) {
        double max = Double.NEGATIVE_INFINITY;
        for (float l : logits) {
            max = Math.max(max, l);
        }
        double sum = 0;
        for (float l : logits) {
            sum += StrictMath.exp(l - max);
        }
        double logZ = max + StrictMath.log(sum);
        List<TokenLogprobs.Logprob> best = new ArrayList<>(top);
        boolean[] taken = top > 0 ? new boolean[logits.length] : null;
        for (int k = 0; k < Math.min(top, logits.length); k++) {
            int pick = -1;
            for (int i = 0; i < logits.length; i++) {
                if (!taken[i] && (pick < 0 || logits[i] > logits[pick])) {
                    pick = i;
                }
            }
            taken[pick] = true;
            best.add(new TokenLogprobs.Logprob(pick, (float) (logits[pick] - logZ)));
        }
        return new TokenLogprobs(new TokenLogprobs.Logprob(token, (float) (logits[token] - logZ)), best);
    }

    /**
     * The distribution the next draw would come from (zero outside what the filters keep), normalized; for
     * greedy, all mass on the argmax. Draws nothing and counts nothing.
     */
    float[] distribution(float[] logits) {
        float[] x = mask(adjust(logits));
        float[] out = new float[x.length];
        if (params.isGreedy()) {
            out[argmax(x)] = 1f;
            return out;
        }
        float mass = probabilities(x);
        if (params.topP() < 1f) {
            int last = nucleusEnd();
            for (int i = 0; i <= last; i++) {
                out[order[i]] = probs[order[i]] / nucleusMass;
            }
        } else {
            for (int i = 0; i < x.length; i++) {
                out[i] = probs[i] / mass;
            }
        }
        return out;
    }

    /** The logits after the bias and the penalties (steps 1-3); {@code logits} itself when none is set. */
    private float[] adjust(float[] logits) {
        if (!params.adjustsLogits()) {
            return logits;
        }
        int n = logits.length;
        if (adjusted.length != n) {
            adjusted = new float[n];
        }
        System.arraycopy(logits, 0, adjusted, 0, n);
        for (int i = 0; i < biasIds.length; i++) {
            if (biasIds[i] < n) {
                adjusted[biasIds[i]] += biasValues[i];
            }
        }
        if (counts == null) {
            startCounting(n);
        }
        float rep = params.repetitionPenalty();
        float presence = params.presencePenalty();
        float frequency = params.frequencyPenalty();
        for (int i = 0; i < n; i++) {
            if (rep != 1f && seen[i]) {
                adjusted[i] = adjusted[i] > 0f ? adjusted[i] / rep : adjusted[i] * rep;
            }
            if (counts[i] > 0) {
                adjusted[i] -= presence + frequency * counts[i];
            }
        }
        return adjusted;
    }

    /** The logits with every token the constraint does not allow next at minus infinity; {@code x} without one. */
    private float[] mask(float[] x) {
        if (constraint == null) {
            return x;
        }
        int n = x.length;
        if (masked.length != n) {
            masked = new float[n];
        }
        Arrays.fill(masked, Float.NEGATIVE_INFINITY);
        BitSet allowed = constraint.allowed();
        for (int i = allowed.nextSetBit(0); i >= 0 && i < n; i = allowed.nextSetBit(i + 1)) {
            masked[i] = x[i];
        }
        return masked;
    }

    private void startCounting(int n) {
        counts = new int[n];
        seen = new boolean[n];
        for (int t : prompt) {
            if (t >= 0 && t < n) {
                seen[t] = true;
            }
        }
        for (int i = 0; i < outputCount; i++) {
            count(output[i]);
        }
    }

    private void record(int token) {
        if (constraint != null) {
            constraint = constraint.advance(token);
        }
        if (!params.adjustsLogits()) {
            return;
        }
        if (counts != null) {
            count(token);
            return;
        }
        // before the first step the vocabulary is not known yet: counted when it is
        if (outputCount == output.length) {
            output = Arrays.copyOf(output, Math.max(4, output.length * 2));
        }
        output[outputCount++] = token;
    }

    private void count(int token) {
        if (token >= 0 && token < counts.length) {
            counts[token]++;
            seen[token] = true;
        }
    }

    /** Steps 4, 5 and 7 into {@link #probs}; returns the mass left (1 unless min_p removed some). */
    private float probabilities(float[] logits) {
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
        if (params.topK() > 0 && params.topK() < n) {
            topK(params.topK());
        }
        // min_p before the nucleus search is the same as after it: both keep a most-likely prefix, the
        // nucleus measured on the mass before min_p, and min_p's threshold is relative to the top token
        return params.minP() > 0f ? minP(params.minP()) : 1f;
    }

    private void topK(int k) {
        int n = probs.length;
        if (sorted.length != n) {
            sorted = new float[n];
        }
        System.arraycopy(probs, 0, sorted, 0, n);
        Arrays.sort(sorted);
        float threshold = sorted[n - k];
        int above = 0;
        for (float p : probs) {
            if (p > threshold) {
                above++;
            }
        }
        int ties = k - above; // tokens at the threshold that stay, lowest ids first
        double sum = 0;
        for (int i = 0; i < n; i++) {
            if (probs[i] > threshold || (probs[i] == threshold && ties-- > 0)) {
                sum += probs[i];
            } else {
                probs[i] = 0f;
            }
        }
        for (int i = 0; i < n; i++) {
            probs[i] = (float) (probs[i] / sum);
        }
    }

    private float minP(float minP) {
        float top = 0f;
        for (float p : probs) {
            top = Math.max(top, p);
        }
        float threshold = minP * top;
        float mass = 0f;
        for (int i = 0; i < probs.length; i++) {
            if (probs[i] < threshold) {
                probs[i] = 0f;
            }
            mass += probs[i];
        }
        return mass;
    }

    private int multinomial(float coin) {
        float cdf = 0f;
        for (int i = 0; i < probs.length; i++) {
            cdf += probs[i];
            if (coin < cdf) {
                return i;
            }
        }
        // rounding: the last token with any mass
        for (int i = probs.length - 1; i > 0; i--) {
            if (probs[i] > 0f) {
                return i;
            }
        }
        return 0;
    }

    /** Samples among the smallest set of most likely tokens whose mass exceeds top_p. */
    private int nucleus(float coin) {
        int last = nucleusEnd();
        float r = coin * nucleusMass;
        float cdf = 0f;
        for (int i = 0; i <= last; i++) {
            cdf += probs[order[i]];
            if (r < cdf) {
                return order[i];
            }
        }
        return order[last];
    }

    /** Sorts the nucleus candidates into {@link #order}; returns the index of the nucleus's last one. */
    private int nucleusEnd() {
        int n = probs.length;
        // Tokens below this cannot be in the nucleus; skipping them keeps the sort short.
        float cutoff = (1f - params.topP()) / (n - 1);
        if (order.length != n) {
            order = new Integer[n];
        }
        int m = 0;
        for (int i = 0; i < n; i++) {
            if (probs[i] >= cutoff && probs[i] > 0f) {
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
        nucleusMass = cum;
        return last;
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
