package dev.pagewarden.platform;

import com.networknt.schema.InputFormat;
import com.networknt.schema.SchemaRegistry;
import com.networknt.schema.SpecificationVersion;
import com.openai.client.OpenAIClient;
import com.openai.client.okhttp.OpenAIOkHttpClient;
import com.openai.core.JsonValue;
import com.openai.core.http.StreamResponse;
import com.openai.models.FunctionDefinition;
import com.openai.models.FunctionParameters;
import com.openai.models.ResponseFormatJsonSchema;
import com.openai.models.chat.completions.ChatCompletion;
import com.openai.models.chat.completions.ChatCompletionAssistantMessageParam;
import com.openai.models.chat.completions.ChatCompletionChunk;
import com.openai.models.chat.completions.ChatCompletionCreateParams;
import com.openai.models.chat.completions.ChatCompletionFunctionTool;
import com.openai.models.chat.completions.ChatCompletionMessageFunctionToolCall;
import com.openai.models.chat.completions.ChatCompletionMessageToolCall;
import com.openai.models.chat.completions.ChatCompletionNamedToolChoice;
import com.openai.models.chat.completions.ChatCompletionToolChoiceOption;
import com.openai.models.chat.completions.ChatCompletionToolMessageParam;
import dev.pagewarden.platform.testing.PlatformTest;
import org.junit.jupiter.api.Test;
import org.springframework.http.MediaType;
import org.springframework.test.web.reactive.server.WebTestClient;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Tool calling through {@code /v1/chat/completions} on the random-weight test model (its template cannot show tools,
 * so the JSON convention applies): a forced call always parses, names an offered function and carries arguments that
 * validate against its schema, whole and streamed, raw and through the OpenAI Java SDK; bad tool fields are 400s
 * naming them.
 */
class ToolCallingApiTest extends PlatformTest {
    static final String WEATHER = """
            {"type":"object","properties":{"city":{"type":"string","maxLength":6},"unit":{"enum":["c","f"]}},
             "required":["city"],"additionalProperties":false}""";
    static final String ADD = """
            {"type":"object","properties":{"a":{"type":"integer"}},"required":["a"],"additionalProperties":false}""";
    static final Map<String, String> SCHEMAS = Map.of("get_weather", WEATHER, "add", ADD);

    static List<Map<String, Object>> tools() {
        return List.of(tool("get_weather", "Weather", WEATHER), tool("add", "Sum", ADD));
    }

    private static Map<String, Object> tool(String name, String description, String schema) {
        return Map.of("type", "function", "function", Map.of("name", name, "description", description,
                "parameters", Json.parse(schema)));
    }

    static void assertValidCall(String name, String arguments) {
        assertThat(SCHEMAS).containsKey(name);
        assertThat(SchemaRegistry.withDefaultDialect(SpecificationVersion.DRAFT_2020_12).getSchema(SCHEMAS.get(name))
                .validate(arguments, InputFormat.JSON)).as(arguments).isEmpty();
    }

    private Map<String, Object> body(Object... kv) {
        Map<String, Object> body = new LinkedHashMap<>();
        body.put("model", MODEL);
        body.put("messages", List.of(Map.of("role", "user", "content", "Weather in Paris?")));
        body.put("max_tokens", 90);
        body.put("tools", tools());
        for (int i = 0; i < kv.length; i += 2) {
            body.put((String) kv[i], kv[i + 1]);
        }
        return body;
    }

    private WebTestClient.ResponseSpec post(String key, Map<String, Object> body) {
        return as(key).post().uri("/v1/chat/completions").contentType(MediaType.APPLICATION_JSON).bodyValue(body)
                .exchange();
    }

