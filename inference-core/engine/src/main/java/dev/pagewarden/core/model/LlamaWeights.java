package dev.pagewarden.core.model;

import java.util.EnumSet;
import java.util.List;
import java.util.Set;

/**
 * All weights of a Llama model, per layer in order. Matrices follow {@link Tensor}'s convention
 * (rows = outputs): wq [qDim x dim], wk/wv [kvDim x dim], wo [dim x qDim], w1/w3 [hidden x dim] (gate, up),
 * w2 [dim x hidden] (down). Norm weights and biases are single-row tensors. {@code classifier} is the
 * token embedding itself when the model shares it.
 */
public record LlamaWeights(ModelConfig config, Tensor tokenEmbedding, List<Layer> layers, Tensor rmsFinal,
                           Tensor classifier) {

    /**
     * One block. {@code bq}/{@code bk}/{@code bv} (Q/K/V biases, Qwen 2) and {@code qNorm}/{@code kNorm}
     * (per-head RMSNorm weights, Qwen 3) are null when the architecture has none.
     */
    public record Layer(Tensor rmsAtt, Tensor wq, Tensor wk, Tensor wv, Tensor wo,
                        Tensor rmsFfn, Tensor w1, Tensor w2, Tensor w3,
                        Tensor bq, Tensor bk, Tensor bv, Tensor qNorm, Tensor kNorm) {

        /** A plain Llama block. */
        public Layer(Tensor rmsAtt, Tensor wq, Tensor wk, Tensor wv, Tensor wo,
                     Tensor rmsFfn, Tensor w1, Tensor w2, Tensor w3) {
            this(rmsAtt, wq, wk, wv, wo, rmsFfn, w1, w2, w3, null, null, null, null, null);
        }
    }

    public LlamaWeights {
        layers = List.copyOf(layers);
        if (layers.size() != config.nLayers()) {
            throw new ModelFormatException("expected " + config.nLayers() + " layers, got " + layers.size());
        }
        int dim = config.dim();
        int kv = config.kvDim();
        int qd = config.qDim();
        int hid = config.hiddenDim();
        Architecture arch = config.architecture();
        check(tokenEmbedding, config.vocabSize(), dim);
        check(rmsFinal, 1, dim);
        check(classifier, config.vocabSize(), dim);
        for (Layer l : layers) {
            check(l.rmsAtt, 1, dim);
            check(l.wq, qd, dim);
            check(l.wk, kv, dim);
            check(l.wv, kv, dim);
            check(l.wo, dim, qd);
            optional(arch, arch.qkvBias(), l.bq, 1, qd, "Q bias");
            optional(arch, arch.qkvBias(), l.bk, 1, kv, "K bias");
            optional(arch, arch.qkvBias(), l.bv, 1, kv, "V bias");
            optional(arch, arch.qkNorm(), l.qNorm, 1, config.headSize(), "Q norm");
            optional(arch, arch.qkNorm(), l.kNorm, 1, config.headSize(), "K norm");
            check(l.rmsFfn, 1, dim);
            check(l.w1, hid, dim);
            check(l.w2, dim, hid);
            check(l.w3, hid, dim);
        }
    }

    /** A tensor the architecture either needs (then of this shape) or does not have. */
    private static void optional(Architecture arch, boolean needed, Tensor t, int rows, int cols, String what) {
        if (needed && t == null) {
            throw new ModelFormatException(arch + " needs a " + what + " in every layer; missing");
        }
        if (!needed && t != null) {
            throw new ModelFormatException(arch + " has no " + what + ", but tensor " + t.name() + " is given");
        }
        if (t != null) {
            check(t, rows, cols);
        }
    }

    private static void check(Tensor t, int rows, int cols) {
        if (t.rows() != rows || t.cols() != cols) {
            throw new ModelFormatException("tensor " + t.name() + ": shape " + t.rows() + "x" + t.cols()
                    + " does not match the model's " + rows + "x" + cols);
        }
    }

    /** The types of the matrices a step multiplies by (every layer's projections and the classifier). */
    public Set<DType> matrixTypes() {
        Set<DType> types = EnumSet.of(classifier.type());
        for (Layer l : layers) {
            for (Tensor t : new Tensor[] {l.wq, l.wk, l.wv, l.wo, l.w1, l.w2, l.w3}) {
                types.add(t.type());
            }
        }
        return types;
    }

    /** Bytes of weights one decode step reads (everything but the embedding table, unless it is the classifier). */
    public long bytesReadPerToken() {
        long total = rmsFinal.data().byteSize() + classifier.data().byteSize();
        for (Layer l : layers) {
            total += l.rmsAtt.data().byteSize() + l.wq.data().byteSize() + l.wk.data().byteSize()
                    + l.wv.data().byteSize() + l.wo.data().byteSize() + l.rmsFfn.data().byteSize()
                    + l.w1.data().byteSize() + l.w2.data().byteSize() + l.w3.data().byteSize();
            for (Tensor t : new Tensor[] {l.bq, l.bk, l.bv, l.qNorm, l.kNorm}) {
                total += t == null ? 0 : t.data().byteSize();
            }
        }
        return total;
    }
}
