package dev.pagewarden.platform.engine;

import dev.pagewarden.core.engine.InferenceEngine;
import dev.pagewarden.core.template.ChatTemplate;
import dev.pagewarden.core.tokenizer.TextTokenizer;

import java.nio.file.Path;

/** The model the platform serves: its API id, the engine running it (in this process or on engine nodes), its own tokenizer and chat template. */
public record ServedModel(String id, InferenceEngine engine, TextTokenizer tokenizer, ChatTemplate chatTemplate, Path source,
                          String format) {

    /** What admission accepts for prompt + max_tokens: the engine's effective window, never the model's nominal one. */
    public int contextWindow() {
        return engine.contextWindow();
    }
}
