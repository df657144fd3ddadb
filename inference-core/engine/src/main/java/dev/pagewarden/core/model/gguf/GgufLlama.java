package dev.pagewarden.core.model.gguf;

import dev.pagewarden.core.model.Architecture;
import dev.pagewarden.core.model.DType;
import dev.pagewarden.core.model.LlamaTensors;
import dev.pagewarden.core.model.LlamaWeights;
import dev.pagewarden.core.model.ModelConfig;
import dev.pagewarden.core.model.ModelFormatException;
import dev.pagewarden.core.model.RopeScaling;
import dev.pagewarden.core.model.RowSource;
import dev.pagewarden.core.model.Tensor;
import dev.pagewarden.core.tokenizer.TextTokenizer;
import dev.pagewarden.core.tokenizer.TokenType;
import dev.pagewarden.core.tokenizer.TokenizerSpec;
import dev.pagewarden.core.tokenizer.Vocabulary;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.function.Function;

/**
 * Maps between GGUF's llama-family conventions (llama.cpp key and tensor names) and {@link LlamaWeights} /
 * {@link Vocabulary}. Both llama2.c and llama.cpp's LLAMA architecture rotate adjacent pairs in RoPE,
 * so the Q and K matrices carry over unpermuted; llama.cpp's qwen2/qwen3 keep Hugging Face's row
 * order and rotate halves instead ({@link Architecture#neoxRope()}).
 */
public final class GgufLlama {
    private static final String ROPE_FREQS = "rope_freqs.weight";
    /** SentencePiece's word-start marker; {@link Vocabulary} spells it as an ASCII space. */
    private static final String SPACE_MARKER = "\u2581";
    private static final int TOKEN_NORMAL = 1;
    private static final int TOKEN_UNKNOWN = 2;
    private static final int TOKEN_CONTROL = 3;
    private static final int TOKEN_BYTE = 6;

    private GgufLlama() {
    }

    /**
     * The model shape from {@code <arch>.*} metadata (vocabulary size from the embedding tensor). Keys and
     * tensor names follow llama.cpp: an absent {@code output.weight} ties the classifier to the embedding,
     * {@code <arch>.attention.key_length} sets a head size other than dim / heads, and a
     * {@code rope_freqs.weight} tensor carries Llama 3's per-frequency RoPE divisors.
     */
    public static ModelConfig config(GgufFile f) {
        String archName = f.string("general.architecture");
        Architecture arch;
        try {
            arch = Architecture.fromGguf(archName);
        } catch (ModelFormatException e) {
            throw new ModelFormatException(f.file() + ": " + e.getMessage(), e);
        }
        String p = arch.ggufName() + ".";
        GgufTensorInfo embd = f.tensor("token_embd.weight")
                .orElseThrow(() -> new ModelFormatException(f.file() + ": missing tensor token_embd.weight"));
        int vocab = embd.dims().size() == 2 ? (int) (long) embd.dims().get(1) : 1;
        int heads = intKey(f, p + "attention.head_count");
        int dim = intKey(f, p + "embedding_length");
        if (f.get(p + "rope.scaling.type").isPresent() && !f.string(p + "rope.scaling.type").equals("none")) {
            throw new ModelFormatException(f.file() + ": " + p + "rope.scaling.type '" + f.string(p + "rope.scaling.type")
                    + "' is not supported (supported: none, and Llama 3's rope_freqs.weight)");
        }
        ModelConfig cfg;
        try {
            cfg = new ModelConfig(dim, intKey(f, p + "feed_forward_length"),
                    intKey(f, p + "block_count"), heads,
                    f.get(p + "attention.head_count_kv").isPresent() ? intKey(f, p + "attention.head_count_kv") : heads,
                    vocab, intKey(f, p + "context_length"),
                    f.get(p + "attention.layer_norm_rms_epsilon").isPresent()
                            ? (float) f.number(p + "attention.layer_norm_rms_epsilon") : 1e-5f,
                    f.get(p + "rope.freq_base").isPresent() ? (float) f.number(p + "rope.freq_base") : 10000f,
                    f.tensor("output.weight").isEmpty());
            if (f.get(p + "attention.key_length").isPresent()) {
                int keyLength = intKey(f, p + "attention.key_length");
                if (f.get(p + "attention.value_length").isPresent()
                        && intKey(f, p + "attention.value_length") != keyLength) {
                    throw new ModelFormatException(p + "attention.value_length " + intKey(f, p + "attention.value_length")
                            + " differs from " + p + "attention.key_length " + keyLength
                            + " (different K and V head sizes are not supported)");
                }
                cfg = cfg.with(arch, keyLength, null);
            } else {
                cfg = cfg.with(arch, cfg.headSize(), null);
            }
            cfg = cfg.with(arch, cfg.headSize(), ropeScaling(f, cfg));
        } catch (ModelFormatException e) {
            throw new ModelFormatException(f.file() + ": bad " + arch + " metadata: " + e.getMessage(), e);
        }
        if (f.get(p + "rope.dimension_count").isPresent()
                && intKey(f, p + "rope.dimension_count") != cfg.headSize()) {
            throw new ModelFormatException(f.file() + ": " + p + "rope.dimension_count "
                    + intKey(f, p + "rope.dimension_count") + " differs from the head size " + cfg.headSize()
                    + " (partial rotary embeddings are not supported)");
        }
        if (f.get(p + "vocab_size").isPresent() && intKey(f, p + "vocab_size") != vocab) {
            throw new ModelFormatException(f.file() + ": " + p + "vocab_size " + intKey(f, p + "vocab_size")
                    + " differs from token_embd.weight's " + vocab + " rows");
        }
        return cfg;
    }

