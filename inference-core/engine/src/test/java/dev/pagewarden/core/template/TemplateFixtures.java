package dev.pagewarden.core.template;

import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;

/**
 * Templates in the shape of published ones that no npm package ships (Llama 3.2 Instruct, Qwen 2.5
 * Instruct, Llama 2 Chat), under {@code src/test/resources/chat-templates}: they exercise the constructs
 * real templates use (slices, {@code raise_exception}, {@code strftime_now}, {@code is defined}, the
 * {@code -} markers), and the oracle renders the very same text.
 */
final class TemplateFixtures {
    static final String LLAMA_3_2_INSTRUCT = read("llama-3.2-instruct.jinja");
    static final String QWEN_2_5 = read("qwen-2.5.jinja");
    static final String LLAMA_2_CHAT = read("llama-2-chat.jinja");

    private TemplateFixtures() {
    }

    private static String read(String name) {
        try (InputStream in = TemplateFixtures.class.getResourceAsStream("/chat-templates/" + name)) {
            if (in == null) {
                throw new IllegalStateException("missing test resource chat-templates/" + name);
            }
            return new String(in.readAllBytes(), StandardCharsets.UTF_8);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }
}
