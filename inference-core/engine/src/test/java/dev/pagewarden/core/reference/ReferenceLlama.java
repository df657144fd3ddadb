package dev.pagewarden.core.reference;

import dev.pagewarden.core.model.LlamaWeights;
import dev.pagewarden.core.model.ModelConfig;
import dev.pagewarden.core.model.Tensor;

import java.util.ArrayList;
import java.util.List;

/**
 * A deliberately naive float64 Llama-family forward pass, the yardstick the real engines are checked
 * against. It follows llama2.c's {@code forward} step by step and reads every weight through
 * {@link Tensor#get}, so it works for any weight type and shares no code with the engines. The
 * architecture's variations follow the model definitions of Hugging Face transformers: Q/K/V biases
 * (Qwen 2), a per-head RMSNorm of Q and K before RoPE (Qwen 3), RoPE on the halves of a head
 * (Qwen's layout) or on adjacent pairs (llama.cpp's llama layout), Llama 3's frequency divisors.
 * Slow by design; fine for the test models.
 *
 * <p>Stateful: it keeps its own KV cache. Positions must be fed in order; feeding an earlier
 * position again restarts the sequence from there.
 */
public final class ReferenceLlama {
    private final LlamaWeights w;
    private final ModelConfig c;
    /** [layer][pos][kvDim]; a position's rows are allocated when it is first written. */
    private final double[][][] keyCache;
    private final double[][][] valueCache;
    private int filled;

    public ReferenceLlama(LlamaWeights weights) {
        this.w = weights;
        this.c = weights.config();
        this.keyCache = new double[c.nLayers()][c.seqLen()][];
        this.valueCache = new double[c.nLayers()][c.seqLen()][];
    }

    public ModelConfig config() {
        return c;
    }

    /** Runs {@code token} at position {@code pos} and returns the logits for the next token. */
    public double[] forward(int token, int pos) {
        if (token < 0 || token >= c.vocabSize()) {
            throw new IllegalArgumentException("token id " + token + " is out of range for a vocabulary of " + c.vocabSize());
        }
        if (pos < 0 || pos > filled || pos >= c.seqLen()) {
            throw new IllegalArgumentException("position " + pos + " is invalid: " + filled
                    + " positions are cached, seq_len is " + c.seqLen());
        }
        int headSize = c.headSize();
        double eps = c.rmsEps();

        double[] x = row(w.tokenEmbedding(), token);
        for (int l = 0; l < c.nLayers(); l++) {
            LlamaWeights.Layer layer = w.layers().get(l);

            // attention block: x += wo(attention(rope(q), rope(k), v)) on the normalised residual
            double[] xb = rmsnorm(x, layer.rmsAtt(), eps);
            double[] q = matvec(layer.wq(), xb);
            double[] k = matvec(layer.wk(), xb);
            double[] v = matvec(layer.wv(), xb);
            if (layer.bq() != null) {
                add(q, row(layer.bq(), 0));
                add(k, row(layer.bk(), 0));
                add(v, row(layer.bv(), 0));
            }
            if (layer.qNorm() != null) {
                headNorm(q, layer.qNorm(), headSize, eps);
                headNorm(k, layer.kNorm(), headSize, eps);
            }
            double[] divisors = divisors(c);
            if (c.architecture().neoxRope()) {
                ropeHalves(q, headSize, pos, c.ropeTheta(), divisors);
                ropeHalves(k, headSize, pos, c.ropeTheta(), divisors);
            } else {
                rope(q, headSize, pos, c.ropeTheta(), divisors);
                rope(k, headSize, pos, c.ropeTheta(), divisors);
            }
            keyCache[l][pos] = k;
            valueCache[l][pos] = v;

            double[] attOut = new double[c.nHeads() * headSize];
            for (int h = 0; h < c.nHeads(); h++) {
                int qOff = h * headSize;
                int kvOff = (h / c.kvMul()) * headSize; // grouped-query: kvMul query heads share a KV head
                double[] att = new double[pos + 1];
                for (int t = 0; t <= pos; t++) {
                    double score = 0;
                    for (int i = 0; i < headSize; i++) {
                        score += q[qOff + i] * keyCache[l][t][kvOff + i];
                    }
                    att[t] = score / Math.sqrt(headSize);
                }
                softmax(att);
                for (int t = 0; t <= pos; t++) {
                    for (int i = 0; i < headSize; i++) {
                        attOut[qOff + i] += att[t] * valueCache[l][t][kvOff + i];
                    }
                }
            }
            add(x, matvec(layer.wo(), attOut));

            // feed-forward block: x += w2(silu(w1 x) * w3 x) on the normalised residual
            xb = rmsnorm(x, layer.rmsFfn(), eps);
            double[] gate = matvec(layer.w1(), xb);
            double[] up = matvec(layer.w3(), xb);
            for (int i = 0; i < gate.length; i++) {
                gate[i] = silu(gate[i]) * up[i];
            }
            add(x, matvec(layer.w2(), gate));
        }
        filled = pos + 1;
        return matvec(w.classifier(), rmsnorm(x, w.rmsFinal(), eps));
    }