    /** Llama 3's divisors from {@code rope_freqs.weight}, or null when the file has none. */
    private static RopeScaling ropeScaling(GgufFile f, ModelConfig cfg) {
        var info = f.tensor(ROPE_FREQS);
        if (info.isEmpty()) {
            return null;
        }
        if (cfg.architecture() != Architecture.LLAMA) {
            throw new ModelFormatException("tensor " + ROPE_FREQS + " is only supported for llama, not "
                    + cfg.architecture());
        }
        LlamaTensors.Slot slot = LlamaTensors.slot(cfg, LlamaTensors.Role.ROPE_FREQS, -1);
        Tensor t = tensor(f, slot);
        float[] factors = new float[t.cols()];
        for (int i = 0; i < factors.length; i++) {
            factors[i] = t.get(0, i);
        }
        return new RopeScaling(factors);
    }

    private static int intKey(GgufFile f, String key) {
        return (int) f.integer(key, 0, Integer.MAX_VALUE);
    }

    /** Tensor views over the mapped file, shape-checked against the metadata. */
    public static LlamaWeights weights(GgufFile f) {
        ModelConfig cfg = config(f);
        // a block tensor the architecture does not use (say a bias in a llama file) would silently
        // change nothing here while it changes llama.cpp's output: refuse it instead
        java.util.Set<String> used = new java.util.HashSet<>();
        for (LlamaTensors.Slot slot : LlamaTensors.ggufOrder(cfg)) {
            used.add(slot.ggufName());
        }
        for (GgufTensorInfo t : f.tensors()) {
            if (t.name().startsWith("blk.") && !used.contains(t.name())) {
                throw new ModelFormatException(f.file() + ": tensor " + t.name() + " is not part of a "
                        + cfg.architecture() + " model of " + cfg.nLayers() + " layers (not supported)");
            }
        }
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
     * The model's own tokenizer from {@code tokenizer.ggml.*}: {@code gpt2} (byte-level BPE with
     * {@code merges} and {@code pre}) or {@code llama} (SentencePiece with {@code scores}), with token
     * types, BOS/EOS/EOT ids, {@code add_bos_token} and {@code add_space_prefix} read as llama.cpp reads
     * them (SentencePiece adds BOS and the space prefix unless told otherwise; BPE adds neither).
     */
    public static TextTokenizer tokenizer(GgufFile f) {
        TokenizerSpec spec = tokenizerSpec(f);
        try {
            return spec.build();
        } catch (IllegalArgumentException e) {
            throw new ModelFormatException(f.file() + ": bad tokenizer metadata: " + e.getMessage(), e);
        }
    }

