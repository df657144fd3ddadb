package dev.pagewarden.core.model.gguf;

import dev.pagewarden.core.model.DType;
import dev.pagewarden.core.model.LlamaTensors;
import dev.pagewarden.core.model.LlamaWeights;
import dev.pagewarden.core.model.ModelConfig;
import dev.pagewarden.core.model.ModelFormatException;
import dev.pagewarden.core.model.RowSource;
import dev.pagewarden.core.model.Tensor;
import dev.pagewarden.core.tokenizer.Vocabulary;

import java.util.ArrayList;
import java.util.List;
import java.util.function.Function;

/**
 * Maps between GGUF's llama conventions (llama.cpp key and tensor names) and {@link LlamaWeights} /
 * {@link Vocabulary}. Both llama2.c and llama.cpp's LLAMA architecture rotate adjacent pairs in RoPE,
 * so the Q and K matrices carry over unpermuted.
 */
public final class GgufLlama {
    static final String ARCH = "llama";
    /** SentencePiece's word-start marker; {@link Vocabulary} spells it as an ASCII space. */
    private static final String SPACE_MARKER = "\u2581";
    private static final int TOKEN_NORMAL = 1;
    private static final int TOKEN_UNKNOWN = 2;
    private static final int TOKEN_CONTROL = 3;
    private static final int TOKEN_BYTE = 6;

    private GgufLlama() {
    }

    /** The model shape from {@code llama.*} metadata (vocabulary size from the embedding tensor). */
    public static ModelConfig config(GgufFile f) {
        String arch = f.string("general.architecture");
        if (!arch.equals(ARCH)) {
            throw new ModelFormatException(f.file() + ": general.architecture is '" + arch + "'; supported: llama");
        }
        GgufTensorInfo embd = f.tensor("token_embd.weight")
                .orElseThrow(() -> new ModelFormatException(f.file() + ": missing tensor token_embd.weight"));
        int vocab = embd.dims().size() == 2 ? (int) (long) embd.dims().get(1) : 1;
        int heads = intKey(f, "llama.attention.head_count");
        ModelConfig cfg;
        try {
            cfg = new ModelConfig(intKey(f, "llama.embedding_length"), intKey(f, "llama.feed_forward_length"),
                    intKey(f, "llama.block_count"), heads,
                    f.get("llama.attention.head_count_kv").isPresent() ? intKey(f, "llama.attention.head_count_kv") : heads,
                    vocab, intKey(f, "llama.context_length"),
                    f.get("llama.attention.layer_norm_rms_epsilon").isPresent()
                            ? (float) f.number("llama.attention.layer_norm_rms_epsilon") : 1e-5f,
                    f.get("llama.rope.freq_base").isPresent() ? (float) f.number("llama.rope.freq_base") : 10000f,
                    f.tensor("output.weight").isEmpty());
        } catch (ModelFormatException e) {
            throw new ModelFormatException(f.file() + ": bad llama metadata: " + e.getMessage(), e);
        }
        if (f.get("llama.rope.dimension_count").isPresent()
                && intKey(f, "llama.rope.dimension_count") != cfg.headSize()) {
            throw new ModelFormatException(f.file() + ": llama.rope.dimension_count "
                    + intKey(f, "llama.rope.dimension_count") + " differs from the head size " + cfg.headSize()
                    + " (partial rotary embeddings are not supported)");
        }
        if (f.get("llama.vocab_size").isPresent() && intKey(f, "llama.vocab_size") != vocab) {
            throw new ModelFormatException(f.file() + ": llama.vocab_size " + intKey(f, "llama.vocab_size")
                    + " differs from token_embd.weight's " + vocab + " rows");
        }
        return cfg;
    }

    private static int intKey(GgufFile f, String key) {
        return (int) f.integer(key, 0, Integer.MAX_VALUE);
    }

    /** Tensor views over the mapped file, shape-checked against the metadata. */
    public static LlamaWeights weights(GgufFile f) {
        ModelConfig cfg = config(f);
        return LlamaTensors.assemble(cfg, slot -> tensor(f, slot));
    }

    private static Tensor tensor(GgufFile f, LlamaTensors.Slot slot) {
        String name = slot.ggufName();
        GgufTensorInfo info = f.tensor(name)
                .orElseThrow(() -> new ModelFormatException(f.file() + ": missing tensor " + name));
        List<Long> dims = info.dims();
        // trailing 1s are insignificant: [dim] and [dim, 1] are both a vector
        int significant = dims.size();
        while (significant > 1 && dims.get(significant - 1) == 1) {
            significant--;
        }
        boolean matches = dims.getFirst() == slot.cols()
                && (significant == 1 ? slot.rows() == 1 : significant == 2 && dims.get(1) == slot.rows());
        if (!matches) {
            throw new ModelFormatException(f.file() + ": tensor " + name + ": GGUF shape " + dims
                    + " does not match the expected [" + slot.cols() + ", " + slot.rows() + "] from the metadata");
        }
        try {
            return new Tensor(name, info.type(), slot.rows(), slot.cols(), f.data(info));
        } catch (ModelFormatException e) {
            throw new ModelFormatException(f.file() + ": " + e.getMessage(), e);
        }
    }