    // ------------------------------------------------------------------------------ building blocks

    static double[] row(Tensor t, int r) {
        double[] out = new double[t.cols()];
        for (int i = 0; i < out.length; i++) {
            out[i] = t.get(r, i);
        }
        return out;
    }

    /** {@code out[r] = sum_c W[r][c] * x[c]}. */
    static double[] matvec(Tensor m, double[] x) {
        double[] out = new double[m.rows()];
        for (int r = 0; r < out.length; r++) {
            double sum = 0;
            for (int i = 0; i < x.length; i++) {
                sum += m.get(r, i) * x[i];
            }
            out[r] = sum;
        }
        return out;
    }

    static double[] rmsnorm(double[] x, Tensor weight, double eps) {
        double ss = 0;
        for (double v : x) {
            ss += v * v;
        }
        double scale = 1 / Math.sqrt(ss / x.length + eps);
        double[] out = new double[x.length];
        for (int i = 0; i < x.length; i++) {
            out[i] = weight.get(0, i) * (scale * x[i]);
        }
        return out;
    }

    /** Each head of {@code v} RMS-normalised on its own, scaled by the head-size weight vector. */
    static void headNorm(double[] v, Tensor weight, int headSize, double eps) {
        for (int h = 0; h < v.length; h += headSize) {
            double[] head = java.util.Arrays.copyOfRange(v, h, h + headSize);
            System.arraycopy(rmsnorm(head, weight, eps), 0, v, h, headSize);
        }
    }

    /** Llama 3's per-frequency divisors (1 when the model has no RoPE scaling). */
    static double[] divisors(ModelConfig c) {
        double[] d = new double[c.headSize() / 2];
        for (int i = 0; i < d.length; i++) {
            d[i] = c.ropeScaling() == null ? 1 : c.ropeScaling().factor(i);
        }
        return d;
    }

    static void rope(double[] v, int headSize, int pos, double theta) {
        double[] ones = new double[headSize / 2];
        java.util.Arrays.fill(ones, 1);
        rope(v, headSize, pos, theta, ones);
    }

    /**
     * RoPE in llama2.c's convention: adjacent pairs (v[i], v[i+1]) within each head are rotated by
     * pos * theta^-(i % headSize / headSize) / divisor. Works on q (all heads) and k (KV heads) alike.
     */
    static void rope(double[] v, int headSize, int pos, double theta, double[] divisors) {
        for (int i = 0; i < v.length; i += 2) {
            int headDim = i % headSize;
            double angle = pos / Math.pow(theta, headDim / (double) headSize) / divisors[headDim / 2];
            double cos = Math.cos(angle);
            double sin = Math.sin(angle);
            double v0 = v[i];
            double v1 = v[i + 1];
            v[i] = v0 * cos - v1 * sin;
            v[i + 1] = v0 * sin + v1 * cos;
        }
    }