    @Test
    void aRequiredCallAlwaysParsesAndValidates() {
        String key = newTenant("tools-required")[1];
        Set<String> ids = new java.util.HashSet<>();
        for (int seed = 0; seed < 6; seed++) {
            Map<?, ?> r = post(key, body("tool_choice", "required", "temperature", 1.0, "seed", seed))
                    .expectStatus().isOk().expectBody(Map.class).returnResult().getResponseBody();
            Map<?, ?> choice = (Map<?, ?>) ((List<?>) r.get("choices")).getFirst();
            Map<?, ?> message = (Map<?, ?>) choice.get("message");
            assertThat(choice.get("finish_reason")).as(r.toString()).isEqualTo("tool_calls");
            assertThat(message.get("content")).isNull();
            List<?> calls = (List<?>) message.get("tool_calls");
            assertThat(calls).hasSize(1);
            Map<?, ?> call = (Map<?, ?>) calls.getFirst();
            assertThat((String) call.get("id")).matches("call_[A-Za-z0-9]{24}");
            ids.add((String) call.get("id"));
            assertThat(call.get("type")).isEqualTo("function");
            Map<?, ?> fn = (Map<?, ?>) call.get("function");
            assertValidCall((String) fn.get("name"), (String) fn.get("arguments"));
        }
        assertThat(ids).hasSize(6);
    }

    @Test
    void aNamedFunctionIsTheOneCalledAndAStreamCarriesItInOpenAisDeltas() {
        String key = newTenant("tools-named")[1];
        Map<String, Object> named = Map.of("type", "function", "function", Map.of("name", "add"));
        for (int seed = 0; seed < 3; seed++) {
            String raw = post(key, body("tool_choice", named, "temperature", 1.0, "seed", seed, "stream", true))
                    .expectStatus().isOk().expectBody(String.class).returnResult().getResponseBody();
            assertOpenAiEventStream(raw);
            String id = null;
            String name = null;
            StringBuilder arguments = new StringBuilder();
            String finish = null;
            for (String data : sseData(raw)) {
                if (data.equals("[DONE]")) {
                    continue;
                }
                Map<?, ?> choice = (Map<?, ?>) ((List<?>) Json.parse(data).get("choices")).getFirst();
                Map<?, ?> delta = (Map<?, ?>) choice.get("delta");
                if (choice.get("finish_reason") != null) {
                    finish = (String) choice.get("finish_reason");
                }
                assertThat(delta.get("content")).as("no text around a forced call: " + raw).isIn(null, "");
                if (delta.get("tool_calls") instanceof List<?> calls) {
                    Map<?, ?> call = (Map<?, ?>) calls.getFirst();
                    assertThat(call.get("index")).isEqualTo(0);
                    Map<?, ?> fn = (Map<?, ?>) call.get("function");
                    if (call.containsKey("id")) {
                        assertThat(id).as("one call").isNull();
                        id = (String) call.get("id");
                        assertThat(call.get("type")).isEqualTo("function");
                        name = (String) fn.get("name");
                        assertThat(fn.get("arguments")).isEqualTo("");
                    } else {
                        assertThat(id).as("arguments after the call's first delta").isNotNull();
                        arguments.append((String) fn.get("arguments"));
                    }
                }
            }
            assertThat(finish).isEqualTo("tool_calls");
            assertThat(id).startsWith("call_");
            assertThat(name).isEqualTo("add");
            assertValidCall(name, arguments.toString());
        }
    }

    /** With a response format on auto, the answer is either a valid call or valid JSON of the format. */
    @Test
    void autoWithAResponseFormatIsACallOrTheFormat() {
        String key = newTenant("tools-auto")[1];
        String format = "{\"type\":\"object\",\"properties\":{\"answer\":{\"type\":\"string\",\"maxLength\":6}},"
                + "\"required\":[\"answer\"],\"additionalProperties\":false}";
        int calls = 0;
        for (int seed = 0; seed < 8; seed++) {
            Map<?, ?> r = post(key, body("tool_choice", "auto", "temperature", 1.0, "seed", seed, "response_format",
                    Map.of("type", "json_schema", "json_schema", Map.of("name", "a", "schema", Json.parse(format)))))
                    .expectStatus().isOk().expectBody(Map.class).returnResult().getResponseBody();
            Map<?, ?> choice = (Map<?, ?>) ((List<?>) r.get("choices")).getFirst();
            Map<?, ?> message = (Map<?, ?>) choice.get("message");
            if (message.get("tool_calls") instanceof List<?> list) {
                calls++;
                assertThat(choice.get("finish_reason")).isEqualTo("tool_calls");
                Map<?, ?> fn = (Map<?, ?>) ((Map<?, ?>) list.getFirst()).get("function");
                assertValidCall((String) fn.get("name"), (String) fn.get("arguments"));
            } else {
                assertThat(choice.get("finish_reason")).isEqualTo("stop");
                assertThat(SchemaRegistry.withDefaultDialect(SpecificationVersion.DRAFT_2020_12).getSchema(format)
                        .validate((String) message.get("content"), InputFormat.JSON)).isEmpty();
            }
        }
        assertThat(calls).as("some answers are calls").isBetween(0, 8);
    }

