package dev.pagewarden.core.tools;

import dev.pagewarden.core.grammar.JsonGrammar;

import java.util.Objects;

/**
 * A function the model may call: its name (letters, digits, underscores and dashes, as OpenAI's) and its parameter
 * schema compiled to the grammar its arguments follow when a call is forced.
 */
public record ToolSpec(String name, JsonGrammar parameters) {
    public ToolSpec {
        Objects.requireNonNull(parameters, "parameters");
        if (name == null || !name.matches("[a-zA-Z0-9_-]{1,64}")) {
            throw new IllegalArgumentException("a function name is 1 to 64 letters, digits, underscores and dashes");
        }
    }
}
