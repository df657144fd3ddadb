package dev.pagewarden.platform.completion;

import java.util.LinkedHashMap;
import java.util.Map;

/**
 * A chat answer's reasoning as vLLM and DeepSeek send it: {@code reasoning_content} beside {@code content}, in the
 * message and in a stream's deltas, present only when the model produced reasoning (so a model whose template does
 * not think never shows the field).
 */
final class ReasoningContent {
    private ReasoningContent() {
    }

    /** Adds a whole answer's reasoning to its message, when it has some. */
    static void addTo(Map<String, Object> message, String reasoning) {
        if (!reasoning.isEmpty()) {
            message.put("reasoning_content", reasoning);
        }
    }

    /** A stream chunk's delta: the new answer text, and the new reasoning when there is some. */
    static Map<String, Object> delta(String content, String reasoning) {
        if (reasoning.isEmpty()) {
            return Map.of("content", content);
        }
        Map<String, Object> m = new LinkedHashMap<>();
        m.put("reasoning_content", reasoning);
        if (!content.isEmpty()) {
            m.put("content", content);
        }
        return m;
    }
}