    /** What {@link #tokenizer} builds from, for writing the same tokenizer elsewhere. */
    public static TokenizerSpec tokenizerSpec(GgufFile f) {
        if (f.get("tokenizer.ggml.model").isEmpty()) {
            throw new ModelFormatException(f.file() + ": missing metadata tokenizer.ggml.model (the file carries no tokenizer)");
        }
        String model = f.string("tokenizer.ggml.model");
        if (!model.equals("gpt2") && !model.equals("llama")) {
            throw new ModelFormatException(f.file() + ": tokenizer.ggml.model '" + model
                    + "' is not supported (supported: gpt2, llama)");
        }
        boolean bpe = model.equals("gpt2");
        List<String> pieces = f.strings("tokenizer.ggml.tokens");
        int n = pieces.size();
        TokenType[] types = new TokenType[n];
        Arrays.fill(types, TokenType.NORMAL);
        if (f.get("tokenizer.ggml.token_type").isPresent()) {
            if (!(f.get("tokenizer.ggml.token_type").get().value() instanceof GgufValue.Array(GgufType t, List<Object> items))
                    || t != GgufType.INT32 || items.size() != n) {
                throw new ModelFormatException(f.file() + ": tokenizer.ggml.token_type should be " + n + " INT32 values");
            }
            for (int i = 0; i < n; i++) {
                try {
                    types[i] = TokenType.of((Integer) items.get(i));
                } catch (IllegalArgumentException e) {
                    throw new ModelFormatException(f.file() + ": tokenizer.ggml.token_type[" + i + "]: " + e.getMessage(), e);
                }
            }
        }
        float[] scores = f.get("tokenizer.ggml.scores").isPresent() ? f.floats("tokenizer.ggml.scores") : null;
        if (!bpe && scores == null) {
            throw new ModelFormatException(f.file() + ": missing metadata tokenizer.ggml.scores (SentencePiece needs them)");
        }
        List<String> merges = bpe ? f.strings("tokenizer.ggml.merges") : List.of();
        String preName = bpe && f.get("tokenizer.ggml.pre").isPresent() ? f.string("tokenizer.ggml.pre") : "default";
        boolean llama3 = preName.equals("llama-bpe") || preName.equals("llama3") || preName.equals("llama-v3");
        List<String> pre;
        try {
            pre = bpe ? TokenizerSpec.preTokenizerOf(preName) : List.of();
        } catch (IllegalArgumentException e) {
            throw new ModelFormatException(f.file() + ": " + e.getMessage(), e);
        }
        int last = n - 1;
        int bos = optionalId(f, "tokenizer.ggml.bos_token_id", last, bpe ? -1 : 1);
        int eos = optionalId(f, "tokenizer.ggml.eos_token_id", last, bpe ? -1 : 2);
        int eot = optionalId(f, "tokenizer.ggml.eot_token_id", last, -1);
        boolean addBos = optionalBool(f, "tokenizer.ggml.add_bos_token", !bpe);
        boolean addSpacePrefix = optionalBool(f, "tokenizer.ggml.add_space_prefix", !bpe);
        try {
            return new TokenizerSpec(model, pieces, types, scores, merges, pre, bos, eos, eot, addBos, addSpacePrefix,
                    llama3, false);
        } catch (IllegalArgumentException e) {
            throw new ModelFormatException(f.file() + ": bad tokenizer metadata: " + e.getMessage(), e);
        }
    }

