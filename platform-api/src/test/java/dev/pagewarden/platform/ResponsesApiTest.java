package dev.pagewarden.platform;

import dev.pagewarden.platform.testing.IsolatedReference;
import dev.pagewarden.platform.testing.PlatformTest;
import dev.pagewarden.platform.testing.RawHttp;
import org.junit.jupiter.api.Test;
import org.springframework.http.MediaType;
import org.springframework.test.web.reactive.server.EntityExchangeResult;
import org.springframework.test.web.reactive.server.WebTestClient;

import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * {@code POST /v1/responses} end to end on the real model: the answer is the chat the input maps to (the isolation
 * oracle's text), in OpenAI's response object or typed event stream, with the receipt as chat carries it and a
 * request row the audit endpoint finds by the {@code resp_} id; what the endpoint does not do is a 400 naming the field.
 */
class ResponsesApiTest extends PlatformTest {
    private static final String CHAT_PROMPT = "system: You tell stories.\nuser: Tell me about a cat.\nassistant:";

    private static Map<String, Object> request(Object... extra) {
        Map<String, Object> r = new HashMap<>(Map.of("model", MODEL, "instructions", "You tell stories.",
                "input", "Tell me about a cat.", "max_output_tokens", 20, "temperature", 0));
        for (int i = 0; i < extra.length; i += 2) {
            r.put((String) extra[i], extra[i + 1]);
        }
        return r;
    }

    private WebTestClient.ResponseSpec post(String key, Object body) {
        return as(key).post().uri("/v1/responses").contentType(MediaType.APPLICATION_JSON).bodyValue(body).exchange();
    }

    @Test
    void aResponseIsTheChatItMapsToWithItsReceiptAndAnAuditableResp_Id() throws Exception {
        String key = newTenant("responses")[1];
        String expected = IsolatedReference.complete(CHAT_PROMPT, 20);
        EntityExchangeResult<Map> result = post(key, request("metadata", Map.of("ticket", "42")))
                .expectStatus().isOk().expectHeader().exists("X-Pagewarden-Receipt").expectBody(Map.class).returnResult();
        Map<?, ?> body = result.getResponseBody();
        assertThat((String) body.get("id")).startsWith("resp_");
        assertThat(body.get("object")).isEqualTo("response");
        assertThat(body.get("status")).isEqualTo("incomplete");
        assertThat(body.get("incomplete_details")).isEqualTo(Map.of("reason", "max_output_tokens"));
        assertThat(body.get("store")).isEqualTo(false);
        assertThat(body.get("instructions")).isEqualTo("You tell stories.");
        assertThat(body.get("metadata")).isEqualTo(Map.of("ticket", "42"));
        assertThat(body.get("max_output_tokens")).isEqualTo(20);
        List<?> output = (List<?>) body.get("output");
        assertThat(output).hasSize(1);
        Map<?, ?> message = (Map<?, ?>) output.getFirst();
        assertThat(message.get("type")).isEqualTo("message");
        assertThat(message.get("role")).isEqualTo("assistant");
        assertThat((String) message.get("id")).startsWith("msg_");
        Map<?, ?> part = (Map<?, ?>) ((List<?>) message.get("content")).getFirst();
        assertThat(part.get("type")).isEqualTo("output_text");
        assertThat(part.get("text")).isEqualTo(expected);
        assertThat(part.get("annotations")).isEqualTo(List.of());
        Map<?, ?> usage = (Map<?, ?>) body.get("usage");
        assertThat(usage.get("output_tokens")).isEqualTo(20);
        assertThat(usage.get("total_tokens")).isEqualTo((Integer) usage.get("input_tokens") + 20);
        assertThat(usage.get("input_tokens_details")).isEqualTo(Map.of("cached_tokens", 0));
        assertThat(usage.get("output_tokens_details")).isEqualTo(Map.of("reasoning_tokens", 0));
        String receipt = (String) body.get("pagewarden_receipt");
        assertThat(receipt).startsWith("pwr1.").isEqualTo(result.getResponseHeaders().getFirst("X-Pagewarden-Receipt"));

        Map<?, ?> audit = as(key).get().uri("/v1/audit/requests/" + body.get("id")).exchange().expectStatus().isOk()
                .expectBody(Map.class).returnResult().getResponseBody();
        assertThat(audit.get("receipt")).isEqualTo(receipt);
        assertThat(audit.get("completion_tokens")).isEqualTo(20);

        // message items with text parts run the same conversation
        Map<String, Object> items = request("input", List.of(Map.of("type", "message", "role", "user",
                "content", List.of(Map.of("type", "input_text", "text", "Tell me about "),
                        Map.of("type", "input_text", "text", "a cat.")))));
        Map<?, ?> again = post(key, items).expectStatus().isOk().expectBody(Map.class).returnResult().getResponseBody();
        Map<?, ?> againPart = (Map<?, ?>) ((List<?>) ((Map<?, ?>) ((List<?>) again.get("output")).getFirst())
                .get("content")).getFirst();
        assertThat(againPart.get("text")).isEqualTo(expected);
    }

    @Test
    void aStreamSendsOpenAisTypedEventsInOrderEndingWithTheReceipt() throws Exception {
        String key = newTenant("responses-stream")[1];
        String expected = IsolatedReference.complete(CHAT_PROMPT, 20);
        String raw = post(key, request("stream", true)).expectStatus().isOk()
                .expectHeader().contentTypeCompatibleWith(MediaType.TEXT_EVENT_STREAM)
                .expectBody(String.class).returnResult().getResponseBody();
        List<String> names = new ArrayList<>();
        List<Map<?, ?>> events = new ArrayList<>();
        for (String block : raw.split("\n\n")) {
            List<String> lines = block.lines().toList();
            assertThat(lines.getFirst()).startsWith("event: ");
            assertThat(lines.subList(1, lines.size())).isNotEmpty().allMatch(l -> l.startsWith("data: "));
            names.add(lines.getFirst().substring(7));
            events.add(Json.parse(String.join("\n", lines.subList(1, lines.size()).stream().map(l -> l.substring(6)).toList())));
        }
        for (int i = 0; i < events.size(); i++) {
            assertThat(events.get(i).get("type")).as("event %d", i).isEqualTo(names.get(i));
            assertThat(events.get(i).get("sequence_number")).as("event %d", i).isEqualTo(i);
        }
        assertThat(names.subList(0, 4)).containsExactly("response.created", "response.in_progress",
                "response.output_item.added", "response.content_part.added");
        assertThat(names.subList(names.size() - 4, names.size())).containsExactly("response.output_text.done",
                "response.content_part.done", "response.output_item.done", "response.incomplete");
        StringBuilder text = new StringBuilder();
        for (int i = 4; i < names.size() - 4; i++) {
            assertThat(names.get(i)).isEqualTo("response.output_text.delta");
            text.append(events.get(i).get("delta"));
        }
        assertThat(text.toString()).isEqualTo(expected);
        assertThat(events.get(names.size() - 4).get("text")).isEqualTo(expected);
        Map<?, ?> created = (Map<?, ?>) events.getFirst().get("response");
        Map<?, ?> last = (Map<?, ?>) events.getLast().get("response");
        assertThat(created.get("status")).isEqualTo("in_progress");
        assertThat(last.get("id")).isEqualTo(created.get("id"));
        assertThat(last.get("status")).isEqualTo("incomplete");
        assertThat((String) last.get("pagewarden_receipt")).startsWith("pwr1.");
        assertThat(((Map<?, ?>) last.get("usage")).get("output_tokens")).isEqualTo(20);

        // on the wire: each event is its "event:" line, then "data: " lines (with the space), and no [DONE]
        int port = Integer.parseInt(env.getProperty("local.server.port"));
        try (RawHttp http = RawHttp.local(port, Duration.ofSeconds(60))) {
            RawHttp.Response r = http.post("/v1/responses", "application/json", "{\"model\":\"" + MODEL
                    + "\",\"input\":\"hi\",\"max_output_tokens\":3,\"stream\":true}", "Authorization: Bearer " + key);
            assertThat(r.status()).isEqualTo(200);
            assertThat(r.header("Content-Type")).startsWith("text/event-stream");
            assertThat(r.body()).startsWith("event: response.created\ndata: {\"type\":\"response.created\",")
                    .endsWith("}\n\n").doesNotContain("[DONE]");
            for (String event : r.body().split("\n\n")) {
                List<String> lines = event.lines().toList();
                assertThat(lines.getFirst()).startsWith("event: response.");
                assertThat(lines.subList(1, lines.size())).isNotEmpty().allMatch(l -> l.startsWith("data: {"));
            }
            assertThat(r.body().substring(r.body().lastIndexOf("event: "))).startsWith("event: response.incomplete\n");
        }
    }

    @Test
    void whatTheEndpointDoesNotDoIsA400NamingTheField() {
        String key = newTenant("responses-400")[1];
        Object[][] cases = {
                {"store", request("store", true)},
                {"tools[0].type", request("tools", List.of(Map.of("type", "web_search")))},
                {"tool_choice", request("tool_choice", "required")},
                {"text.format", request("text", Map.of("format", Map.of("type", "xml")))},
                {"text.format", request("text", Map.of("format", Map.of("type", "json_schema", "name", "x",
                        "schema", Map.of())))},
                {"previous_response_id", request("previous_response_id", "resp_abc")},
                {"background", request("background", true)},
                {"include", request("include", List.of("message.output_text.logprobs"))},
                {"reasoning.effort", request("reasoning", Map.of("effort", "extreme"))},
                {"reasoning.summary", request("reasoning", Map.of("summary", "everything"))},
                {"truncation", request("truncation", "auto")},
                {"max_output_tokens", request("max_output_tokens", 0)},
                {"max_output_tokens", request("max_output_tokens", 100_000)}, // more than the window: the engine's check
                {"temperature", request("temperature", 3)},
                {"top_p", request("top_p", 0)},
                {"stream_options", request("stream_options", Map.of("include_obfuscation", false))},
                {"model", request("model", 7)},
                {"input", request("input", List.of())},
                {"input[0].role", request("input", List.of(Map.of("role", "tool", "content", "x")))},
                {"input[0].type", request("input", List.of(Map.of("type", "computer_call_output", "call_id", "c",
                        "output", "x")))},
                {"input[0].call_id", request("input", List.of(Map.of("type", "function_call_output", "output", "x")))},
                {"input[0].content[0]", request("input", List.of(Map.of("role", "user",
                        "content", List.of(Map.of("type", "input_image", "image_url", "http://x/y.png")))))},
                {"metadata.k", request("metadata", Map.of("k", 1))},
                {"max_tokens", request("max_tokens", 5)},
        };
        for (Object[] c : cases) {
            post(key, c[1]).expectStatus().isBadRequest().expectBody()
                    .jsonPath("$.error.param").isEqualTo(c[0])
                    .jsonPath("$.error.type").isEqualTo("invalid_request_error");
        }
        Map<String, Object> noInput = request();
        noInput.remove("input");
        post(key, noInput).expectStatus().isBadRequest().expectBody().jsonPath("$.error.param").isEqualTo("input");
        post(key, request("store", true)).expectBody().jsonPath("$.error.message")
                .value(m -> assertThat((String) m).contains("never stored"));
        // what is neutral is accepted: store false, no tools, text format text, empty include
        post(key, request("store", false, "tools", List.of(), "text", Map.of("format", Map.of("type", "text")),
                "include", List.of(), "max_output_tokens", 2)).expectStatus().isOk();
    }

    @Test
    void aResponseCannotBeReadBackBecauseNoneIsStored() {
        String key = newTenant("responses-get")[1];
        for (String path : List.of("/v1/responses/resp_abc", "/v1/responses/resp_abc/input_items")) {
            as(key).get().uri(path).exchange().expectStatus().isNotFound().expectBody()
                    .jsonPath("$.error.code").isEqualTo("not_found")
                    .jsonPath("$.error.message").value(m -> assertThat((String) m).contains("not stored"));
        }
        as(key).delete().uri("/v1/responses/resp_abc").exchange().expectStatus().isNotFound();
        client().get().uri("/v1/responses/resp_abc").exchange().expectStatus().isUnauthorized();
    }
}
