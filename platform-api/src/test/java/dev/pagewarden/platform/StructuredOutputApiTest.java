package dev.pagewarden.platform;

import com.networknt.schema.InputFormat;
import com.networknt.schema.SchemaRegistry;
import com.networknt.schema.SpecificationVersion;
import com.openai.client.OpenAIClient;
import com.openai.client.okhttp.OpenAIOkHttpClient;
import com.openai.core.JsonValue;
import com.openai.models.ResponseFormatJsonSchema;
import com.openai.models.chat.completions.ChatCompletion;
import com.openai.models.chat.completions.ChatCompletionCreateParams;
import dev.pagewarden.platform.testing.PlatformTest;
import org.junit.jupiter.api.Test;
import org.springframework.http.MediaType;

import java.util.List;
import java.util.Map;

import static org.assertj.core.api.Assertions.assertThat;

/** response_format through the API: the answer's content parses and validates, and what the grammar cannot take is a 400. */
class StructuredOutputApiTest extends PlatformTest {
    private static final String SCHEMA = """
            {"type":"object","properties":{"name":{"type":"string","minLength":1,"maxLength":6},
             "kind":{"enum":["dog","cat"]},"legs":{"type":"integer"},
             "toys":{"type":"array","minItems":1,"maxItems":2,"items":{"type":"string","maxLength":4}},
             "owner":{"anyOf":[{"type":"null"},{"type":"object","properties":{"age":{"type":"number"}},
             "required":["age"],"additionalProperties":false}]}},
             "required":["name","kind","legs","toys","owner"],"additionalProperties":false}""";

    @Test
    void aJsonSchemaAnswerParsesAndValidatesThroughTheOpenAiSdk() {
        OpenAIClient openai = OpenAIOkHttpClient.builder().apiKey(newTenant("schema")[1]).baseUrl(baseUrl() + "/v1")
                .maxRetries(0).build();
        ResponseFormatJsonSchema.JsonSchema.Schema.Builder schema = ResponseFormatJsonSchema.JsonSchema.Schema.builder();
        Json.parse(SCHEMA).forEach((k, v) -> schema.putAdditionalProperty((String) k, JsonValue.from(v)));
        for (double temperature : new double[]{0.0, 1.0}) {
            ChatCompletion answer = openai.chat().completions().create(ChatCompletionCreateParams.builder().model(MODEL)
                    .addUserMessage("Describe a pet.").maxCompletionTokens(300).temperature(temperature).seed(3)
                    .responseFormat(ResponseFormatJsonSchema.builder().jsonSchema(ResponseFormatJsonSchema.JsonSchema
                            .builder().name("pet").schema(schema.build()).strict(true).build()).build())
                    .build());
            answer.validate();
            ChatCompletion.Choice choice = answer.choices().getFirst();
            String content = choice.message().content().orElseThrow();
            assertThat(choice.finishReason().asString()).as(content).isEqualTo("stop");
            assertThat(Json.parse(content).keySet().stream().map(String::valueOf).toList()).as(content).containsExactly("name", "kind", "legs", "toys", "owner");
            assertThat(SchemaRegistry.withDefaultDialect(SpecificationVersion.DRAFT_2020_12).getSchema(SCHEMA)
                    .validate(content, InputFormat.JSON)).as(content).isEmpty();
        }
    }

    @Test
    void jsonObjectGivesAnObjectAndWantsTheWordJsonInTheMessages() {
        String key = newTenant("object")[1];
        Map<String, Object> format = Map.of("type", "json_object");
        Map<?, ?> body = as(key).post().uri("/v1/chat/completions").contentType(MediaType.APPLICATION_JSON)
                .bodyValue(Map.of("model", MODEL, "messages", List.of(Map.of("role", "user", "content",
                        "Answer in JSON.")), "max_tokens", 40, "temperature", 0, "response_format", format))
                .exchange().expectStatus().isOk().expectBody(Map.class).returnResult().getResponseBody();
        Map<?, ?> choice = (Map<?, ?>) ((List<?>) body.get("choices")).getFirst();
        String content = (String) ((Map<?, ?>) choice.get("message")).get("content");
        assertThat(content).startsWith("{");
        if ("stop".equals(choice.get("finish_reason"))) {
            assertThat(Json.parse(content)).isNotNull();
        } else {
            assertThat(choice.get("finish_reason")).isEqualTo("length");
        }
        as(key).post().uri("/v1/chat/completions").contentType(MediaType.APPLICATION_JSON)
                .bodyValue(Map.of("model", MODEL, "messages", List.of(Map.of("role", "user", "content", "Hi.")),
                        "response_format", format))
                .exchange().expectStatus().isBadRequest().expectBody()
                .jsonPath("$.error.type").isEqualTo("invalid_request_error")
                .jsonPath("$.error.param").isEqualTo("messages");
    }

    @Test
    void anUnsupportedKeywordIsA400NamingIt() {
        String key = newTenant("keyword")[1];
        Map<String, Object> schema = Map.of("type", "object", "properties", Map.of("a", Map.of("type", "string")),
                "patternProperties", Map.of());
        as(key).post().uri("/v1/chat/completions").contentType(MediaType.APPLICATION_JSON)
                .bodyValue(Map.of("model", MODEL, "messages", List.of(Map.of("role", "user", "content", "Hi.")),
                        "response_format", Map.of("type", "json_schema", "json_schema",
                                Map.of("name", "x", "schema", schema))))
                .exchange().expectStatus().isBadRequest().expectBody()
                .jsonPath("$.error.type").isEqualTo("invalid_request_error")
                .jsonPath("$.error.param").isEqualTo("response_format")
                .jsonPath("$.error.message")
                .isEqualTo("response_format.json_schema.schema: keyword 'patternProperties' is not supported");
        Map<String, Object> nested = Map.of("type", "object", "properties",
                Map.of("a", Map.of("type", "string", "pattern", "^x")));
        as(key).post().uri("/v1/chat/completions").contentType(MediaType.APPLICATION_JSON)
                .bodyValue(Map.of("model", MODEL, "messages", List.of(Map.of("role", "user", "content", "Hi.")),
                        "response_format", Map.of("type", "json_schema", "json_schema",
                                Map.of("name", "x", "schema", nested))))
                .exchange().expectStatus().isBadRequest().expectBody()
                .jsonPath("$.error.param").isEqualTo("response_format")
                .jsonPath("$.error.message")
                .isEqualTo("response_format.json_schema.schema.properties.a: keyword 'pattern' is not supported");
    }
}
