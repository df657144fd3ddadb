package dev.pagewarden.core.model.write;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.pagewarden.core.model.DType;
import dev.pagewarden.core.model.LlamaTensors;
import dev.pagewarden.core.model.ModelFormatException;
import dev.pagewarden.core.model.RowSource;

import dev.pagewarden.core.model.gguf.GgufLlama;
import dev.pagewarden.core.model.gguf.GgufReader;
import dev.pagewarden.core.model.gguf.GgufValue;
import dev.pagewarden.core.model.gguf.GgufWriter;
import dev.pagewarden.core.model.load.LoadedModel;
import dev.pagewarden.core.model.load.ModelLoader;
import dev.pagewarden.core.model.safetensors.GenerationConfig;
import dev.pagewarden.core.template.ChatTemplate;
import dev.pagewarden.core.tokenizer.HfTokenizer;
import dev.pagewarden.core.tokenizer.TokenType;
import dev.pagewarden.core.tokenizer.TokenizerSpec;
import dev.pagewarden.core.tokenizer.Vocabulary;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.lang.foreign.Arena;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.function.Consumer;
import java.util.function.LongConsumer;
import java.util.function.LongFunction;

/**
 * Converts a model (a llama2.c checkpoint with its tokenizer.bin, a GGUF file, or a Hugging Face
 * folder) to GGUF in any of the engine's types. Tensors stream from the memory-mapped input to the
 * output row by row.
 */
public final class Converter {
    private Converter() {
    }

    /** A folder as {@code model} is converted as {@link #convertHfFolder} converts it. */
    public static void convert(Path model, Path tokenizerOrNull, Path out, DType dtype,
                               LongFunction<LongConsumer> progress) throws IOException {
        if (Files.isDirectory(model) && tokenizerOrNull == null) {
            convertHfFolder(model, out, dtype, progress);
            return;
        }
        try (LoadedModel in = ModelLoader.load(model, tokenizerOrNull)) {
            String name = model.getFileName().toString().replaceFirst("\\.[^.]*$", "");
            if (tokenizerOrNull == null && in.format().equals("gguf")) {
                // the source's tokenizer and template as they are (byte-level BPE, padding id and all)
                try (Arena arena = Arena.ofConfined()) {
                    Map<String, GgufValue> keys = new LinkedHashMap<>();
                    GgufReader.read(model, arena).metadata().forEach((k, v) -> {
                        if (k.startsWith("tokenizer.")) {
                            keys.put(k, v);
                        }
                    });
                    write(in, name, out, dtype, null, w -> keys.forEach(w::put), progress);
                }
            } else {
                write(in, name, out, dtype, in.vocabulary(), w -> { }, progress);
            }
        }
    }

    /**
     * A Hugging Face folder to the GGUF llama.cpp's converter makes of it: the weights as the engine
     * loads them (llama Q/K rows permuted, vectors F32), the architecture's metadata, and, when the
     * folder has a {@code tokenizer.json}, the tokenizer (padded with {@code [PAD<id>]} entries up to
     * the model's vocabulary size, the padding id of {@code tokenizer_config.json}, a BOS or EOS id
     * that only {@code generation_config.json} names) and the chat template.
     */
    public static void convertHfFolder(Path dir, Path out, DType dtype, LongFunction<LongConsumer> progress)
            throws IOException {
        try (LoadedModel in = ModelLoader.load(dir, null)) {
            Path name = dir.toAbsolutePath().normalize().getFileName();
            write(in, name == null ? "model" : name.toString(), out, dtype, in.vocabulary(),
                    w -> putHfTokenizer(w, in, in.tokenizer() == null ? null : dir), progress);
        }
    }

    private static void write(LoadedModel in, String name, Path out, DType dtype, Vocabulary vocabulary,
                              Consumer<GgufWriter> tokenizer, LongFunction<LongConsumer> progress) throws IOException {
        GgufWriter w = GgufLlama.writer(in.config(), vocabulary, dtype, name,
                slot -> RowSource.of(LlamaTensors.tensor(in.weights(), slot)));
        tokenizer.accept(w);
        w.write(out, progress.apply(w.fileSize()));
    }

    private static void putHfTokenizer(GgufWriter w, LoadedModel in, Path hfTokenizerDir) {
        if (hfTokenizerDir == null) {
            return;
        }
        TokenizerSpec spec = paddedTokenizer(hfTokenizerDir, in.config().vocabSize());
        GgufLlama.putTokenizer(w, spec);
        int pad;
        try {
            pad = paddingId(hfTokenizerDir, spec.pieces());
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        if (pad >= 0) {
            w.put("tokenizer.ggml.padding_token_id", GgufValue.uint32(pad));
        }
        ChatTemplate template = in.chatTemplate();
        if (template != null && !template.source().equals(ChatTemplate.FALLBACK_SOURCE)) {
            w.put("tokenizer.chat_template", GgufValue.string(template.source()));
        }
    }

    /**
     * The folder's tokenizer with one entry per embedding row, as llama.cpp's converter writes it: ids
     * the tokenizer leaves out are {@code [PAD<id>]}, unused; BOS and EOS fall back to
     * {@code generation_config.json}.
     */
    static TokenizerSpec paddedTokenizer(Path dir, int vocabSize) {
        TokenizerSpec spec = HfTokenizer.load(dir);
        int n = spec.pieces().size();
        GenerationConfig generation = GenerationConfig.read(dir).requireWithin(n, dir, "tokenizer.json");
        List<String> pieces = new ArrayList<>(vocabSize);
        TokenType[] types = new TokenType[vocabSize];
        float[] scores = spec.scores() == null ? null : Arrays.copyOf(spec.scores(), vocabSize);
        for (int id = 0; id < vocabSize; id++) {
            boolean gap = id >= n || (spec.types()[id] == TokenType.UNUSED && spec.pieces().get(id).isEmpty());
            pieces.add(gap ? "[PAD" + id + "]" : spec.pieces().get(id));
            types[id] = gap ? TokenType.UNUSED : spec.types()[id];
            if (scores != null && id >= n) {
                scores[id] = -1000f;
            }
        }
        int bos = spec.bos() >= 0 ? spec.bos() : generation.bos();
        int eos = spec.eos() >= 0 ? spec.eos() : generation.eos().isEmpty() ? -1 : generation.eos().getFirst();
        return new TokenizerSpec(spec.model(), pieces, types, scores, spec.merges(), spec.preTokenizer(), bos, eos,
                spec.eot(), spec.addBos(), spec.addSpacePrefix(), spec.ignoreMerges(), spec.nfc());
    }

    /** {@code tokenizer_config.json}'s {@code pad_token} as an id, -1 when it names none. */
    private static int paddingId(Path dir, List<String> pieces) throws IOException {
        Path file = dir.resolve("tokenizer_config.json");
        if (!Files.isRegularFile(file)) {
            return -1;
        }
        JsonNode pad = new ObjectMapper().readTree(file.toFile()).get("pad_token");
        if (pad != null && pad.isObject()) {
            pad = pad.get("content");
        }
        if (pad == null || !pad.isTextual()) {
            return -1;
        }
        int id = pieces.indexOf(pad.asText());
        if (id < 0) {
            throw new ModelFormatException(file + ": pad_token '" + pad.asText() + "' is not in the vocabulary");
        }
        return id;
    }
}
