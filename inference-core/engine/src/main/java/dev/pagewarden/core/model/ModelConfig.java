package dev.pagewarden.core.model;

/**
 * Shape of a Llama-family model. Immutable; validated on construction so that no loader can
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
 * @param architecture     the variant of the block (biases, Q/K norms, RoPE layout)
 * @param headSize         width of one attention head; Qwen 3 decouples it from dim / nHeads
 * @param ropeScaling      per-frequency RoPE divisors (Llama 3.1/3.2), or null for plain RoPE
 */
public record ModelConfig(int dim, int hiddenDim, int nLayers, int nHeads, int nKvHeads, int vocabSize,
                          int seqLen, float rmsEps, float ropeTheta, boolean sharedClassifier,
                          Architecture architecture, int headSize, RopeScaling ropeScaling) {

    /** A plain Llama: head size dim / nHeads, no RoPE scaling. */
    public ModelConfig(int dim, int hiddenDim, int nLayers, int nHeads, int nKvHeads, int vocabSize,
                       int seqLen, float rmsEps, float ropeTheta, boolean sharedClassifier) {
        this(dim, hiddenDim, nLayers, nHeads, nKvHeads, vocabSize, seqLen, rmsEps, ropeTheta, sharedClassifier,
                Architecture.LLAMA, defaultHeadSize(dim, nHeads), null);
    }

    /** Upper bounds that keep a lying header from turning into a multi-terabyte allocation. */
    static final int MAX_DIM = 1 << 16;
    static final int MAX_LAYERS = 1024;
    static final int MAX_VOCAB = 1 << 22;
    static final int MAX_SEQ = 1 << 24;
    static final int MAX_HEAD = 1 << 12;

    public ModelConfig {
        requireRange("dim", dim, 1, MAX_DIM);
        requireRange("hidden_dim", hiddenDim, 1, MAX_DIM * 8);
        requireRange("n_layers", nLayers, 1, MAX_LAYERS);
        requireRange("n_heads", nHeads, 1, dim);
        requireRange("n_kv_heads", nKvHeads, 1, nHeads);
        requireRange("vocab_size", vocabSize, 1, MAX_VOCAB);
        requireRange("seq_len", seqLen, 1, MAX_SEQ);
        requireRange("head_size", headSize, 1, MAX_HEAD);
        if (architecture == null) {
            throw new ModelFormatException("model architecture missing");
        }
        if (nHeads % nKvHeads != 0) {
            throw new ModelFormatException("inconsistent dimensions: n_heads " + nHeads + " is not a multiple of n_kv_heads " + nKvHeads);
        }
        if ((long) nHeads * headSize > MAX_DIM * 4L) {
            throw new ModelFormatException("n_heads " + nHeads + " x head size " + headSize + " is out of range");
        }
        if (headSize % 2 != 0) {
            throw new ModelFormatException("inconsistent dimensions: head size " + headSize + " must be even for RoPE");
        }
        if (ropeScaling != null && ropeScaling.size() != headSize / 2) {
            throw new ModelFormatException("rope scaling has " + ropeScaling.size() + " frequency factors, head size "
                    + headSize + " needs " + headSize / 2);
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

    private static int defaultHeadSize(int dim, int nHeads) {
        if (nHeads < 1 || dim < 1) {
            return 0; // refused by the range checks, which name the field
        }
        if (dim % nHeads != 0) {
            throw new ModelFormatException("inconsistent dimensions: dim " + dim + " is not a multiple of n_heads " + nHeads);
        }
        return dim / nHeads;
    }

    /** The same shape as another architecture, head size and RoPE scaling. */
    public ModelConfig with(Architecture arch, int headSize, RopeScaling scaling) {
        return new ModelConfig(dim, hiddenDim, nLayers, nHeads, nKvHeads, vocabSize, seqLen, rmsEps, ropeTheta,
                sharedClassifier, arch, headSize, scaling);
    }

    /** The same shape with other norm epsilon and RoPE base. */
    /** The same model with a vocabulary of {@code vocabSize} tokens (a real tokenizer's). */
    public ModelConfig withVocabSize(int vocabSize) {
        return new ModelConfig(dim, hiddenDim, nLayers, nHeads, nKvHeads, vocabSize, seqLen, rmsEps, ropeTheta,
                sharedClassifier, architecture, headSize, ropeScaling);
    }

    public ModelConfig with(float rmsEps, float ropeTheta) {
        return new ModelConfig(dim, hiddenDim, nLayers, nHeads, nKvHeads, vocabSize, seqLen, rmsEps, ropeTheta,
                sharedClassifier, architecture, headSize, ropeScaling);
    }

    /** Width of one token's Q row (and of the attention output) across all query heads. */
    public int qDim() {
        return nHeads * headSize;
    }

    /** Width of one token's K (or V) row across all KV heads. */
    public int kvDim() {
        return headSize * nKvHeads;
    }

    /** Query heads sharing one KV head. */
    public int kvMul() {
        return nHeads / nKvHeads;
    }

    /** Parameter count (embedding counted once when the classifier is shared). */
    public long parameterCount() {
        long perLayer = 2L * dim                       // two RMSNorm weights
                + (long) qDim() * dim * 2              // wq, wo
                + (long) kvDim() * dim * 2             // wk, wv
                + (long) hiddenDim * dim * 3           // w1, w2, w3
                + (architecture.qkvBias() ? qDim() + 2L * kvDim() : 0)
                + (architecture.qkNorm() ? 2L * headSize : 0);
        long total = (long) vocabSize * dim + perLayer * nLayers + dim;
        return sharedClassifier ? total : total + (long) vocabSize * dim;
    }
}