    @Test
    void aConversationWithCallsAndResultsRunsWithAnyToolChoice() {
        String key = newTenant("tools-history")[1];
        List<Map<String, Object>> messages = new ArrayList<>();
        messages.add(Map.of("role", "user", "content", "Weather in Paris?"));
        Map<String, Object> assistant = new HashMap<>();
        assistant.put("role", "assistant");
        assistant.put("content", null);
        assistant.put("tool_calls", List.of(Map.of("id", "call_1", "type", "function", "function",
                Map.of("name", "get_weather", "arguments", "{\"city\":\"Paris\"}"))));
        messages.add(assistant);
        messages.add(Map.of("role", "tool", "tool_call_id", "call_1", "content", "18C and sunny"));
        for (String choice : List.of("none", "auto", "required")) {
            Map<?, ?> r = post(key, body("messages", messages, "tool_choice", choice, "max_tokens", 20,
                    "tools", List.of(tool("get_weather", "Weather", WEATHER)), "temperature", 0))
                    .expectStatus().isOk().expectBody(Map.class).returnResult().getResponseBody();
            Map<?, ?> c = (Map<?, ?>) ((List<?>) r.get("choices")).getFirst();
            if (choice.equals("none")) {
                assertThat(((Map<?, ?>) c.get("message")).containsKey("tool_calls")).isFalse();
            }
        }
        // tool turns without any tools offered still render (as the convention's text)
        Map<String, Object> plain = body("messages", messages, "max_tokens", 5);
        plain.remove("tools");
        post(key, plain).expectStatus().isOk();
    }

    @Test
    void badToolFieldsAreA400NamingThem() {
        String key = newTenant("tools-400")[1];
        Map<String, Object> toolMessage = Map.of("role", "tool", "content", "x");
        Object[][] cases = {
                {"tools", body("tools", Map.of("type", "function"))},
                {"tools[0].type", body("tools", List.of(Map.of("type", "code_interpreter")))},
                {"tools[0].function.name", body("tools", List.of(Map.of("type", "function", "function",
                        Map.of("name", "bad name"))))},
                {"tools[0].function.parameters", body("tools", List.of(Map.of("type", "function", "function",
                        Map.of("name", "f", "parameters", Map.of("type", "object", "properties",
                                Map.of("a", Map.of("type", "string", "pattern", "^x")))))))},
                {"tool_choice", body("tool_choice", Map.of("type", "function", "function", Map.of("name", "nope")))},
                {"tool_choice", body("tool_choice", "sometimes")},
                {"tool_choice", body("tools", List.of(), "tool_choice", "required")},
                {"messages[1].tool_call_id", body("messages", List.of(Map.of("role", "user", "content", "hi"),
                        toolMessage))},
                {"messages[0].tool_calls", body("messages", List.of(Map.of("role", "user", "content", "hi",
                        "tool_calls", List.of())))},
                {"messages[0].tool_calls[0].function.arguments", body("messages", List.of(Map.of("role",
                        "assistant", "tool_calls", List.of(Map.of("id", "c", "type", "function", "function",
                                Map.of("name", "f", "arguments", Map.of())))))),},
                {"parallel_tool_calls", body("parallel_tool_calls", "yes")},
                {"functions", body("functions", List.of())},
                {"function_call", body("function_call", "none")},
                {"response_format", body("tool_choice", "required", "response_format", Map.of("type", "json_object"))},
        };
        for (Object[] c : cases) {
            @SuppressWarnings("unchecked") Map<String, Object> b = (Map<String, Object>) c[1];
            post(key, b).expectStatus().isBadRequest().expectBody()
                    .jsonPath("$.error.type").isEqualTo("invalid_request_error")
                    .jsonPath("$.error.param").isEqualTo(c[0]);
        }
        post(key, body("tools", List.of(Map.of("type", "function", "function", Map.of("name", "f", "parameters",
                Map.of("type", "object", "properties", Map.of("a", Map.of("type", "string", "pattern", "^x"))))))))
                .expectBody().jsonPath("$.error.message")
                .isEqualTo("tools[0].function.parameters.properties.a: keyword 'pattern' is not supported");
    }

