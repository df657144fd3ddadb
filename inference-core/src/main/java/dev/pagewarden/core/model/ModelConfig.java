package dev.pagewarden.core.model;

/**
 * Shape of a Llama-architecture model. Immutable; validated on construction so that no loader can
 * hand the engine a shape that would make it allocate absurd memory or divide by zero.
 *
 * @param dim              residual stream width
 * @param hiddenDim        SwiGLU hidden width
 * @param nLayers          transformer blocks
 * @param nHeads           query heads
 * @param nKvHeads         key/value heads (grouped-query attention when smaller than nHeads)
 * @param vocabSize        vocabulary size
 * @param seqLen           the model's own context limit in tokens
 * @param rmsEps           RMSNorm epsilon
 * @param ropeTheta        RoPE frequency base
 * @param sharedClassifier true when the output classifier reuses the token embedding
 */
public record ModelConfig(int dim, int hiddenDim, int nLayers, int nHeads, int nKvHeads, int vocabSize,
                          int seqLen, float rmsEps, float ropeTheta, boolean sharedClassifier) {

    /** Upper bounds that keep a lying header from turning into a multi-terabyte allocation. */
    static final int MAX_DIM = 1 << 16;
    static final int MAX_LAYERS = 1024;
    static final int MAX_VOCAB = 1 << 22;
    static final int MAX_SEQ = 1 << 24;

    public ModelConfig {
        requireRange("dim", dim, 1, MAX_DIM);
        requireRange("hidden_dim", hiddenDim, 1, MAX_DIM * 8);
        requireRange("n_layers", nLayers, 1, MAX_LAYERS);
        requireRange("n_heads", nHeads, 1, dim);
        requireRange("n_kv_heads", nKvHeads, 1, nHeads);
        requireRange("vocab_size", vocabSize, 1, MAX_VOCAB);
        requireRange("seq_len", seqLen, 1, MAX_SEQ);
        if (dim % nHeads != 0) {
            throw new ModelFormatException("inconsistent dimensions: dim " + dim + " is not a multiple of n_heads " + nHeads);
        }
        if (nHeads % nKvHeads != 0) {
            throw new ModelFormatException("inconsistent dimensions: n_heads " + nHeads + " is not a multiple of n_kv_heads " + nKvHeads);
        }
        if ((dim / nHeads) % 2 != 0) {
            throw new ModelFormatException("inconsistent dimensions: head size " + (dim / nHeads) + " must be even for RoPE");
        }
        if (!(rmsEps > 0f) || rmsEps > 1e-1f) {
            throw new ModelFormatException("rms epsilon " + rmsEps + " out of range (0, 0.1]");
        }
        if (!(ropeTheta > 1f) || Float.isInfinite(ropeTheta)) {
            throw new ModelFormatException("rope theta " + ropeTheta + " out of range (1, inf)");
        }
    }

    private static void requireRange(String name, int value, int min, int max) {
        if (value < min || value > max) {
            throw new ModelFormatException(name + " = " + value + " is out of range [" + min + ", " + max + "]");
        }
    }

    public int headSize() {
        return dim / nHeads;
    }

    /** Width of one token's K (or V) row across all KV heads. */
    public int kvDim() {
        return dim / nHeads * nKvHeads;
    }

    /** Query heads sharing one KV head. */
    public int kvMul() {
        return nHeads / nKvHeads;
    }

    /** Parameter count (embedding counted once when the classifier is shared). */
    public long parameterCount() {
        long perLayer = 2L * dim                       // two RMSNorm weights
                + (long) dim * dim * 2                 // wq, wo
                + (long) kvDim() * dim * 2             // wk, wv
                + (long) hiddenDim * dim * 3;          // w1, w2, w3
        long total = (long) vocabSize * dim + perLayer * nLayers + dim;
        return sharedClassifier ? total : total + (long) vocabSize * dim;
    }
}
