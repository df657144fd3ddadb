package dev.pagewarden.core.template;

import java.util.Objects;

/** One turn of a conversation as a client sends it: a role ({@code system}, {@code user}, {@code assistant}, ...) and its text. */
public record ChatMessage(String role, String content) {
    public ChatMessage {
        Objects.requireNonNull(role, "role");
        Objects.requireNonNull(content, "content");
    }
}