    private OpenAIClient sdk(String key) {
        return OpenAIOkHttpClient.builder().apiKey(key).baseUrl(baseUrl() + "/v1").maxRetries(0).build();
    }

    private static ChatCompletionFunctionTool sdkTool(String name, String schema) {
        FunctionParameters.Builder params = FunctionParameters.builder();
        Json.parse(schema).forEach((k, v) -> params.putAdditionalProperty((String) k, JsonValue.from(v)));
        return ChatCompletionFunctionTool.builder().function(FunctionDefinition.builder().name(name)
                .parameters(params.build()).build()).build();
    }

    @Test
    void theOpenAiJavaSdkReadsCallsWholeAndStreamedAndSendsThemBack() {
        OpenAIClient openai = sdk(newTenant("tools-sdk")[1]);
        ChatCompletionCreateParams params = ChatCompletionCreateParams.builder().model(MODEL)
                .addUserMessage("Weather in Paris?").maxCompletionTokens(90).temperature(1.0).seed(5)
                .addTool(sdkTool("get_weather", WEATHER)).addTool(sdkTool("add", ADD))
                .toolChoice(ChatCompletionToolChoiceOption.Auto.REQUIRED).build();
        ChatCompletion answer = openai.chat().completions().create(params);
        answer.validate();
        ChatCompletion.Choice choice = answer.choices().getFirst();
        assertThat(choice.finishReason()).isEqualTo(ChatCompletion.Choice.FinishReason.TOOL_CALLS);
        ChatCompletionMessageFunctionToolCall call = choice.message().toolCalls().orElseThrow().getFirst().asFunction();
        assertValidCall(call.function().name(), call.function().arguments());

        // streamed: the SDK's accumulator joins the deltas into the same shape
        com.openai.helpers.ChatCompletionAccumulator acc = com.openai.helpers.ChatCompletionAccumulator.create();
        try (StreamResponse<ChatCompletionChunk> stream = openai.chat().completions().createStreaming(params.toBuilder()
                .toolChoice(ChatCompletionNamedToolChoice.builder().function(ChatCompletionNamedToolChoice.Function
                        .builder().name("get_weather").build()).build()).build())) {
            stream.stream().forEach(acc::accumulate);
        }
        ChatCompletion joined = acc.chatCompletion();
        ChatCompletionMessageFunctionToolCall streamed = joined.choices().getFirst().message().toolCalls().orElseThrow()
                .getFirst().asFunction();
        assertThat(streamed.function().name()).isEqualTo("get_weather");
        assertValidCall("get_weather", streamed.function().arguments());
        assertThat(joined.choices().getFirst().finishReason()).isEqualTo(ChatCompletion.Choice.FinishReason.TOOL_CALLS);

        // the call and its result go back in the next turn; tool_choice auto answers in text or a call
        ChatCompletion next = openai.chat().completions().create(ChatCompletionCreateParams.builder().model(MODEL)
                .addUserMessage("Weather in Paris?").addTool(sdkTool("get_weather", WEATHER)).addTool(sdkTool("add", ADD))
                .addMessage(ChatCompletionAssistantMessageParam.builder().addToolCall(ChatCompletionMessageToolCall
                        .ofFunction(call)).build())
                .addMessage(ChatCompletionToolMessageParam.builder().toolCallId(call.id()).content("18C").build())
                .toolChoice(ChatCompletionToolChoiceOption.Auto.AUTO).maxCompletionTokens(10).build());
        next.validate();
        ChatCompletion.Choice after = next.choices().getFirst();
        after.message().toolCalls().ifPresent(calls -> calls.forEach(c ->
                assertValidCall(c.asFunction().function().name(), c.asFunction().function().arguments())));
        assertThat(after.message().content().isPresent() || after.message().toolCalls().isPresent()).isTrue();
    }
}
