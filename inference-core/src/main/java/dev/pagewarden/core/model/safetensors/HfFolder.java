package dev.pagewarden.core.model.safetensors;

import dev.pagewarden.core.model.LlamaWeights;
import dev.pagewarden.core.model.ModelFormatException;
import dev.pagewarden.core.model.load.LoadedModel;
import dev.pagewarden.core.template.ChatTemplate;
import dev.pagewarden.core.template.ChatTemplates;
import dev.pagewarden.core.tokenizer.HfTokenizer;
import dev.pagewarden.core.tokenizer.TextTokenizer;

import java.lang.foreign.Arena;
import java.nio.file.Files;
import java.nio.file.Path;

/**
 * Loads a Hugging Face model folder: {@code config.json}, the safetensors weights, and, when present,
 * {@code tokenizer.json} with {@code tokenizer_config.json} (the tokenizer and the chat template).
 */
public final class HfFolder {
    public static final String FORMAT = "safetensors";

    private HfFolder() {
    }

    /** True when {@code path} is a folder with a {@code config.json}. */
    public static boolean isHfFolder(Path path) {
        return Files.isDirectory(path) && Files.isRegularFile(path.resolve(HfLlama.CONFIG));
    }

    public static LoadedModel load(Path dir) {
        if (!isHfFolder(dir)) {
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
                template = Files.isRegularFile(dir.resolve("tokenizer_config.json"))
                        ? ChatTemplates.fromHfFolder(dir) : ChatTemplate.fallback(null, null);
            }
            return new LoadedModel(dir, FORMAT, weights, null, tokenizer, template, arena);
        } catch (RuntimeException e) {
            arena.close();
            throw e;
        }
    }
}
