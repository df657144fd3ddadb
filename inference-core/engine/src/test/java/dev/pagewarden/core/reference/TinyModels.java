package dev.pagewarden.core.reference;

import dev.pagewarden.core.model.DType;
import dev.pagewarden.core.model.LlamaWeights;
import dev.pagewarden.core.model.ModelConfig;
import dev.pagewarden.core.model.Tensor;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Random;

/** In-memory Llama models for tests: hand-written weights or seeded random ones. */
final class TinyModels {
    private TinyModels() {
    }

    /** An F32 tensor over little-endian bytes, as the loaders produce; values row-major. */
    static Tensor f32(String name, int rows, int cols, float... values) {
        if (values.length != rows * cols) {
            throw new IllegalArgumentException(name + ": " + values.length + " values for " + rows + "x" + cols);
        }
        MemorySegment seg = Arena.ofAuto().allocate(4L * values.length);
        for (int i = 0; i < values.length; i++) {
            seg.setAtIndex(Tensor.F32_LE, i, values[i]);
        }
        return new Tensor(name, DType.F32, rows, cols, seg);
    }

    static float[] identity(int n) {
        float[] m = new float[n * n];
        for (int i = 0; i < n; i++) {
            m[i * n + i] = 1;
        }
        return m;
    }

    static float[] filled(int n, float value) {
        float[] a = new float[n];
        Arrays.fill(a, value);
        return a;
    }

    /** A one-layer model whose every weight is given (norm weights all 1). */
    static LlamaWeights oneLayer(ModelConfig c, float[] embedding, float[] wq, float[] wk, float[] wv, float[] wo,
                                 float[] w1, float[] w2, float[] w3, float[] classifier) {
        int d = c.dim(), kv = c.kvDim(), h = c.hiddenDim(), v = c.vocabSize();
        LlamaWeights.Layer layer = new LlamaWeights.Layer(f32("rms_att", 1, d, filled(d, 1)),
                f32("wq", d, d, wq), f32("wk", kv, d, wk), f32("wv", kv, d, wv), f32("wo", d, d, wo),
                f32("rms_ffn", 1, d, filled(d, 1)), f32("w1", h, d, w1), f32("w2", d, h, w2), f32("w3", h, d, w3));
        return new LlamaWeights(c, f32("emb", v, d, embedding), List.of(layer), f32("rms_final", 1, d, filled(d, 1)),
                f32("cls", v, d, classifier));
    }

    /** Seeded random weights of roughly unit scale, with non-trivial norm weights. */
    static LlamaWeights random(ModelConfig c, long seed) {
        Random rnd = new Random(seed);
        int d = c.dim(), kv = c.kvDim(), h = c.hiddenDim(), v = c.vocabSize();
        List<LlamaWeights.Layer> layers = new ArrayList<>();
        for (int l = 0; l < c.nLayers(); l++) {
            layers.add(new LlamaWeights.Layer(random(rnd, "rms_att", 1, d, 1), random(rnd, "wq", d, d, d),
                    random(rnd, "wk", kv, d, d), random(rnd, "wv", kv, d, d), random(rnd, "wo", d, d, d),
                    random(rnd, "rms_ffn", 1, d, 1), random(rnd, "w1", h, d, d), random(rnd, "w2", d, h, h),
                    random(rnd, "w3", h, d, d)));
        }
        Tensor emb = random(rnd, "emb", v, d, 1);
        return new LlamaWeights(c, emb, layers, random(rnd, "rms_final", 1, d, 1),
                c.sharedClassifier() ? emb : random(rnd, "cls", v, d, d));
    }

    /** Gaussian values scaled by 1/sqrt(fanIn), so activations stay of order one. */
    private static Tensor random(Random rnd, String name, int rows, int cols, int fanIn) {
        float[] a = new float[rows * cols];
        for (int i = 0; i < a.length; i++) {
            a[i] = (float) (rnd.nextGaussian() / Math.sqrt(fanIn));
        }
        return f32(name, rows, cols, a);
    }
}
