package dev.pagewarden.platform;

import com.networknt.schema.InputFormat;
import com.networknt.schema.SchemaRegistry;
import com.networknt.schema.SpecificationVersion;
import com.openai.client.OpenAIClient;
import com.openai.client.okhttp.OpenAIOkHttpClient;
import com.openai.core.JsonValue;
import com.openai.models.responses.FunctionTool;
import com.openai.models.responses.Response;
import com.openai.models.responses.ResponseCreateParams;
import com.openai.models.responses.ResponseFunctionToolCall;
import com.openai.models.responses.ToolChoiceOptions;
import dev.pagewarden.platform.testing.PlatformTest;
import org.junit.jupiter.api.Test;
import org.springframework.http.MediaType;
import org.springframework.test.web.reactive.server.WebTestClient;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Function tools and structured output through {@code POST /v1/responses}: a forced call is a {@code function_call}
 * output item whose arguments validate, streamed as OpenAI's typed events; earlier calls and their outputs go back
 * as input items; {@code text.format} json_schema gives text that validates.
 */
class ResponsesToolsApiTest extends PlatformTest {

    private static Map<String, Object> request(Object... extra) {
        Map<String, Object> r = new HashMap<>(Map.of("model", MODEL, "input", "Weather in Paris?",
                "max_output_tokens", 90, "temperature", 1.0, "store", false));
        r.put("tools", List.of(Map.of("type", "function", "name", "get_weather", "description", "Weather",
                "parameters", Json.parse(ToolCallingApiTest.WEATHER), "strict", true), Map.of("type", "function",
                "name", "add", "parameters", Json.parse(ToolCallingApiTest.ADD))));
        for (int i = 0; i < extra.length; i += 2) {
            r.put((String) extra[i], extra[i + 1]);
        }
        return r;
    }

    private WebTestClient.ResponseSpec post(String key, Object body) {
        return as(key).post().uri("/v1/responses").contentType(MediaType.APPLICATION_JSON).bodyValue(body).exchange();
    }

    @Test
    void aRequiredCallIsAFunctionCallItem() {
        String key = newTenant("responses-tools")[1];
        Map<?, ?> r = post(key, request("tool_choice", "required")).expectStatus().isOk().expectBody(Map.class)
                .returnResult().getResponseBody();
        assertThat(r.get("status")).isEqualTo("completed");
        assertThat(r.get("tool_choice")).isEqualTo("required");
        assertThat((List<?>) r.get("tools")).hasSize(2);
        List<?> output = (List<?>) r.get("output");
        assertThat(output).hasSize(1);
        Map<?, ?> item = (Map<?, ?>) output.getFirst();
        assertThat(item.get("type")).isEqualTo("function_call");
        assertThat((String) item.get("call_id")).startsWith("call_");
        assertThat((String) item.get("id")).startsWith("fc_");
        ToolCallingApiTest.assertValidCall((String) item.get("name"), (String) item.get("arguments"));
    }

    @Test
    void aStreamedCallComesAsTypedEvents() {
        String key = newTenant("responses-tools-stream")[1];
        String raw = post(key, request("tool_choice", Map.of("type", "function", "name", "add"), "stream", true))
                .expectStatus().isOk().expectBody(String.class).returnResult().getResponseBody();
        List<String> types = new ArrayList<>();
        StringBuilder args = new StringBuilder();
        String done = null;
        Map<?, ?> last = null;
        for (String data : sseData(raw)) {
            Map<?, ?> event = Json.parse(data);
            types.add((String) event.get("type"));
            switch ((String) event.get("type")) {
                case "response.output_item.added" -> {
                    Map<?, ?> item = (Map<?, ?>) event.get("item");
                    assertThat(item.get("type")).isEqualTo("function_call");
                    assertThat(item.get("name")).isEqualTo("add");
                    assertThat(item.get("arguments")).isEqualTo("");
                }
                case "response.function_call_arguments.delta" -> args.append((String) event.get("delta"));
                case "response.function_call_arguments.done" -> done = (String) event.get("arguments");
                case "response.completed" -> last = (Map<?, ?>) event.get("response");
                default -> { }
            }
        }
        assertThat(types.getFirst()).isEqualTo("response.created");
        assertThat(types).containsSubsequence("response.output_item.added", "response.function_call_arguments.delta",
                "response.function_call_arguments.done", "response.output_item.done", "response.completed");
        assertThat(done).isEqualTo(args.toString());
        ToolCallingApiTest.assertValidCall("add", done);
        Map<?, ?> item = (Map<?, ?>) ((List<?>) last.get("output")).getFirst();
        assertThat(item.get("arguments")).isEqualTo(done);
    }

