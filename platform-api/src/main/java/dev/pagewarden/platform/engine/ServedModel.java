package dev.pagewarden.platform.engine;

import dev.pagewarden.core.engine.Engine;
import dev.pagewarden.core.tokenizer.Tokenizer;

import java.nio.file.Path;

/** The model the platform serves: its API id, the engine running it and the tokenizer for its text. */
public record ServedModel(String id, Engine engine, Tokenizer tokenizer, Path source, String format) {

    /** What admission accepts for prompt + max_tokens: the engine's effective window, never the model's nominal one. */
    public int contextWindow() {
        return engine.contextWindow();
    }
}
