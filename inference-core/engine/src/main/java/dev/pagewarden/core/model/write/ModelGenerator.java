package dev.pagewarden.core.model.write;

import dev.pagewarden.core.model.Architecture;
import dev.pagewarden.core.model.DType;
import dev.pagewarden.core.model.Llama2cWriter;
import dev.pagewarden.core.model.LlamaTensors;
import dev.pagewarden.core.model.ModelConfig;
import dev.pagewarden.core.model.ModelFormatException;
import dev.pagewarden.core.model.RowSource;
import dev.pagewarden.core.model.gguf.GgufLlama;
import dev.pagewarden.core.model.gguf.GgufValue;
import dev.pagewarden.core.model.gguf.GgufWriter;
import dev.pagewarden.core.model.safetensors.GenerationConfig;
import dev.pagewarden.core.model.safetensors.HfLlama;
import dev.pagewarden.core.model.safetensors.SafetensorsReader;
import dev.pagewarden.core.model.safetensors.SafetensorsWriter;
import dev.pagewarden.core.tokenizer.TokenizerSpec;
import dev.pagewarden.core.tokenizer.Vocabulary;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.function.LongConsumer;
import java.util.function.LongFunction;

/**
 * Writes deterministic random-weight Llama models of any shape, for tests and benchmarks. Every row
 * of every tensor has its own splitmix64 stream seeded from (seed, tensor name, row), so values do not
 * depend on the file format or on the order rows are written: a .bin and a .gguf generated with the
 * same seed hold the same weights, and the same seed always gives the same bytes.
 */
public final class ModelGenerator {

    public enum FileFormat {
        /** llama2.c legacy checkpoint (fp32). */
        BIN,
        /** GGUF v3 with a synthetic vocabulary. */
        GGUF,
        /** A Hugging Face folder: config.json and model.safetensors (f32, f16 or bf16). */
        SAFETENSORS
    }

    /** Three specials and 256 byte-fallback tokens: the smallest vocabulary the tokenizer can encode anything with. */
    public static final int MIN_VOCAB_WITH_TOKENIZER = 3 + 256;

    private ModelGenerator() {
    }

    /**
     * Writes a model of shape {@code cfg} to {@code out}. {@code progress} is asked once for a listener
     * given the file size. A GGUF file carries {@link #vocabulary} when the shape's vocabulary is large
     * enough for it; llama2.c .bin files hold fp32 only.
     */
    public static void generate(ModelConfig cfg, DType dtype, FileFormat format, long seed, Path out,
                                LongFunction<LongConsumer> progress) throws IOException {
        generate(cfg, dtype, format, seed, out, null, null, progress);
    }

    /**
     * As above; a GGUF file carries {@code tokenizer} (a real model's, whose size must be the shape's
     * vocabulary) and {@code chatTemplate} (Jinja source, null: none) instead of the synthetic vocabulary.
     */
    public static void generate(ModelConfig cfg, DType dtype, FileFormat format, long seed, Path out,
                                TokenizerSpec tokenizer, String chatTemplate, LongFunction<LongConsumer> progress)
            throws IOException {
        generate(cfg, dtype, false, format, seed, out, tokenizer, chatTemplate, progress);
    }