    @Test
    void callsAndOutputsGoBackAsInputItemsAndTextFormatIsFollowed() {
        String key = newTenant("responses-tools-input")[1];
        List<Object> input = List.of(Map.of("role", "user", "content", "Weather?"),
                Map.of("type", "function_call", "call_id", "call_1", "name", "get_weather", "arguments",
                        "{\"city\":\"Paris\"}"),
                Map.of("type", "function_call_output", "call_id", "call_1", "output", "18C"));
        post(key, request("input", input, "tool_choice", "auto", "max_output_tokens", 10)).expectStatus().isOk();
        String schema = "{\"type\":\"object\",\"properties\":{\"answer\":{\"type\":\"string\",\"maxLength\":6}},"
                + "\"required\":[\"answer\"],\"additionalProperties\":false}";
        Map<String, Object> format = Map.of("type", "json_schema", "name", "a", "schema", Json.parse(schema),
                "strict", true);
        Map<String, Object> plain = request("text", Map.of("format", format));
        plain.remove("tools");
        Map<?, ?> r = post(key, plain).expectStatus().isOk().expectBody(Map.class).returnResult().getResponseBody();
        Map<?, ?> message = (Map<?, ?>) ((List<?>) r.get("output")).getFirst();
        String text = (String) ((Map<?, ?>) ((List<?>) message.get("content")).getFirst()).get("text");
        assertThat(SchemaRegistry.withDefaultDialect(SpecificationVersion.DRAFT_2020_12).getSchema(schema)
                .validate(text, InputFormat.JSON)).as(text).isEmpty();
        Map<?, ?> echoed = (Map<?, ?>) ((Map<?, ?>) r.get("text")).get("format");
        assertThat(echoed.get("type")).isEqualTo("json_schema");
        assertThat(echoed.get("name")).isEqualTo("a");
        post(key, request("tool_choice", "required", "text", Map.of("format", format))).expectStatus().isBadRequest()
                .expectBody().jsonPath("$.error.param").isEqualTo("text.format");
        post(key, request("tool_choice", Map.of("type", "function", "name", "nope"))).expectStatus().isBadRequest()
                .expectBody().jsonPath("$.error.param").isEqualTo("tool_choice");
    }

    @Test
    void theOpenAiJavaSdkReadsTheFunctionCall() {
        OpenAIClient openai = OpenAIOkHttpClient.builder().apiKey(newTenant("responses-tools-sdk")[1])
                .baseUrl(baseUrl() + "/v1").maxRetries(0).build();
        FunctionTool.Parameters.Builder params = FunctionTool.Parameters.builder();
        Json.parse(ToolCallingApiTest.WEATHER).forEach((k, v) -> params.putAdditionalProperty((String) k, JsonValue.from(v)));
        Response response = openai.responses().create(ResponseCreateParams.builder().model(MODEL)
                .input("Weather in Paris?").maxOutputTokens(90).temperature(1.0).store(false)
                .addTool(FunctionTool.builder().name("get_weather").parameters(params.build()).strict(true).build())
                .toolChoice(ToolChoiceOptions.REQUIRED).build());
        response.validate();
        ResponseFunctionToolCall call = response.output().getFirst().asFunctionCall();
        assertThat(call.name()).isEqualTo("get_weather");
        ToolCallingApiTest.assertValidCall("get_weather", call.arguments());
    }
}
