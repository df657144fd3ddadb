package dev.pagewarden.platform;

import com.networknt.schema.InputFormat;
import com.networknt.schema.SchemaRegistry;
import com.networknt.schema.SpecificationVersion;
import com.openai.client.OpenAIClient;
import com.openai.client.okhttp.OpenAIOkHttpClient;
import com.openai.core.http.StreamResponse;
import com.openai.errors.BadRequestException;
import com.openai.errors.NotFoundException;
import com.openai.models.chat.completions.ChatCompletion;
import com.openai.models.chat.completions.ChatCompletionChunk;
import com.openai.models.chat.completions.ChatCompletionCreateParams;
import com.openai.models.completions.Completion;
import com.openai.models.completions.CompletionCreateParams;
import com.openai.models.responses.Response;
import com.openai.models.responses.ResponseCreateParams;
import com.openai.models.responses.ResponseStatus;
import com.openai.models.responses.ResponseStreamEvent;
import dev.pagewarden.platform.testing.IsolatedReference;
import dev.pagewarden.platform.testing.PlatformTest;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.Test;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.json.JsonMapper;

import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * The official OpenAI SDKs, unmodified, against the platform: the proof that existing clients work. The Java SDK is a
 * test dependency; the Node SDK is pinned in src/test/openai-node ({@code npm ci} there installs it; without it that
 * test is skipped, except under CI=true, where that fails it).
 */
class OpenAiSdkCompatibilityTest extends PlatformTest {

    private OpenAIClient sdk(String key) {
        return OpenAIOkHttpClient.builder().apiKey(key).baseUrl(baseUrl() + "/v1").maxRetries(0).build();
    }

    @Test
    void completionsAndChatStreamedAndNot() throws Exception {
        OpenAIClient openai = sdk(newTenant("sdk-user")[1]);
        String expected = IsolatedReference.complete("Once upon a time", 30);

        Completion completion = openai.completions().create(CompletionCreateParams.builder()
                .model(MODEL).prompt("Once upon a time").maxTokens(30).temperature(0.0).build());
        assertThat(completion.choices().getFirst().text()).isEqualTo(expected);
        assertThat(completion.usage().orElseThrow().completionTokens()).isEqualTo(30);
        assertThat(completion._additionalProperties().get("pagewarden_receipt").toString()).contains("pwr1.");

        ChatCompletionCreateParams chat = ChatCompletionCreateParams.builder().model(MODEL)
                .addUserMessage("Tell me about a cat.").maxCompletionTokens(20).temperature(0.0).build();
        String chatExpected = IsolatedReference.complete("user: Tell me about a cat.\nassistant:", 20);
        ChatCompletion answer = openai.chat().completions().create(chat);
        assertThat(answer.choices().getFirst().message().content()).contains(chatExpected);

        StringBuilder streamed = new StringBuilder();
        try (StreamResponse<ChatCompletionChunk> stream = openai.chat().completions().createStreaming(chat)) {
            stream.stream().forEach(chunk -> chunk.choices().forEach(c -> c.delta().content().ifPresent(streamed::append)));
        }
        assertThat(streamed.toString()).isEqualTo(chatExpected);

        StringBuilder streamedText = new StringBuilder();
        try (StreamResponse<Completion> stream = openai.completions().createStreaming(CompletionCreateParams.builder()
                .model(MODEL).prompt("Once upon a time").maxTokens(30).temperature(0.0).build())) {
            stream.stream().forEach(chunk -> chunk.choices().forEach(c -> streamedText.append(c.text())));
        }
        assertThat(streamedText.toString()).isEqualTo(expected);

        assertThatThrownBy(() -> openai.completions().create(CompletionCreateParams.builder()
                .model("gpt-99").prompt("hi").build()))
                .isInstanceOf(NotFoundException.class).hasMessageContaining("gpt-99");
    }

    private static final String CAT = "system: You tell stories.\nuser: Tell me about a cat.\nassistant:";