    /** As above; {@code mixed}: llama.cpp's Q4_K_M / Q5_K_M mix of {@code dtype} ({@link GgufLlama#mixedType}), GGUF only. */
    public static void generate(ModelConfig cfg, DType dtype, boolean mixed, FileFormat format, long seed, Path out,
                                TokenizerSpec tokenizer, String chatTemplate, LongFunction<LongConsumer> progress)
            throws IOException {
        if (tokenizer != null && (format == FileFormat.BIN || tokenizer.pieces().size() != cfg.vocabSize())) {
            throw new ModelFormatException(out + ": a real tokenizer goes into a GGUF file or a Hugging Face folder "
                    + "whose vocabulary is its size (" + tokenizer.pieces().size() + " tokens, shape has "
                    + cfg.vocabSize() + ")");
        }
        if (mixed && format != FileFormat.GGUF) {
            throw new ModelFormatException(out + ": llama.cpp's K-quant mixes are GGUF files (--format gguf)");
        }
        switch (format) {
            case BIN -> {
                if (cfg.architecture() != Architecture.LLAMA || cfg.ropeScaling() != null || cfg.qDim() != cfg.dim()) {
                    throw new ModelFormatException(out + ": a llama2.c .bin checkpoint holds plain llama models only; "
                            + "write " + cfg.architecture() + " as GGUF (--format gguf)");
                }
                if (dtype != DType.F32) {
                    throw new ModelFormatException(out + ": a llama2.c .bin checkpoint holds only f32 weights; "
                            + "write " + dtype.name().toLowerCase() + " as GGUF (--format gguf)");
                }
                Llama2cWriter.write(out, cfg, slot -> weights(seed, slot), progress.apply(Llama2cWriter.fileSize(cfg)));
            }
            case GGUF -> {
                Vocabulary vocab = tokenizer == null && cfg.vocabSize() >= MIN_VOCAB_WITH_TOKENIZER
                        ? vocabulary(cfg.vocabSize()) : null;
                GgufWriter w = GgufLlama.writer(cfg, vocab, dtype, mixed, "pagewarden-random-seed" + seed,
                        slot -> weights(seed, slot));
                if (tokenizer != null) {
                    GgufLlama.putTokenizer(w, tokenizer);
                }
                if (chatTemplate != null) {
                    w.put("tokenizer.chat_template", GgufValue.string(chatTemplate));
                }
                w.write(out, progress.apply(w.fileSize()));
            }
            case SAFETENSORS -> generateHfFolder(cfg, cfg.architecture().ggufName(), dtype, seed, out, progress);
        }
    }

    /**
     * Writes a Hugging Face folder {@code dir} ({@code config.json} with {@code modelType}, and
     * {@code model.safetensors} in f32, f16 or bf16) holding the weights {@link #generate} writes to GGUF
     * for the same seed: the folder and that GGUF file are the same model.
     */
    public static void generateHfFolder(ModelConfig cfg, String modelType, DType dtype, long seed, Path dir,
                                        LongFunction<LongConsumer> progress) throws IOException {
        SafetensorsWriter w = HfLlama.writer(cfg, dtype, slot -> weights(seed, slot));
        if (Files.exists(dir) && !Files.isDirectory(dir)) {
            throw new ModelFormatException(dir + ": is a file; a Hugging Face model is written as a folder");
        }
        Files.createDirectories(dir);
        HfLlama.writeConfig(dir, cfg, modelType, dtype);
        w.write(dir.resolve(SafetensorsReader.SINGLE), progress.apply(w.fileSize()));
    }

    /**
     * Puts the tokenizer of the Hugging Face folder {@code from} into the model folder {@code dir}:
     * {@code tokenizer.json}, {@code tokenizer_config.json} (and {@code chat_template.jinja}) as they are,
     * and a {@code generation_config.json} with the tokenizer's BOS and EOS ids.
     */
    public static void copyHfTokenizer(Path from, TokenizerSpec tokenizer, Path dir) throws IOException {
        for (String name : List.of("tokenizer.json", "tokenizer_config.json", "chat_template.jinja")) {
            if (Files.isRegularFile(from.resolve(name))) {
                Files.copy(from.resolve(name), dir.resolve(name), StandardCopyOption.REPLACE_EXISTING);
            }
        }
        new GenerationConfig(tokenizer.bos(), tokenizer.eos() >= 0 ? List.of(tokenizer.eos()) : List.of()).write(dir);
    }

