package dev.pagewarden.platform.models;

import com.fasterxml.jackson.databind.JsonNode;
import dev.pagewarden.core.model.DType;
import dev.pagewarden.core.model.ModelConfig;
import dev.pagewarden.core.model.write.ModelGenerator;
import dev.pagewarden.core.template.ChatTemplates;
import dev.pagewarden.core.tokenizer.HfTokenizer;
import dev.pagewarden.core.tokenizer.TextTokenizer;
import dev.pagewarden.core.tokenizer.TokenizerSpec;
import dev.pagewarden.oracle.LlamaCpp;
import dev.pagewarden.platform.testing.PlainHttp;
import org.junit.jupiter.api.AutoClose;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.net.http.HttpResponse;
import java.nio.file.Path;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Reasoning fields on the random-weight Qwen3 with the real Qwen3 tokenizer and template: {@code enable_thinking}
 * (from {@code chat_template_kwargs} or a reasoning effort) changes the rendered prompt exactly as
 * {@code @huggingface/jinja} renders it, and a think span in the output is {@code reasoning_content}, apart from
 * {@code content}. A {@code logit_bias} on the {@code <think>} token scripts an output that opens a span and never
 * closes it.
 */
class QwenReasoningTest {
    private static final String ADMIN = "qwen-reasoning-admin-token-0123456789";
    private static final String USER = "Hello! What is 2 + 2?";

    @TempDir
    static Path home;
    static Path gguf;
    static TextTokenizer tokenizer;
    static String template;
    @AutoClose
    static QwenServer server;
    static PlainHttp http;
    static String key;

    @BeforeAll
    static void serve() throws Exception {
        QwenChatServingTest.requireOracles();
        TokenizerSpec spec = HfTokenizer.load(QwenChatServingTest.QWEN3);
        tokenizer = spec.build();
        template = ChatTemplates.fromHfFolder(QwenChatServingTest.QWEN3).source();
        ModelConfig cfg = QwenChatServingTest.tinyQwen3(spec);
        gguf = home.resolve("qwen3-chat.gguf");
        ModelGenerator.generate(cfg, DType.F32, ModelGenerator.FileFormat.GGUF, 7, gguf, spec, template, size -> b -> { });
        server = QwenServer.start(home, ADMIN, gguf, "qwen-reasoning");
        http = server.http();
        key = server.key();
    }

    private static Map<String, Object> body(Object... fields) {
        Map<String, Object> body = new LinkedHashMap<>();
        body.put("model", "qwen3-chat");
        body.put("messages", List.of(Map.of("role", "user", "content", USER)));
        body.put("max_tokens", QwenChatServingTest.MAX_TOKENS);
        body.put("temperature", 0);
        for (int i = 0; i < fields.length; i += 2) {
            body.put((String) fields[i], fields[i + 1]);
        }
        return body;
    }

    private static HttpResponse<String> post(String path, Map<String, Object> body) throws Exception {
        return http.send(http.post(path, key, QwenChatServingTest.JSON.writeValueAsString(body)));
    }

    private static JsonNode ok(String path, Map<String, Object> body) throws Exception {
        HttpResponse<String> r = post(path, body);
        assertThat(r.statusCode()).as(r.body()).isEqualTo(200);
        return QwenChatServingTest.JSON.readTree(r.body());
    }

    /** The chunks of a streamed chat. */
    private static List<JsonNode> stream(Map<String, Object> body) throws Exception {
        body.put("stream", true);
        HttpResponse<String> r = post("/v1/chat/completions", body);
        assertThat(r.statusCode()).as(r.body()).isEqualTo(200);
        List<JsonNode> chunks = new java.util.ArrayList<>();
        for (String line : r.body().split("\n")) {
            if (line.startsWith("data: ") && !line.equals("data: [DONE]")) {
                chunks.add(QwenChatServingTest.JSON.readTree(line.substring(6)));
            }
        }
        return chunks;
    }

    private static int promptTokens(JsonNode chat) {
        return chat.path("usage").path("prompt_tokens").asInt();
    }