    /**
     * Writes a tokenizer as {@code tokenizer.ggml.*} metadata, the keys llama.cpp's converter writes
     * and {@link #tokenizer} reads back.
     */
    public static void putTokenizer(GgufWriter w, TokenizerSpec spec) {
        List<Integer> types = new ArrayList<>(spec.types().length);
        for (TokenType t : spec.types()) {
            types.add(t.ordinal());
        }
        w.put("tokenizer.ggml.model", GgufValue.string(spec.model()));
        if (spec.model().equals("gpt2")) {
            w.put("tokenizer.ggml.pre", GgufValue.string(spec.ggufPre()));
        }
        w.put("tokenizer.ggml.tokens", GgufValue.array(GgufType.STRING, spec.pieces()));
        w.put("tokenizer.ggml.token_type", GgufValue.array(GgufType.INT32, types));
        if (spec.scores() != null) {
            List<Float> scores = new ArrayList<>(spec.scores().length);
            for (float s : spec.scores()) {
                scores.add(s);
            }
            w.put("tokenizer.ggml.scores", GgufValue.array(GgufType.FLOAT32, scores));
        }
        if (spec.model().equals("gpt2")) { // SentencePiece in GGUF merges by the scores alone
            w.put("tokenizer.ggml.merges", GgufValue.array(GgufType.STRING, spec.merges()));
        }
        if (spec.bos() >= 0) {
            w.put("tokenizer.ggml.bos_token_id", GgufValue.uint32(spec.bos()));
        }
        if (spec.eos() >= 0) {
            w.put("tokenizer.ggml.eos_token_id", GgufValue.uint32(spec.eos()));
        }
        if (spec.eot() >= 0) {
            w.put("tokenizer.ggml.eot_token_id", GgufValue.uint32(spec.eot()));
        }
        w.put("tokenizer.ggml.add_bos_token", GgufValue.bool(spec.addBos()));
        if (spec.model().equals("llama")) {
            w.put("tokenizer.ggml.add_space_prefix", GgufValue.bool(spec.addSpacePrefix()));
        }
    }

    private static int optionalId(GgufFile f, String key, int last, int absent) {
        return f.get(key).isPresent() ? (int) f.integer(key, 0, last) : absent;
    }

    private static boolean optionalBool(GgufFile f, String key, boolean absent) {
        if (f.get(key).isEmpty()) {
            return absent;
        }
        if (f.get(key).get().value() instanceof Boolean b) {
            return b;
        }
        throw new ModelFormatException(f.file() + ": metadata " + key + " should be a bool, got " + f.get(key).get());
    }

    /**
     * Type a tensor is stored as when the model is written as {@code requested}: vectors stay F32 (as
     * llama.cpp expects), and a quantised tensor whose rows are not whole blocks falls back to F16.
     */
    public static DType storedType(LlamaTensors.Slot slot, DType requested) {
        if (slot.role().isVector()) {
            return DType.F32;
        }
        if (slot.cols() % requested.blockSize() != 0) {
            return DType.F16;
        }
        return requested;
    }

    /**
     * Type a tensor is stored as in llama.cpp's Q4_K_M / Q5_K_M mix of {@code base} (Q4_K or Q5_K):
     * the classifier Q6_K (with a tied classifier the token embedding, which serves as it, as
     * llama.cpp does); {@code attn_v} and {@code ffn_down} Q6_K in the layers where llama.cpp's
     * {@code use_more_bits(i, n)} holds ({@code i < n/8 || i >= 7n/8 || (i - n/8) % 3 == 2});
     * everything else {@code base}. Then as {@link #storedType(LlamaTensors.Slot, DType)}.
     */
    public static DType mixedType(LlamaTensors.Slot slot, DType base, ModelConfig cfg) {
        if (base != DType.Q4_K && base != DType.Q5_K) {
            throw new IllegalArgumentException("the _K_M mixes are of Q4_K or Q5_K, not " + base);
        }
        int n = cfg.nLayers(), i = slot.layer();
        boolean moreBits = i < n / 8 || i >= 7 * n / 8 || (i - n / 8) % 3 == 2;
        DType type = switch (slot.role()) {
            case OUTPUT -> DType.Q6_K;
            case TOKEN_EMBD -> cfg.sharedClassifier() ? DType.Q6_K : base;
            case WV, W2 -> moreBits ? DType.Q6_K : base;
            default -> base;
        };
        return storedType(slot, type);
    }

    /**
     * A writer holding the architecture's metadata, the vocabulary (when not null) and every tensor of
     * {@code cfg} in llama.cpp's order, each produced by {@code source} ({@code rope_freqs.weight} comes
     * from the config's RoPE scaling).
     */
    public static GgufWriter writer(ModelConfig cfg, Vocabulary vocab, DType dtype, String name,
                                    Function<LlamaTensors.Slot, RowSource> source) {
        return writer(cfg, vocab, dtype, false, name, source);
    }

