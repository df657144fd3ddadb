package dev.pagewarden.platform.completion;

import java.util.List;

/**
 * One chat turn: role (system, developer, user, assistant, tool) and its text; an assistant turn's tool calls, and
 * the call a tool turn answers (null for any other turn).
 */
record ChatMessage(String role, String content, List<dev.pagewarden.core.template.ChatMessage.ToolCall> toolCalls,
                   String toolCallId) {
    ChatMessage(String role, String content) {
        this(role, content, List.of(), null);
    }

    /** As the template takes it. */
    dev.pagewarden.core.template.ChatMessage toTemplate() {
        return new dev.pagewarden.core.template.ChatMessage(role, content, toolCalls, toolCallId);
    }
}