    /** The SentencePiece vocabulary from {@code tokenizer.ggml.*}, or null when the file carries none. */
    public static Vocabulary vocabulary(GgufFile f) {
        if (f.get("tokenizer.ggml.tokens").isEmpty()) {
            return null;
        }
        if (f.get("tokenizer.ggml.model").isPresent()) {
            String model = f.string("tokenizer.ggml.model");
            if (!model.equals("llama")) {
                throw new ModelFormatException(f.file() + ": tokenizer.ggml.model '" + model
                        + "' is not supported (supported: llama); pass a tokenizer file explicitly");
            }
        }
        List<String> pieces = f.strings("tokenizer.ggml.tokens");
        List<String> tokens = new ArrayList<>(pieces.size());
        for (String p : pieces) {
            tokens.add(p.replace(SPACE_MARKER, " "));
        }
        float[] scores = f.get("tokenizer.ggml.scores").isPresent() ? f.floats("tokenizer.ggml.scores")
                : new float[tokens.size()];
        if (scores.length != tokens.size()) {
            throw new ModelFormatException(f.file() + ": tokenizer.ggml.scores has " + scores.length
                    + " entries but tokenizer.ggml.tokens has " + tokens.size());
        }
        int last = tokens.size() - 1;
        int bos = f.get("tokenizer.ggml.bos_token_id").isPresent()
                ? (int) f.integer("tokenizer.ggml.bos_token_id", 0, last) : 1;
        int eos = f.get("tokenizer.ggml.eos_token_id").isPresent()
                ? (int) f.integer("tokenizer.ggml.eos_token_id", 0, last) : 2;
        return new Vocabulary(tokens, scores, bos, eos);
    }

    /**
     * Type a tensor is stored as when the model is written as {@code requested}: norms stay F32 (as
     * llama.cpp expects), and a quantised tensor whose rows are not whole blocks falls back to F16.
     */
    public static DType storedType(LlamaTensors.Slot slot, DType requested) {
        if (slot.role().isNorm()) {
            return DType.F32;
        }
        if (slot.cols() % requested.blockSize() != 0) {
            return DType.F16;
        }
        return requested;
    }

    /**
     * A writer holding llama metadata, the vocabulary (when not null) and every tensor of {@code cfg}
     * in llama.cpp's order, each produced by {@code source}.
     */
    public static GgufWriter writer(ModelConfig cfg, Vocabulary vocab, DType dtype, String name,
                                    Function<LlamaTensors.Slot, RowSource> source) {
        GgufWriter w = new GgufWriter();
        w.put("general.architecture", GgufValue.string(ARCH));
        w.put("general.name", GgufValue.string(name));
        w.put("general.file_type", GgufValue.uint32(switch (dtype) {
            case F32 -> 0;
            case F16 -> 1;
            case Q8_0 -> 7;
            case BF16 -> 32;
            case Q4_0 -> 2;
            case Q4_K -> 15; // llama.cpp's Q4_K_M
            case Q5_K -> 17; // Q5_K_M
            case Q6_K -> 18;
        }));
        w.put("llama.vocab_size", GgufValue.uint32(cfg.vocabSize()));
        w.put("llama.context_length", GgufValue.uint32(cfg.seqLen()));
        w.put("llama.embedding_length", GgufValue.uint32(cfg.dim()));
        w.put("llama.block_count", GgufValue.uint32(cfg.nLayers()));
        w.put("llama.feed_forward_length", GgufValue.uint32(cfg.hiddenDim()));
        w.put("llama.rope.dimension_count", GgufValue.uint32(cfg.headSize()));
        w.put("llama.attention.head_count", GgufValue.uint32(cfg.nHeads()));
        w.put("llama.attention.head_count_kv", GgufValue.uint32(cfg.nKvHeads()));
        w.put("llama.attention.layer_norm_rms_epsilon", GgufValue.float32(cfg.rmsEps()));
        w.put("llama.rope.freq_base", GgufValue.float32(cfg.ropeTheta()));
        if (vocab != null) {
            putVocabulary(w, vocab);
        }
        for (LlamaTensors.Slot slot : LlamaTensors.ggufOrder(cfg)) {
            DType type = storedType(slot, dtype);
            if (slot.role().isNorm()) {
                w.addVector(slot.ggufName(), type, slot.cols(), source.apply(slot));
            } else {
                w.addMatrix(slot.ggufName(), type, slot.rows(), slot.cols(), source.apply(slot));
            }
        }
        return w;
    }

    private static void putVocabulary(GgufWriter w, Vocabulary vocab) {
        List<String> pieces = new ArrayList<>(vocab.size());
        List<Float> scores = new ArrayList<>(vocab.size());
        List<Integer> types = new ArrayList<>(vocab.size());
        for (int i = 0; i < vocab.size(); i++) {
            String t = vocab.tokens().get(i);
            pieces.add(t.replace(" ", SPACE_MARKER));
            scores.add(vocab.scores()[i]);
            types.add(tokenType(vocab, i, t));
        }
        w.put("tokenizer.ggml.model", GgufValue.string("llama"));
        w.put("tokenizer.ggml.tokens", GgufValue.array(GgufType.STRING, pieces));
        w.put("tokenizer.ggml.scores", GgufValue.array(GgufType.FLOAT32, scores));
        w.put("tokenizer.ggml.token_type", GgufValue.array(GgufType.INT32, types));
        w.put("tokenizer.ggml.bos_token_id", GgufValue.uint32(vocab.bosId()));
        w.put("tokenizer.ggml.eos_token_id", GgufValue.uint32(vocab.eosId()));
    }

    private static int tokenType(Vocabulary vocab, int id, String piece) {
        if (id == vocab.bosId() || id == vocab.eosId()) {
            return TOKEN_CONTROL;
        }
        if (piece.equals("<unk>")) {
            return TOKEN_UNKNOWN;
        }
        if (piece.length() == 6 && piece.startsWith("<0x") && piece.endsWith(">")) {
            return TOKEN_BYTE;
        }
        return TOKEN_NORMAL;
    }
}