    @Test
    void responsesStreamedAndNot() throws Exception {
        OpenAIClient openai = sdk(newTenant("sdk-responses")[1]);
        String expected = IsolatedReference.complete(CAT, 20);
        ResponseCreateParams params = ResponseCreateParams.builder().model(MODEL).instructions("You tell stories.")
                .input("Tell me about a cat.").maxOutputTokens(20).temperature(0.0).store(false).build();

        Response response = openai.responses().create(params);
        response.validate();
        assertThat(response.id()).startsWith("resp_");
        assertThat(response.status()).contains(ResponseStatus.INCOMPLETE);
        assertThat(response.output().getFirst().asMessage().content().getFirst().asOutputText().text()).isEqualTo(expected);
        assertThat(response.usage().orElseThrow().outputTokens()).isEqualTo(20);
        assertThat(response._additionalProperties().get("pagewarden_receipt").toString()).contains("pwr1.");

        StringBuilder streamed = new StringBuilder();
        List<Long> sequence = new ArrayList<>();
        Response[] last = new Response[1];
        try (StreamResponse<ResponseStreamEvent> stream = openai.responses().createStreaming(params)) {
            stream.stream().forEach(e -> {
                e.outputTextDelta().ifPresent(d -> {
                    streamed.append(d.delta());
                    sequence.add(d.sequenceNumber());
                });
                e.incomplete().ifPresent(i -> last[0] = i.response());
            });
        }
        assertThat(streamed.toString()).isEqualTo(expected);
        assertThat(sequence).isSorted().doesNotHaveDuplicates();
        assertThat(last[0].output().getFirst().asMessage().content().getFirst().asOutputText().text()).isEqualTo(expected);

        assertThatThrownBy(() -> openai.responses().create(params.toBuilder().store(true).build()))
                .isInstanceOfSatisfying(BadRequestException.class, e -> assertThat(e.param()).contains("store"));
    }