    /**
     * RoPE as transformers' {@code rotate_half} applies it: per head, out = v * cos + rotate_half(v) * sin
     * where rotate_half(v) = (-v[half..], v[..half]) and both halves use frequencies theta^(-2j/headSize).
     */
    static void ropeHalves(double[] v, int headSize, int pos, double theta, double[] divisors) {
        int half = headSize / 2;
        for (int h = 0; h < v.length; h += headSize) {
            double[] head = java.util.Arrays.copyOfRange(v, h, h + headSize);
            for (int i = 0; i < headSize; i++) {
                int j = i % half;
                double angle = pos * Math.pow(theta, -2.0 * j / headSize) / divisors[j];
                double rotated = i < half ? -head[i + half] : head[i - half];
                v[h + i] = head[i] * Math.cos(angle) + rotated * Math.sin(angle);
            }
        }
    }

    /** In place; subtracting the max keeps exp from overflowing. */
    static void softmax(double[] x) {
        double max = Double.NEGATIVE_INFINITY;
        for (double v : x) {
            max = Math.max(max, v);
        }
        double sum = 0;
        for (int i = 0; i < x.length; i++) {
            x[i] = Math.exp(x[i] - max);
            sum += x[i];
        }
        for (int i = 0; i < x.length; i++) {
            x[i] /= sum;
        }
    }

    static double silu(double v) {
        return v / (1 + Math.exp(-v));
    }

    private static void add(double[] acc, double[] delta) {
        for (int i = 0; i < acc.length; i++) {
            acc[i] += delta[i];
        }
    }

    // ------------------------------------------------------------------------------ greedy decoding

    /**
     * One greedy step: the chosen token, the runner-up, and how far apart their logits were. A small
     * margin marks a near-tie where a float32 engine may legitimately pick the other token.
     */
    public record Step(int token, int runnerUp, double margin) {
    }

    /** Greedy continuation of {@code prompt}: the {@code maxNew} new tokens only. */
    public static int[] greedy(ReferenceLlama model, int[] prompt, int maxNew) {
        return greedySteps(model, prompt, maxNew).stream().mapToInt(Step::token).toArray();
    }

    /**
     * Like {@link #greedy} but with each step's top-2 margin. Starts at position 0 (so the model
     * may be reused), never stops early (stopping at EOS/BOS is the caller's policy), and picks the
     * lowest id on an exact tie, as llama2.c's argmax does.
     */
    public static List<Step> greedySteps(ReferenceLlama model, int[] prompt, int maxNew) {
        if (prompt.length == 0) {
            throw new IllegalArgumentException("greedy decoding needs at least one prompt token");
        }
        if (maxNew < 0 || prompt.length + maxNew > model.config().seqLen()) {
            throw new IllegalArgumentException(prompt.length + " prompt tokens + " + maxNew
                    + " new tokens do not fit seq_len " + model.config().seqLen());
        }
        double[] logits = null;
        int pos = 0;
        for (int token : prompt) {
            logits = model.forward(token, pos++);
        }
        List<Step> steps = new ArrayList<>(maxNew);
        for (int n = 0; n < maxNew; n++) {
            Step step = top2(logits);
            steps.add(step);
            if (n + 1 < maxNew) {
                logits = model.forward(step.token(), pos++);
            }
        }
        return steps;
    }

    static Step top2(double[] logits) {
        int best = 0;
        int second = -1;
        for (int i = 1; i < logits.length; i++) {
            if (logits[i] > logits[best]) {
                second = best;
                best = i;
            } else if (second < 0 || logits[i] > logits[second]) {
                second = i;
            }
        }
        return second < 0 ? new Step(best, -1, Double.POSITIVE_INFINITY)
                : new Step(best, second, logits[best] - logits[second]);
    }
}
