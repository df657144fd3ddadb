package dev.pagewarden.core.tools;

import dev.pagewarden.core.grammar.JsonGrammar;
import dev.pagewarden.core.template.ChatTemplate;

import java.util.List;

/**
 * How a model family writes a tool call, read off its chat template. A template that never mentions {@code tools}
 * cannot show them, so those models get {@link #JSON}: the tools listed in a system message and the answer asked as
 * one JSON object (see {@link ToolPrompt}).
 */
public enum ToolFormat {
    /** Qwen 2.5 and 3, Hermes: {@code <tool_call>\n{"name": ..., "arguments": {...}}\n</tool_call>}, one block a call. */
    HERMES,
    /** Llama 3.1 and later: a bare {@code {"name": ..., "parameters": {...}}}, or led by {@code <|python_tag|>}. */
    LLAMA3,
    /** Mistral: {@code [TOOL_CALLS][{"name": ..., "arguments": {...}}, ...]}. */
    MISTRAL,
    /** The convention for templates without tools (and families not known here): {@code {"name": ..., "arguments": {...}}}. */
    JSON;

    /** The format the model of {@code template} writes. */
    public static ToolFormat of(ChatTemplate template) {
        if (!template.rendersTools()) {
            return JSON;
        }
        String s = template.source();
        if (s.contains("<tool_call>")) {
            return HERMES;
        }
        if (s.contains("[TOOL_CALLS]")) {
            return MISTRAL;
        }
        if (s.contains("<|python_tag|>") || s.contains("ipython")) {
            return LLAMA3;
        }
        return JSON;
    }

    /**
     * The grammar of exactly one call to one of {@code tools}, in this format, its arguments valid for the
     * function's parameter schema ({@code tool_choice} required, or one named function). Mistral's call is written
     * without its {@code [TOOL_CALLS]} marker, a control token that constrained decoding does not emit.
     */
    public JsonGrammar forcedCall(List<ToolSpec> tools) {
        if (tools.isEmpty()) {
            throw new IllegalArgumentException("a forced call needs at least one tool");
        }
        return JsonGrammar.oneOf(tools.stream().map(t -> JsonGrammar.sequence(List.of(
                JsonGrammar.text(opening(t.name())), t.parameters(), JsonGrammar.text(closing())))).toList());
    }

    private String opening(String name) {
        return switch (this) {
            case HERMES -> "<tool_call>\n{\"name\": \"" + name + "\", \"arguments\": ";
            case LLAMA3 -> "{\"name\": \"" + name + "\", \"parameters\": ";
            case MISTRAL -> "[{\"name\": \"" + name + "\", \"arguments\": ";
            case JSON -> "{\"name\": \"" + name + "\", \"arguments\": ";
        };
    }

    private String closing() {
        return switch (this) {
            case HERMES -> "}\n</tool_call>";
            case MISTRAL -> "}]";
            case LLAMA3, JSON -> "}";
        };
    }
}