    /** Runs one script of src/test/openai-node as a new tenant and reads the JSON object it prints last. */
    private JsonNode nodeSdk(String script, String tenant) throws Exception {
        Path dir = Path.of("src", "test", "openai-node").toAbsolutePath();
        if (!Files.isDirectory(dir.resolve("node_modules").resolve("openai"))) {
            String why = "the OpenAI Node SDK is not installed (run: cd platform-api/src/test/openai-node && npm ci)";
            if ("true".equals(System.getenv("CI"))) {
                throw new AssertionError(why);
            }
            Assumptions.abort(why);
        }
        Process node = new ProcessBuilder("node", script, baseUrl() + "/v1", newTenant(tenant)[1], MODEL)
                .directory(dir.toFile()).redirectErrorStream(true).start();
        String out = new String(node.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        assertThat(node.waitFor(120, TimeUnit.SECONDS)).isTrue();
        assertThat(node.exitValue()).as(out).isZero();
        return JsonMapper.builder().build().readTree(out.strip().lines().reduce((a, b) -> b).orElseThrow());
    }

    @Test
    void responsesThroughTheNodeSdk() throws Exception {
        String expected = IsolatedReference.complete(CAT, 20);
        JsonNode seen = nodeSdk("responses.mjs", "node-sdk");

        assertThat(seen.path("id").asString()).startsWith("resp_");
        assertThat(seen.path("status").asString()).isEqualTo("incomplete");
        assertThat(seen.path("output_text").asString()).as("the SDK's output_text").isEqualTo(expected);
        assertThat(seen.path("usage").path("output_tokens").asInt()).isEqualTo(20);
        assertThat(seen.path("receipt").asString()).startsWith("pwr1.");

        List<String> types = new ArrayList<>();
        seen.path("types").forEach(t -> types.add(t.asString()));
        assertThat(types.subList(0, 4)).containsExactly("response.created", "response.in_progress",
                "response.output_item.added", "response.content_part.added");
        assertThat(types.subList(4, types.size() - 4)).isNotEmpty().containsOnly("response.output_text.delta");
        assertThat(types.subList(types.size() - 4, types.size())).containsExactly("response.output_text.done",
                "response.content_part.done", "response.output_item.done", "response.incomplete");
        for (int i = 0; i < types.size(); i++) {
            assertThat(seen.path("sequence").get(i).asInt()).isEqualTo(i);
        }
        assertThat(seen.path("streamed").asString()).isEqualTo(expected);
        assertThat(seen.path("final_status").asString()).isEqualTo("incomplete");
        assertThat(seen.path("final_receipt").asString()).startsWith("pwr1.");
        assertThat(seen.path("refused").path("status").asInt()).isEqualTo(400);
        assertThat(seen.path("refused").path("param").asString()).isEqualTo("store");

        String weather = "{\"type\":\"object\",\"properties\":{\"city\":{\"type\":\"string\",\"maxLength\":6}},"
                + "\"required\":[\"city\"],\"additionalProperties\":false}";
        JsonNode chatCall = seen.path("chat_call");
        assertThat(chatCall.path("finish_reason").asString()).as(seen.toString()).isEqualTo("tool_calls");
        assertThat(chatCall.path("id").asString()).startsWith("call_");
        assertThat(chatCall.path("name").asString()).isEqualTo("get_weather");
        assertThat(SchemaRegistry.withDefaultDialect(SpecificationVersion.DRAFT_2020_12).getSchema(weather)
                .validate(chatCall.path("arguments").asString(), InputFormat.JSON)).isEmpty();
        JsonNode responseCall = seen.path("response_call");
        assertThat(responseCall.path("call_id").asString()).as(seen.toString()).startsWith("call_");
        assertThat(responseCall.path("name").asString()).isEqualTo("get_weather");
        assertThat(SchemaRegistry.withDefaultDialect(SpecificationVersion.DRAFT_2020_12).getSchema(weather)
                .validate(responseCall.path("arguments").asString(), InputFormat.JSON)).isEmpty();
    }

    /**
     * The Node SDK's own structured-output helper (zodResponseFormat: nested objects, an enum, bounded integers, the
     * answer parsed by chat.completions.parse), log probabilities, and n choices with a seed.
     */
    @Test
    void chatExtrasThroughTheNodeSdk() throws Exception {
        JsonNode seen = nodeSdk("chat.mjs", "node-sdk-chat");

        assertThat(seen.path("finish_reason").asString()).isEqualTo("stop");
        String content = seen.path("content").asString();
        String schema = seen.path("schema").toString();
        assertThat(SchemaRegistry.withDefaultDialect(SpecificationVersion.DRAFT_7).getSchema(schema)
                .validate(content, InputFormat.JSON)).as(content).isEmpty();
        assertThat(seen.path("parsed")).as("the SDK parsed the answer itself")
                .isEqualTo(JsonMapper.builder().build().readTree(content));

        String expected = IsolatedReference.complete("user: Tell me about a cat.\nassistant:", 8);
        JsonNode tokens = seen.path("logprobs");
        assertThat(tokens.size()).isEqualTo(8);
        StringBuilder joined = new StringBuilder();
        for (JsonNode t : tokens) {
            joined.append(t.path("token").asString());
            assertThat(t.path("logprob").asDouble()).isLessThanOrEqualTo(0.0);
            assertThat(t.path("top_logprobs").size()).isEqualTo(3);
            // greedy: the chosen token is the most likely one
            assertThat(t.path("top_logprobs").get(0).path("logprob").asDouble()).isEqualTo(t.path("logprob").asDouble());
        }
        assertThat(joined.toString()).isEqualTo(expected).isEqualTo(seen.path("logprobs_text").asString());

        assertThat(seen.path("n_indexes").toString()).isEqualTo("[0,1,2]");
        assertThat(seen.path("n_again")).as("the same seed samples the same choices").isEqualTo(seen.path("n_texts"));
        assertThat(seen.path("n_usage").path("completion_tokens").asInt()).isEqualTo(36);
    }
}
