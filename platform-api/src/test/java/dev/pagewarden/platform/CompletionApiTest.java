package dev.pagewarden.platform;

import dev.pagewarden.platform.testing.IsolatedReference;
import dev.pagewarden.platform.testing.PlatformTest;
import dev.pagewarden.platform.testing.RawHttp;
import org.junit.jupiter.api.Test;
import org.springframework.http.MediaType;
import org.springframework.test.web.reactive.server.EntityExchangeResult;

import java.time.Duration;
import java.util.List;
import java.util.Map;

import static org.assertj.core.api.Assertions.assertThat;

/** The tenant API end to end on the real model: completions and chat, streamed and not, against the isolation oracle. */
class CompletionApiTest extends PlatformTest {

    @Test
    void greedyCompletionIsTokenIdenticalToAnIsolatedRunAndCarriesItsReceipt() throws Exception {
        String key = newTenant("acme")[1];
        EntityExchangeResult<Map> result = as(key).post().uri("/v1/completions").contentType(MediaType.APPLICATION_JSON)
                .bodyValue(Map.of("model", MODEL, "prompt", "Once upon a time", "max_tokens", 40, "temperature", 0))
                .exchange().expectStatus().isOk()
                .expectHeader().exists("X-Request-Id")
                .expectHeader().exists("X-Pagewarden-Receipt")
                .expectBody(Map.class).returnResult();
        Map<?, ?> body = result.getResponseBody();
        Map<?, ?> choice = (Map<?, ?>) ((List<?>) body.get("choices")).getFirst();
        assertThat(choice.get("text")).isEqualTo(IsolatedReference.complete("Once upon a time", 40));
        assertThat(choice.get("finish_reason")).isEqualTo("length");
        assertThat(body.get("object")).isEqualTo("text_completion");
        assertThat((String) body.get("id")).startsWith("cmpl-");
        Map<?, ?> usage = (Map<?, ?>) body.get("usage");
        assertThat(usage.get("completion_tokens")).isEqualTo(40);
        assertThat(usage.get("total_tokens")).isEqualTo((Integer) usage.get("prompt_tokens") + 40);
        assertThat(body.get("pagewarden_receipt")).isEqualTo(result.getResponseHeaders().getFirst("X-Pagewarden-Receipt"));
        assertThat((String) body.get("pagewarden_receipt")).startsWith("pwr1.");
    }

    @Test
    void streamedCompletionJoinsToTheSameTextAndEndsWithReceiptThenDone() throws Exception {
        String key = newTenant("globex")[1];
        List<String> events = sse(key, "/v1/completions", Map.of("model", MODEL, "prompt", "The little dog",
                "max_tokens", 30, "temperature", 0, "stream", true));
        assertThat(events.getLast()).isEqualTo("[DONE]");
        StringBuilder text = new StringBuilder();
        String receipt = null;
        String finish = null;
        for (String e : events.subList(0, events.size() - 1)) {
            Map<?, ?> chunk = Json.parse(e);
            assertThat(chunk.containsKey("error")).isFalse();
            Map<?, ?> choice = (Map<?, ?>) ((List<?>) chunk.get("choices")).getFirst();
            text.append(choice.get("text"));
            if (choice.get("finish_reason") != null) {
                finish = (String) choice.get("finish_reason");
                receipt = (String) chunk.get("pagewarden_receipt");
            }
        }
        assertThat(text.toString()).isEqualTo(IsolatedReference.complete("The little dog", 30));
        assertThat(finish).isEqualTo("length");
        assertThat(receipt).startsWith("pwr1.");
    }

