package dev.pagewarden.core.model;

import java.util.List;

/**
 * All weights of a Llama model, per layer in order. Matrices follow {@link Tensor}'s convention
 * (rows = outputs): wq [dim x dim], wk/wv [kvDim x dim], wo [dim x dim], w1/w3 [hidden x dim] (gate, up),
 * w2 [dim x hidden] (down). Norm weights are single-row tensors. {@code classifier} is the token
 * embedding itself when the model shares it.
 */
public record LlamaWeights(ModelConfig config, Tensor tokenEmbedding, List<Layer> layers, Tensor rmsFinal,
                           Tensor classifier) {

    public record Layer(Tensor rmsAtt, Tensor wq, Tensor wk, Tensor wv, Tensor wo,
                        Tensor rmsFfn, Tensor w1, Tensor w2, Tensor w3) {
    }

    public LlamaWeights {
        layers = List.copyOf(layers);
        if (layers.size() != config.nLayers()) {
            throw new ModelFormatException("expected " + config.nLayers() + " layers, got " + layers.size());
        }
        int dim = config.dim();
        int kv = config.kvDim();
        int hid = config.hiddenDim();
        check(tokenEmbedding, config.vocabSize(), dim);
        check(rmsFinal, 1, dim);
        check(classifier, config.vocabSize(), dim);
        for (Layer l : layers) {
            check(l.rmsAtt, 1, dim);
            check(l.wq, dim, dim);
            check(l.wk, kv, dim);
            check(l.wv, kv, dim);
            check(l.wo, dim, dim);
            check(l.rmsFfn, 1, dim);
            check(l.w1, hid, dim);
            check(l.w2, dim, hid);
            check(l.w3, hid, dim);
        }
    }

    private static void check(Tensor t, int rows, int cols) {
        if (t.rows() != rows || t.cols() != cols) {
            throw new ModelFormatException("tensor " + t.name() + ": shape " + t.rows() + "x" + t.cols()
                    + " does not match the model's " + rows + "x" + cols);
        }
    }

    /** Bytes of weights one decode step reads (everything but the embedding table, unless it is the classifier). */
    public long bytesReadPerToken() {
        long total = rmsFinal.data().byteSize() + classifier.data().byteSize();
        for (Layer l : layers) {
            total += l.rmsAtt.data().byteSize() + l.wq.data().byteSize() + l.wk.data().byteSize()
                    + l.wv.data().byteSize() + l.wo.data().byteSize() + l.rmsFfn.data().byteSize()
                    + l.w1.data().byteSize() + l.w2.data().byteSize() + l.w3.data().byteSize();
        }
        return total;
    }
}
