package dev.pagewarden.platform.completion;

import java.util.List;

/**
 * The plain chat template for models without one of their own: each turn as {@code role: text} on
 * its own line, then {@code assistant:} for the model to continue. Simple on purpose - the served
 * models are base models, and the template is part of the prompt token count a client is billed for.
 */
final class ChatTemplate {
    private ChatTemplate() {
    }

    static String render(List<ChatMessage> messages) {
        StringBuilder sb = new StringBuilder();
        for (ChatMessage m : messages) {
            sb.append(m.role()).append(": ").append(m.content().strip()).append('\n');
        }
        return sb.append("assistant:").toString();
    }
}
