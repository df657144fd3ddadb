package dev.pagewarden.platform.models;

import com.fasterxml.jackson.databind.DeserializationFeature;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.networknt.schema.InputFormat;
import com.networknt.schema.Schema;
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
import org.junit.jupiter.api.AutoClose;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.net.http.HttpResponse;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Structured outputs over the real Qwen3 vocabulary (151k tokens, multi-byte and multi-character pieces), end to
 * end: a random-weight Qwen3 with the real tokenizer and template answers many sampled chat requests over ten
 * schemas, and every answer parses and validates with a maintained JSON Schema validator. Every schema's longest
 * answer is under {@link #MAX_TOKENS} bytes (each string bounded; numbers at most 36 bytes), and a token is at
 * least one byte, so no answer is cut by max_tokens: each ends with finish_reason "stop".
 *
 * <p>{@code -Dpagewarden.structured.requests=200} runs 200 requests (20 per schema) instead of the 40 here.
 */
class QwenStructuredOutputTest {
    private static final String ADMIN = "qwen-structured-admin-token-0123456789";
    private static final ObjectMapper STRICT = new ObjectMapper().enable(DeserializationFeature.FAIL_ON_TRAILING_TOKENS);
    private static final int MAX_TOKENS = 300;
    private static final int REQUESTS = Integer.getInteger("pagewarden.structured.requests", 40);
    private static final int CONCURRENT = 8;
    static final List<String> SCHEMAS = List.of(
            // a nested object with an enum and an integer
            """
            {"type":"object","properties":{"name":{"type":"string","minLength":1,"maxLength":8},
             "pet":{"type":"object","properties":{"kind":{"enum":["cat","dog","owl"]},"age":{"type":"integer"}},
             "required":["kind","age"],"additionalProperties":false}},"required":["name","pet"],
             "additionalProperties":false}""",
            // const and enum
            """
            {"type":"object","properties":{"v":{"const":"x1"},"color":{"enum":["red","green",3,null]}},
             "required":["v","color"]}""",
            // an array between min and max items
            """
            {"type":"object","properties":{"tags":{"type":"array","minItems":1,"maxItems":3,
             "items":{"type":"string","minLength":1,"maxLength":4}}},"required":["tags"]}""",
            // anyOf
            """
            {"type":"object","properties":{"v":{"anyOf":[{"type":"number"},{"type":"string","maxLength":3},
             {"type":"null"}]}},"required":["v"]}""",
            // numbers
            """
            {"type":"object","properties":{"x":{"type":"number"},"y":{"type":"integer"}},"required":["x","y"]}""",
            // strings with length bounds
            """
            {"type":"object","properties":{"code":{"type":"string","minLength":2,"maxLength":5},
             "note":{"type":"string","maxLength":10}},"required":["code","note"]}""",
            // a boolean and an optional property
            """
            {"type":"object","properties":{"ok":{"type":"boolean"},"opt":{"type":"string","maxLength":3}},
             "required":["ok"]}""",
            // an array of objects
            """
            {"type":"object","properties":{"items":{"type":"array","maxItems":2,"items":{"type":"object",
             "properties":{"id":{"type":"integer"},"tag":{"enum":["a","b"]}},"required":["id","tag"]}}},
             "required":["items"]}""",
            // nested arrays
            """
            {"type":"object","properties":{"m":{"type":"array","minItems":1,"maxItems":2,"items":{"type":"array",
             "maxItems":2,"items":{"type":"integer"}}}},"required":["m"]}""",
            // type lists
            """
            {"type":"object","properties":{"t":{"type":["string","null"],"maxLength":4},
             "n":{"type":["integer","boolean"]}},"required":["t","n"]}""");

    @TempDir
    static Path home;
    @AutoClose
    static QwenServer server;
    static PlainHttp http;
    static String key;

    @BeforeAll
    static void serve() throws Exception {
        QwenChatServingTest.requireOracles();
        TokenizerSpec spec = HfTokenizer.load(QwenChatServingTest.QWEN3);
        // the small Qwen3 shape with a window of 512: a prompt and the longest answer fit
        ModelConfig cfg = ModelShape.parse("dim=64,hidden=128,layers=2,heads=4,kv_heads=2,vocab=512,seq=512,shared=false")
                .forArchitecture("qwen3", null).config().withVocabSize(spec.pieces().size());
        Path gguf = home.resolve("qwen3-chat.gguf");
        ModelGenerator.generate(cfg, DType.F32, ModelGenerator.FileFormat.GGUF, 7, gguf, spec,
                ChatTemplates.fromHfFolder(QwenChatServingTest.QWEN3).source(), size -> b -> { });
        server = QwenServer.start(home, ADMIN, gguf, "qwen-structured");
        http = server.http();
        key = server.key();
    }

    private static CompletableFuture<HttpResponse<String>> ask(int i) throws Exception {
        Map<String, Object> body = new LinkedHashMap<>();
        body.put("model", "qwen3-chat");
        body.put("messages", List.of(Map.of("role", "user", "content", "Answer in JSON, request " + i + ".")));
        body.put("max_tokens", MAX_TOKENS);
        body.put("temperature", 1);
        body.put("seed", i);
        body.put("response_format", Map.of("type", "json_schema", "json_schema", Map.of("name", "s" + (i % SCHEMAS.size()),
                "schema", STRICT.readTree(SCHEMAS.get(i % SCHEMAS.size())))));
        return http.sendAsync(http.post("/v1/chat/completions", key, STRICT.writeValueAsString(body)));
    }

    @Test
    void everySampledAnswerOverTenSchemasParsesAndValidates() throws Exception {
        SchemaRegistry registry = SchemaRegistry.withDefaultDialect(SpecificationVersion.DRAFT_2020_12);
        List<Schema> schemas = SCHEMAS.stream().map(registry::getSchema).toList();
        List<String> answers = new ArrayList<>();
        for (int from = 0; from < REQUESTS; from += CONCURRENT) {
            List<CompletableFuture<HttpResponse<String>>> batch = new ArrayList<>();
            for (int i = from; i < Math.min(REQUESTS, from + CONCURRENT); i++) {
                batch.add(ask(i));
            }
            for (int j = 0; j < batch.size(); j++) {
                int i = from + j;
                HttpResponse<String> r = batch.get(j).join();
                assertThat(r.statusCode()).as(r.body()).isEqualTo(200);
                JsonNode choice = STRICT.readTree(r.body()).path("choices").get(0);
                String content = choice.path("message").path("content").asText();
                assertThat(choice.path("finish_reason").asText()).as("request %d: %s", i, content).isEqualTo("stop");
                assertThat(STRICT.readTree(content).isObject()).as(content).isTrue();
                assertThat(schemas.get(i % SCHEMAS.size()).validate(content, InputFormat.JSON))
                        .as("request %d under schema %d: %s", i, i % SCHEMAS.size(), content).isEmpty();
                answers.add(content);
            }
        }
        // sampling over a random model: the answers differ, so the walks cover many grammar states
        assertThat(answers.stream().distinct().count()).isGreaterThan(REQUESTS / 2);
    }
}
