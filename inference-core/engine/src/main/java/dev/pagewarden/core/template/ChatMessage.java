package dev.pagewarden.core.template;

import java.util.List;
import java.util.Objects;

/**
 * One turn of a conversation as a client sends it: a role ({@code system}, {@code user}, {@code assistant},
 * {@code tool}, ...) and its text; an assistant turn may carry the tool calls it made, and a tool turn names the
 * call it answers.
 *
 * @param toolCalls  the calls an assistant turn made (empty for any other turn)
 * @param toolCallId the call a {@code tool} turn answers; null for any other turn
 */
public record ChatMessage(String role, String content, List<ToolCall> toolCalls, String toolCallId) {
    public ChatMessage {
        Objects.requireNonNull(role, "role");
        Objects.requireNonNull(content, "content");
        toolCalls = List.copyOf(toolCalls);
    }

    public ChatMessage(String role, String content) {
        this(role, content, List.of(), null);
    }

    /** A call an assistant made: its id, the function's name and its arguments as JSON text. */
    public record ToolCall(String id, String name, String arguments) {
        public ToolCall {
            Objects.requireNonNull(id, "id");
            Objects.requireNonNull(name, "name");
            Objects.requireNonNull(arguments, "arguments");
        }
    }
}