    @Test
    void chatUsesTheTemplateAndStreamsDeltasWithTheAssistantRole() throws Exception {
        String key = newTenant("initech")[1];
        Map<String, Object> request = Map.of("model", MODEL, "max_tokens", 20, "temperature", 0,
                "messages", List.of(Map.of("role", "system", "content", "You tell stories."),
                        Map.of("role", "user", "content", "Tell me about a cat.")));
        String expected = IsolatedReference.complete("system: You tell stories.\nuser: Tell me about a cat.\nassistant:", 20);

        Map<?, ?> body = as(key).post().uri("/v1/chat/completions").contentType(MediaType.APPLICATION_JSON)
                .bodyValue(request).exchange().expectStatus().isOk().expectBody(Map.class).returnResult().getResponseBody();
        Map<?, ?> choice = (Map<?, ?>) ((List<?>) body.get("choices")).getFirst();
        assertThat(((Map<?, ?>) choice.get("message")).get("content")).isEqualTo(expected);
        assertThat(((Map<?, ?>) choice.get("message")).get("role")).isEqualTo("assistant");
        assertThat(body.get("object")).isEqualTo("chat.completion");

        Map<String, Object> streaming = new java.util.HashMap<>(request);
        streaming.put("stream", true);
        streaming.put("stream_options", Map.of("include_usage", true));
        List<String> events = sse(key, "/v1/chat/completions", streaming);
        StringBuilder text = new StringBuilder();
        Map<?, ?> firstDelta = (Map<?, ?>) ((Map<?, ?>) ((List<?>) Json.parse(events.getFirst()).get("choices")).getFirst()).get("delta");
        assertThat(firstDelta.get("role")).isEqualTo("assistant");
        Map<?, ?> usage = null;
        for (String e : events.subList(0, events.size() - 1)) {
            Map<?, ?> chunk = Json.parse(e);
            assertThat(chunk.get("object")).isEqualTo("chat.completion.chunk");
            List<?> choices = (List<?>) chunk.get("choices");
            if (choices.isEmpty()) {
                usage = (Map<?, ?>) chunk.get("usage");
                continue;
            }
            Object content = ((Map<?, ?>) ((Map<?, ?>) choices.getFirst()).get("delta")).get("content");
            if (content != null) {
                text.append(content);
            }
        }
        assertThat(text.toString()).isEqualTo(expected);
        assertThat(usage).isNotNull();
        assertThat(usage.get("completion_tokens")).isEqualTo(20);
        assertThat(events.getLast()).isEqualTo("[DONE]");
    }

    @Test
    void stopSequenceEndsTheAnswerBeforeItAndFinishesNormallyWithAReceipt() throws Exception {
        String key = newTenant("umbrella")[1];
        String full = IsolatedReference.complete("Once upon a time", 40);
        int cut = full.indexOf("Lily");
        assertThat(cut).as("the reference story names Lily").isPositive();
        Map<?, ?> body = as(key).post().uri("/v1/completions").contentType(MediaType.APPLICATION_JSON)
                .bodyValue(Map.of("model", MODEL, "prompt", "Once upon a time", "max_tokens", 40, "temperature", 0,
                        "stop", List.of("Lily", "zzz")))
                .exchange().expectStatus().isOk().expectBody(Map.class).returnResult().getResponseBody();
        Map<?, ?> choice = (Map<?, ?>) ((List<?>) body.get("choices")).getFirst();
        assertThat(choice.get("text")).isEqualTo(full.substring(0, cut));
        assertThat(choice.get("finish_reason")).isEqualTo("stop");
        assertThat((String) body.get("pagewarden_receipt")).startsWith("pwr1.");
    }

    @Test
    void modelsListTheEffectiveContextWindow() {
        String key = newTenant("hooli")[1];
        Map<?, ?> body = as(key).get().uri("/v1/models").exchange().expectStatus().isOk()
                .expectBody(Map.class).returnResult().getResponseBody();
        Map<?, ?> model = (Map<?, ?>) ((List<?>) body.get("data")).getFirst();
        assertThat(model.get("id")).isEqualTo(MODEL);
        assertThat(model.get("context_window")).isEqualTo(512);
    }

    @Test
    void streamsAreWrittenInOpenAisWireFormat() throws Exception {
        String key = newTenant("wire")[1];
        int port = Integer.parseInt(env.getProperty("local.server.port"));
        for (String[] call : new String[][] {
                {"/v1/completions", "{\"model\":\"" + MODEL + "\",\"prompt\":\"Once\",\"max_tokens\":5,\"stream\":true}"},
                {"/v1/chat/completions", "{\"model\":\"" + MODEL + "\",\"max_tokens\":5,\"stream\":true,"
                        + "\"stream_options\":{\"include_usage\":true},\"messages\":[{\"role\":\"user\",\"content\":\"hi\"}]}"}}) {
            try (RawHttp http = RawHttp.local(port, Duration.ofSeconds(60))) {
                RawHttp.Response r = http.post(call[0], "application/json", call[1], "Authorization: Bearer " + key);
                assertThat(r.status()).as(call[0]).isEqualTo(200);
                assertThat(r.header("Content-Type")).startsWith("text/event-stream");
                assertThat(r.body()).as(call[0]).startsWith("data: {\"id\":");
                assertOpenAiEventStream(r.body());
            }
        }
    }

    /** The data payloads of a Server-Sent Events response, in order. */
    private List<String> sse(String key, String uri, Map<String, Object> request) {
        String raw = as(key).post().uri(uri).contentType(MediaType.APPLICATION_JSON).bodyValue(request)
                .exchange().expectStatus().isOk()
                .expectHeader().contentTypeCompatibleWith(MediaType.TEXT_EVENT_STREAM)
                .expectBody(String.class).returnResult().getResponseBody();
        assertOpenAiEventStream(raw);
        return sseData(raw);
    }
}