    /**
     * The values of one tensor: norm weights are 1; everything else is uniform in +-1/sqrt(row length),
     * which keeps each matrix-vector product at or below its input's scale, so activations stay finite
     * through any number of layers. Biases are uniform in +-0.5 and the per-head Q/K norm weights in
     * 1 +- 0.5, so that a forward pass that skipped or misplaced them would show.
     */
    public static RowSource weights(long seed, LlamaTensors.Slot slot) {
        LlamaTensors.Role role = slot.role();
        if (role == LlamaTensors.Role.Q_NORM || role == LlamaTensors.Role.K_NORM) {
            RowSource u = uniform(seed, slot, 0.5f);
            return (row, dst) -> {
                u.fill(row, dst);
                for (int i = 0; i < dst.length; i++) {
                    dst[i] += 1f;
                }
            };
        }
        if (role.isNorm()) {
            return (row, dst) -> Arrays.fill(dst, 1f);
        }
        return uniform(seed, slot, role.isBias() ? 0.5f : (float) (1.0 / Math.sqrt(slot.cols())));
    }

    private static RowSource uniform(long seed, LlamaTensors.Slot slot, float scale) {
        long tensorSeed = mix(seed ^ fnv1a(slot.ggufName()));
        return (row, dst) -> {
            long state = mix(tensorSeed + row * 0x9E3779B97F4A7C15L);
            for (int i = 0; i < dst.length; i++) {
                state += 0x9E3779B97F4A7C15L;
                // top 24 bits -> uniform in [0, 1), exactly representable as float
                float u = (mix(state) >>> 40) * 0x1.0p-24f;
                dst[i] = (2f * u - 1f) * scale;
            }
        };
    }

    /** splitmix64's finaliser. */
    private static long mix(long z) {
        z = (z ^ (z >>> 30)) * 0xBF58476D1CE4E5B9L;
        z = (z ^ (z >>> 27)) * 0x94D049BB133111EBL;
        return z ^ (z >>> 31);
    }

    private static long fnv1a(String s) {
        long h = 0xcbf29ce484222325L;
        for (byte b : s.getBytes(StandardCharsets.UTF_8)) {
            h = (h ^ (b & 0xff)) * 0x100000001b3L;
        }
        return h;
    }

    /**
     * A synthetic SentencePiece-style vocabulary of exactly {@code size} tokens: {@code <unk>}, {@code <s>},
     * {@code </s>}, the 256 byte-fallback tokens {@code <0x00>..<0xFF>}, the printable ASCII characters, then
     * lowercase pieces with and without a leading space ({@code " a"}, {@code "ab"}, {@code " ab"}, ...).
     * Every multi-character piece splits into two shorter pieces that exist, so merges can build it, and
     * scores favour shorter (earlier) pieces.
     */
    public static Vocabulary vocabulary(int size) {
        if (size < MIN_VOCAB_WITH_TOKENIZER) {
            throw new ModelFormatException("vocab_size " + size + " is too small for a byte-fallback vocabulary (needs "
                    + MIN_VOCAB_WITH_TOKENIZER + ": 3 specials + 256 bytes)");
        }
        List<String> tokens = new ArrayList<>(List.of("<unk>", "<s>", "</s>"));
        for (int b = 0; b < 256; b++) {
            tokens.add(String.format("<0x%02X>", b));
        }
        for (char c = ' '; c <= '~' && tokens.size() < size; c++) {
            tokens.add(String.valueOf(c));
        }
        for (long n = 0; tokens.size() < size; n++) {
            String s = letters(n);
            tokens.add(" " + s);
            if (s.length() > 1 && tokens.size() < size) {
                tokens.add(s);
            }
        }
        float[] scores = new float[size];
        for (int i = MIN_VOCAB_WITH_TOKENIZER; i < size; i++) {
            scores[i] = -(i - MIN_VOCAB_WITH_TOKENIZER);
        }
        return new Vocabulary(tokens, scores, 1, 2);
    }

    /** The n-th string over a..z in length-then-lexicographic order: a, b, .., z, aa, ab, .. */
    private static String letters(long n) {
        StringBuilder sb = new StringBuilder();
        for (long k = n + 1; k > 0; k = (k - 1) / 26) {
            sb.append((char) ('a' + (k - 1) % 26));
        }
        return sb.reverse().toString();
    }
}
