package dev.pagewarden.core.model.load;

import dev.pagewarden.core.model.Llama2cLoader;
import dev.pagewarden.core.model.LlamaWeights;
import dev.pagewarden.core.model.ModelFormatException;
import dev.pagewarden.core.model.gguf.GgufFile;
import dev.pagewarden.core.model.gguf.GgufLlama;
import dev.pagewarden.core.model.gguf.GgufReader;
import dev.pagewarden.core.model.safetensors.GenerationConfig;
import dev.pagewarden.core.model.safetensors.HfLlama;
import dev.pagewarden.core.template.ChatTemplate;
import dev.pagewarden.core.tokenizer.HfTokenizer;
import dev.pagewarden.core.tokenizer.TokenizerBin;
import dev.pagewarden.core.template.ChatTemplates;
import dev.pagewarden.core.tokenizer.TextTokenizer;
import dev.pagewarden.core.tokenizer.Vocabulary;

import java.io.IOException;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;

/**
 * Entry point for loading a model file of any supported format, detected by its first bytes: GGUF
 * ("GGUF"), llama2.c version 1 ("ak42") or else the llama2.c legacy layout; a folder is a Hugging Face
 * safetensors checkpoint ({@link HfLlama}). Weights are memory-mapped
 * into a shared arena that the returned {@link LoadedModel} owns.
 */
public final class ModelLoader {

    /** The file formats this loader knows, with the name {@link LoadedModel#format()} reports. */
    public enum Format {
        GGUF("gguf"), LLAMA2C_V1("llama2c-v1"), LLAMA2C("llama2c");

        private final String label;

        Format(String label) {
            this.label = label;
        }

        public String label() {
            return label;
        }
    }

    private ModelLoader() {
    }

    /**
     * Loads {@code model}. A llama2.c checkpoint needs {@code tokenizerOrNull} (a llama2.c tokenizer.bin);
     * for GGUF it is optional and, when given, wins over the vocabulary in the file's metadata.
     */
    public static LoadedModel load(Path model, Path tokenizerOrNull) {
        if (Files.isDirectory(model)) {
            if (tokenizerOrNull != null) {
                throw new ModelFormatException(model + ": a Hugging Face folder carries its own tokenizer.json; "
                        + "--tokenizer applies to single model files only");
            }
            return loadHfFolder(model);
        }
        Format format = detect(model);
        if (format != Format.GGUF && tokenizerOrNull == null) {
            throw new ModelFormatException(model + ": a llama2.c checkpoint carries no vocabulary; "
                    + "pass its tokenizer.bin with --tokenizer");
        }
        Arena arena = Arena.ofShared();
        try {
            LlamaWeights weights;
            Vocabulary vocab = null;
            GgufFile gguf = null;
            if (format == Format.GGUF) {
                gguf = GgufReader.read(model, arena);
                weights = GgufLlama.weights(gguf);
                if (tokenizerOrNull == null && !isByteLevelBpe(gguf)) {
                    vocab = GgufLlama.vocabulary(gguf);
                }
            } else {
                weights = Llama2cLoader.load(model, arena);
            }
            if (tokenizerOrNull != null) {
                vocab = TokenizerBin.read(tokenizerOrNull);
            }
            if (vocab != null && vocab.size() != weights.config().vocabSize()) {
                Path vocabSource = tokenizerOrNull != null ? tokenizerOrNull : model;
                throw new ModelFormatException(vocabSource + ": vocabulary has " + vocab.size()
                        + " tokens but the model " + model + " has vocab_size " + weights.config().vocabSize());
            }
            if (vocab != null && (vocab.bosId() >= vocab.size() || vocab.eosId() >= vocab.size())) {
                throw new ModelFormatException(model + ": bos/eos token ids " + vocab.bosId() + "/" + vocab.eosId()
                        + " lie outside the " + vocab.size() + "-token vocabulary");
            }
            if (gguf != null && tokenizerOrNull == null && gguf.get("tokenizer.ggml.tokens").isPresent()) {
                // the file's own tokenizer and chat template, read as llama.cpp reads them
                TextTokenizer tokenizer = GgufLlama.tokenizer(gguf);
                if (tokenizer.vocabSize() != weights.config().vocabSize()) {
                    throw new ModelFormatException(model + ": the tokenizer has " + tokenizer.vocabSize()
                            + " tokens but the model has vocab_size " + weights.config().vocabSize());
                }
                return new LoadedModel(model, format.label(), weights, vocab, tokenizer, ChatTemplates.fromGguf(gguf),
                        arena);
            }
            return new LoadedModel(model, format.label(), weights, vocab, arena);
        } catch (RuntimeException e) {
            arena.close();
            throw e;
        }
    }

    /**
     * A Hugging Face model folder: {@code config.json}, the safetensors weights, and, when present,
     * {@code tokenizer.json} with {@code tokenizer_config.json} (the tokenizer and the chat template) and
     * {@code generation_config.json} (more ids that end generation, a BOS id).
     */
    private static LoadedModel loadHfFolder(Path dir) {
        if (!Files.isRegularFile(dir.resolve(HfLlama.CONFIG))) {
            throw new ModelFormatException(dir + ": not a Hugging Face model folder (no " + HfLlama.CONFIG + ")");
        }
        Arena arena = Arena.ofShared();
        try {
            LlamaWeights weights = HfLlama.weights(dir, arena);
            TextTokenizer tokenizer = null;
            ChatTemplate template = null;
            if (Files.isRegularFile(dir.resolve("tokenizer.json"))) {
                tokenizer = HfTokenizer.load(dir).build();
                // Hugging Face pads the embedding past the tokenizer (Qwen: 151936 rows, 151669 tokens)
                if (tokenizer.vocabSize() > weights.config().vocabSize()) {
                    throw new ModelFormatException(dir.resolve("tokenizer.json") + ": the tokenizer has "
                            + tokenizer.vocabSize() + " tokens but " + HfLlama.CONFIG + " has vocab_size "
                            + weights.config().vocabSize());
                }
                GenerationConfig generation = GenerationConfig.read(dir)
                        .requireWithin(tokenizer.vocabSize(), dir, "tokenizer.json");
                tokenizer = GenerationStops.of(tokenizer, generation);
                template = Files.isRegularFile(dir.resolve("tokenizer_config.json"))
                        ? ChatTemplates.fromHfFolder(dir) : ChatTemplate.fallback(null, null);
            }
            return new LoadedModel(dir, HfLlama.FORMAT, weights, null, tokenizer, template, arena);
        } catch (RuntimeException e) {
            arena.close();
            throw e;
        }
    }

    private static boolean isByteLevelBpe(GgufFile gguf) {
        return gguf.get("tokenizer.ggml.model").isPresent() && gguf.string("tokenizer.ggml.model").equals("gpt2");
    }

    /** The format of {@code model} from its first eight bytes. */
    public static Format detect(Path model) {
        ByteBuffer head = ByteBuffer.allocate(8).order(ByteOrder.LITTLE_ENDIAN);
        try (FileChannel ch = FileChannel.open(model, StandardOpenOption.READ)) {
            while (head.hasRemaining() && ch.read(head) >= 0) {
                // read until eight bytes or end of file
            }
        } catch (IOException e) {
            throw new ModelFormatException(model + ": cannot read model file: " + e.getMessage(), e);
        }
        head.flip();
        if (GgufReader.hasMagic(MemorySegment.ofBuffer(head))) {
            return Format.GGUF;
        }
        if (head.remaining() >= 4 && head.getInt(0) == Llama2cLoader.V1_MAGIC) {
            return Format.LLAMA2C_V1;
        }
        return Format.LLAMA2C;
    }
}
