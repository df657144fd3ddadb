package dev.pagewarden.core.tools;

import java.util.Objects;

/** A call read from a model's output: the function's name and its arguments as compact JSON object text. */
public record ToolCall(String name, String arguments) {
    public ToolCall {
        Objects.requireNonNull(name, "name");
        Objects.requireNonNull(arguments, "arguments");
    }
}