    /** As above; {@code mixed}: the tensors typed by {@link #mixedType} (llama.cpp's Q4_K_M or Q5_K_M of {@code dtype}). */
    public static GgufWriter writer(ModelConfig cfg, Vocabulary vocab, DType dtype, boolean mixed, String name,
                                    Function<LlamaTensors.Slot, RowSource> source) {
        GgufWriter w = new GgufWriter();
        String p = cfg.architecture().ggufName() + ".";
        w.put("general.architecture", GgufValue.string(cfg.architecture().ggufName()));
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
        w.put(p + "vocab_size", GgufValue.uint32(cfg.vocabSize()));
        w.put(p + "context_length", GgufValue.uint32(cfg.seqLen()));
        w.put(p + "embedding_length", GgufValue.uint32(cfg.dim()));
        w.put(p + "block_count", GgufValue.uint32(cfg.nLayers()));
        w.put(p + "feed_forward_length", GgufValue.uint32(cfg.hiddenDim()));
        w.put(p + "rope.dimension_count", GgufValue.uint32(cfg.headSize()));
        w.put(p + "attention.head_count", GgufValue.uint32(cfg.nHeads()));
        w.put(p + "attention.head_count_kv", GgufValue.uint32(cfg.nKvHeads()));
        w.put(p + "attention.layer_norm_rms_epsilon", GgufValue.float32(cfg.rmsEps()));
        w.put(p + "rope.freq_base", GgufValue.float32(cfg.ropeTheta()));
        if (cfg.headSize() * cfg.nHeads() != cfg.dim()) {
            w.put(p + "attention.key_length", GgufValue.uint32(cfg.headSize()));
            w.put(p + "attention.value_length", GgufValue.uint32(cfg.headSize()));
        }
        if (vocab != null) {
            putVocabulary(w, vocab);
        }
        for (LlamaTensors.Slot slot : LlamaTensors.ggufOrder(cfg)) {
            DType type = mixed ? mixedType(slot, dtype, cfg) : storedType(slot, dtype);
            if (slot.role() == LlamaTensors.Role.ROPE_FREQS) {
                float[] factors = cfg.ropeScaling().factors();
                w.addVector(slot.ggufName(), type, slot.cols(), (row, dst) -> System.arraycopy(factors, 0, dst, 0, dst.length));
            } else if (slot.role().isVector()) {
                w.addVector(slot.ggufName(), type, slot.cols(), source.apply(slot));
            } else {
                w.addMatrix(slot.ggufName(), type, slot.rows(), slot.cols(), source.apply(slot));
            }
        }
        return w;
    }

    /**
     * A llama2.c vocabulary as the SentencePiece tokenizer llama.cpp builds from the GGUF this writer
     * makes of it (pieces with {@code ▁} for spaces, control BOS/EOS, byte pieces, BOS and a space
     * prefix added): how a llama2.c checkpoint's prompts are tokenized when served.
     */
    public static TokenizerSpec sentencePiece(Vocabulary vocab) {
        List<String> pieces = new ArrayList<>(vocab.size());
        TokenType[] types = new TokenType[vocab.size()];
        for (int i = 0; i < vocab.size(); i++) {
            String t = vocab.tokens().get(i);
            pieces.add(t.replace(" ", SPACE_MARKER));
            types[i] = TokenType.of(tokenType(vocab, i, t));
        }
        return new TokenizerSpec("llama", pieces, types, vocab.scores(), List.of(), List.of(), vocab.bosId(),
                vocab.eosId(), -1, true, true, false, false);
    }

    private static void putVocabulary(GgufWriter w, Vocabulary vocab) {
        TokenizerSpec spec = sentencePiece(vocab);
        List<String> pieces = spec.pieces();
        List<Float> scores = new ArrayList<>(vocab.size());
        List<Integer> types = new ArrayList<>(vocab.size());
        for (int i = 0; i < vocab.size(); i++) {
            scores.add(vocab.scores()[i]);
            types.add(spec.types()[i].ordinal());
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
