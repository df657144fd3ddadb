package dev.pagewarden.core.model.load;

import dev.pagewarden.core.model.LlamaWeights;
import dev.pagewarden.core.model.ModelConfig;
import dev.pagewarden.core.tokenizer.Vocabulary;

import java.lang.foreign.Arena;
import java.nio.file.Path;

/**
 * A model ready for a backend: its weights (views over memory-mapped files that {@code arena} owns)
 * and, when one was found, its vocabulary. Closing it unmaps the files; no tensor may be used after.
 */
public record LoadedModel(Path source, String format, LlamaWeights weights, Vocabulary vocabulary, Arena arena)
        implements AutoCloseable {

    public ModelConfig config() {
        return weights.config();
    }

    @Override
    public void close() {
        arena.close();
    }
}