    @Test
    void enableThinkingFalseRendersTheTemplatesEmptyThinkSpanAsTheOracleDoes() throws Exception {
        int[] thinking = LlamaCpp.tokenize(gguf, QwenChatServingTest.oracleRendering(template, home, USER), true, false);
        String offText = QwenChatServingTest.oracleRendering(template, home, USER, Map.of("enable_thinking", false));
        assertThat(offText).endsWith("<|im_start|>assistant\n<think>\n\n</think>\n\n");
        int[] off = LlamaCpp.tokenize(gguf, offText, true, false);
        assertThat(off.length).isGreaterThan(thinking.length);

        assertThat(promptTokens(ok("/v1/chat/completions", body()))).isEqualTo(thinking.length);
        assertThat(promptTokens(ok("/v1/chat/completions", body("chat_template_kwargs",
                Map.of("enable_thinking", true))))).isEqualTo(thinking.length);
        assertThat(promptTokens(ok("/v1/chat/completions", body("chat_template_kwargs",
                Map.of("enable_thinking", false))))).isEqualTo(off.length);
        // an effort only switches thinking: none (and minimal) off, the others on
        assertThat(promptTokens(ok("/v1/chat/completions", body("reasoning_effort", "none")))).isEqualTo(off.length);
        assertThat(promptTokens(ok("/v1/chat/completions", body("reasoning_effort", "minimal")))).isEqualTo(off.length);
        assertThat(promptTokens(ok("/v1/chat/completions", body("reasoning_effort", "high")))).isEqualTo(thinking.length);
        // Responses: reasoning.effort is the same switch, and is echoed
        Map<String, Object> response = new LinkedHashMap<>(Map.of("model", "qwen3-chat", "input", USER,
                "max_output_tokens", 2, "temperature", 0, "reasoning", Map.of("effort", "none")));
        JsonNode r = ok("/v1/responses", response);
        assertThat(r.path("usage").path("input_tokens").asInt()).isEqualTo(off.length);
        assertThat(r.path("reasoning").path("effort").asText()).isEqualTo("none");
    }

    /** Greedy with a bias of +100 on {@code <think>}: the model opens a span and only ever repeats the tag. */
    @Test
    void aThinkSpanInTheOutputIsReasoningContentWholeAndStreamed() throws Exception {
        int think = tokenizer.id("<think>").orElseThrow();
        String reasoning = "<think>".repeat(QwenChatServingTest.MAX_TOKENS - 1);
        JsonNode plain = ok("/v1/chat/completions", body("logit_bias", Map.of(String.valueOf(think), 100)));
        JsonNode message = plain.path("choices").get(0).path("message");
        assertThat(message.path("reasoning_content").asText()).isEqualTo(reasoning);
        assertThat(message.path("content").asText()).isEmpty();
        assertThat(plain.path("choices").get(0).path("finish_reason").asText()).isEqualTo("length");

        StringBuilder streamedReasoning = new StringBuilder();
        StringBuilder streamedContent = new StringBuilder();
        for (JsonNode chunk : stream(body("logit_bias", Map.of(String.valueOf(think), 100)))) {
            for (JsonNode c : chunk.path("choices")) {
                streamedReasoning.append(c.path("delta").path("reasoning_content").asText(""));
                streamedContent.append(c.path("delta").path("content").asText(""));
            }
        }
        assertThat(streamedReasoning.toString()).isEqualTo(reasoning);
        assertThat(streamedContent.toString()).isEmpty();
    }

    /** An output without a think span has no reasoning field at all, and its content is the whole text. */
    @Test
    void anOutputWithoutAThinkSpanHasNoReasoningField() throws Exception {
        JsonNode off = ok("/v1/chat/completions", body("chat_template_kwargs", Map.of("enable_thinking", false)));
        JsonNode message = off.path("choices").get(0).path("message");
        assertThat(message.has("reasoning_content")).as(message.toString()).isFalse();
        assertThat(message.path("content").asText()).isNotEmpty();
    }

    @Test
    void badReasoningFieldsAreA400NamingThem() throws Exception {
        Object[][] cases = {
                {"chat_template_kwargs", body("chat_template_kwargs", "enable_thinking=false")},
                {"chat_template_kwargs", body("chat_template_kwargs", List.of())},
                {"chat_template_kwargs.enable_thinking", body("chat_template_kwargs", Map.of("enable_thinking", "no"))},
                {"chat_template_kwargs.messages", body("chat_template_kwargs", Map.of("messages", List.of()))},
                {"reasoning_effort", body("reasoning_effort", "extreme")},
                {"reasoning_effort", body("reasoning_effort", 3)},
                {"reasoning_effort", body("reasoning_effort", "none", "chat_template_kwargs",
                        Map.of("enable_thinking", true))},
        };
        for (Object[] c : cases) {
            @SuppressWarnings("unchecked")
            HttpResponse<String> r = post("/v1/chat/completions", (Map<String, Object>) c[1]);
            assertThat(r.statusCode()).as(r.body()).isEqualTo(400);
            assertThat(QwenChatServingTest.JSON.readTree(r.body()).path("error").path("param").asText())
                    .as(r.body()).isEqualTo(c[0]);
        }
        HttpResponse<String> r = post("/v1/responses", new LinkedHashMap<>(Map.of("model", "qwen3-chat",
                "input", USER, "reasoning", Map.of("effort", "extreme"))));
        assertThat(r.statusCode()).isEqualTo(400);
        assertThat(r.body()).contains("\"param\":\"reasoning.effort\"");
    }
}
