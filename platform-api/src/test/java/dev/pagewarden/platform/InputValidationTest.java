package dev.pagewarden.platform;

import dev.pagewarden.platform.testing.PlatformTest;
import org.junit.jupiter.api.Test;
import org.springframework.http.HttpStatus;
import org.springframework.http.MediaType;
import org.springframework.test.web.reactive.server.WebTestClient;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.json.JsonMapper;

import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.regex.Pattern;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Bad input on the tenant and admin APIs: text that cannot be stored, strict JSON, unsupported
 * fields, model ids, paths the firewall refuses and paths that do not exist - each a clear 4xx in
 * OpenAI's error shape naming the problem, never a 500 and never the parser's internals.
 */
class InputValidationTest extends PlatformTest {
    private static final Pattern INTERNALS = Pattern.compile(
            "com\\.fasterxml|tools\\.jackson|java\\.|JsonNode|LinkedHashMap|Source: |REDACTED|`|Exception");
    private static final JsonMapper JSON = JsonMapper.builder().build();

    private WebTestClient.BodyContentSpec error(WebTestClient.RequestHeadersSpec<?> request, HttpStatus status,
                                                String code) {
        return request.exchange().expectStatus().isEqualTo(status)
                .expectHeader().exists("X-Request-Id")
                .expectHeader().contentTypeCompatibleWith(MediaType.APPLICATION_JSON)
                .expectBody()
                .jsonPath("$.error.code").isEqualTo(code)
                .jsonPath("$.error.message").value(m -> assertThat((String) m).isNotBlank().doesNotContainPattern(INTERNALS))
                .jsonPath("$.error.type").isNotEmpty();
    }

    private WebTestClient.RequestHeadersSpec<?> post(WebTestClient client, String path, Object body) {
        return client.post().uri(path).contentType(MediaType.APPLICATION_JSON).bodyValue(body);
    }

    @Test
    void textThatCannotBeStoredIs400NamingTheField() {
        error(post(admin(), "/admin/api/tenants", Map.of("name", "ac\u0000me")), HttpStatus.BAD_REQUEST, "invalid_request")
                .jsonPath("$.error.param").isEqualTo("name")
                .jsonPath("$.error.message").value(m -> assertThat((String) m).contains("control characters"));
        error(post(admin(), "/admin/api/tenants", "{\"name\":\"a\\ud800b\"}"), HttpStatus.BAD_REQUEST, "invalid_request")
                .jsonPath("$.error.param").isEqualTo("name");
        error(post(admin(), "/admin/api/tenants", Map.of("name", "bell\u0007")), HttpStatus.BAD_REQUEST, "invalid_request")
                .jsonPath("$.error.param").isEqualTo("name");
        error(post(admin(), "/admin/api/tenants", Map.of("name", "x".repeat(201))), HttpStatus.BAD_REQUEST,
                "invalid_request").jsonPath("$.error.param").isEqualTo("name");
        String tenant = newTenant("caf\u00e9 \uD83D\uDE00")[0];
        error(post(admin(), "/admin/api/tenants/" + tenant + "/keys", Map.of("name", "ci\u0000key")),
                HttpStatus.BAD_REQUEST, "invalid_request").jsonPath("$.error.param").isEqualTo("name");
        error(post(admin(), "/admin/api/tenants/" + tenant + "/keys", Map.of("name", "k".repeat(201))),
                HttpStatus.BAD_REQUEST, "invalid_request").jsonPath("$.error.param").isEqualTo("name");
        admin().get().uri("/admin/api/tenants/" + tenant).exchange().expectStatus().isOk()
                .expectBody().jsonPath("$.name").isEqualTo("caf\u00e9 \uD83D\uDE00");
        admin().get().uri("/admin/api/tenants/" + tenant + "/keys").exchange().expectStatus().isOk()
                .expectBody().jsonPath("$.length()").isEqualTo(1);
    }

    @Test
    void duplicateKeysAreRefusedNamingTheKey() {
        String key = newTenant("dupes")[1];
        error(post(as(key), "/v1/completions", "{\"model\":\"stories260K\",\"prompt\":\"hi\",\"prompt\":\"bye\"}"),
                HttpStatus.BAD_REQUEST, "invalid_request").jsonPath("$.error.param").isEqualTo("prompt")
                .jsonPath("$.error.message").value(m -> assertThat((String) m).contains("'prompt' more than once"));
        error(post(as(key), "/v1/chat/completions", "{\"model\":\"stories260K\",\"messages\":[{\"role\":\"user\","
                        + "\"content\":\"a\",\"role\":\"system\"}]}"), HttpStatus.BAD_REQUEST, "invalid_request")
                .jsonPath("$.error.param").isEqualTo("role");
        error(post(admin(), "/admin/api/tenants", "{\"name\":\"a\",\"name\":\"b\"}"), HttpStatus.BAD_REQUEST,
                "invalid_request").jsonPath("$.error.param").isEqualTo("name");
    }

    @Test
    void unknownAndUnsupportedFieldsInsideMessagesAreRefused() {
        String key = newTenant("messages")[1];
        error(post(as(key), "/v1/chat/completions", Map.of("model", MODEL, "messages",
                        List.of(Map.of("role", "user", "content", "hi", "foo", 1)))),
                HttpStatus.BAD_REQUEST, "unknown_parameter").jsonPath("$.error.param").isEqualTo("messages[0].foo");
        error(post(as(key), "/v1/chat/completions", Map.of("model", MODEL, "messages", List.of(
                        Map.of("role", "system", "content", "be brief"),
                        Map.of("role", "user", "content", List.of(Map.of("type", "text", "text", "hi", "extra", true)))))),
                HttpStatus.BAD_REQUEST, "unknown_parameter").jsonPath("$.error.param").isEqualTo("messages[1].content[0].extra");
        error(post(as(key), "/v1/chat/completions", Map.of("model", MODEL, "messages",
                        List.of(Map.of("role", "user", "content", "hi", "name", "bob")))),
                HttpStatus.BAD_REQUEST, "invalid_request").jsonPath("$.error.param").isEqualTo("messages[0].name");
    }

    @Test
    void legacyFunctionCallingInAnyFormIsRefusedNotIgnored() {
        String key = newTenant("tools")[1];
        for (var field : List.<Map.Entry<String, Object>>of(Map.entry("functions", List.of()),
                Map.entry("function_call", "none"))) {
            error(post(as(key), "/v1/chat/completions", Map.of("model", MODEL, "messages",
                            List.of(Map.of("role", "user", "content", "hi")), field.getKey(), field.getValue())),
                    HttpStatus.BAD_REQUEST, "invalid_request").jsonPath("$.error.param").isEqualTo(field.getKey());
        }
    }

    @Test
    void contextLengthErrorsNameThePromptField() {
        String key = newTenant("long-prompts")[1];
        String story = "Once upon a time there was a cat. ".repeat(80);
        error(post(as(key), "/v1/completions", Map.of("model", MODEL, "prompt", story)), HttpStatus.BAD_REQUEST,
                "context_length_exceeded").jsonPath("$.error.param").isEqualTo("prompt");
        error(post(as(key), "/v1/chat/completions", Map.of("model", MODEL, "messages",
                        List.of(Map.of("role", "user", "content", story)), "max_tokens", 10)),
                HttpStatus.BAD_REQUEST, "context_length_exceeded").jsonPath("$.error.param").isEqualTo("messages");
        String[] small = newTenant("small-window");
        admin().put().uri("/admin/api/tenants/" + small[0] + "/limits").contentType(MediaType.APPLICATION_JSON)
                .bodyValue(Map.of("max_context", 20)).exchange().expectStatus().isOk();
        error(post(as(small[1]), "/v1/completions", Map.of("model", MODEL, "prompt", "hi", "max_tokens", 30)),
                HttpStatus.BAD_REQUEST, "context_length_exceeded").jsonPath("$.error.param").isEqualTo("prompt");
    }

    /** A chat without max_tokens writes what the tenant's limits leave after the prompt, not the whole window. */
    @Test
    void chatWithoutMaxTokensStaysInsideTheTenantsLimits() {
        String[] small = newTenant("small-context-chat");
        admin().put().uri("/admin/api/tenants/" + small[0] + "/limits").contentType(MediaType.APPLICATION_JSON)
                .bodyValue(Map.of("max_context", 40)).exchange().expectStatus().isOk();
        Map<?, ?> chat = post(as(small[1]), "/v1/chat/completions", Map.of("model", MODEL, "temperature", 0,
                "messages", List.of(Map.of("role", "user", "content", "Once upon a time"))))
                .exchange().expectStatus().isOk().expectBody(Map.class).returnResult().getResponseBody();
        Map<?, ?> usage = (Map<?, ?>) chat.get("usage");
        assertThat(((Number) usage.get("total_tokens")).intValue()).isLessThanOrEqualTo(40);
        String[] metered = newTenant("small-rate-chat");
        admin().put().uri("/admin/api/tenants/" + metered[0] + "/limits").contentType(MediaType.APPLICATION_JSON)
                .bodyValue(Map.of("tokens_per_minute", 60)).exchange().expectStatus().isOk();
        post(as(metered[1]), "/v1/chat/completions", Map.of("model", MODEL, "temperature", 0,
                "messages", List.of(Map.of("role", "user", "content", "Once upon a time"))))
                .exchange().expectStatus().isOk();
    }

    @Test
    void malformedBodiesAreDescribedWithoutParserInternals() {
        String key = newTenant("malformed")[1];
        List<String> bodies = List.of("{\"model\":", "{model:1}", "{\"model\":tru}", "{\"a\":1}}", "{\"a\":1,}",
                "{\"a\":[1,2}", "{\"a\":\"\\x\"}", "{\"a\":01}", "{\"a\":NaN}", "{\"a\" 1}", "'x'", "{\"a\":\"abc",
                "{\"a\":-}", "{\"a\":1} x", "[1,2]", "\"text\"", "42", "null", "{\"model\":\"stories260K\",\"prompt\":{}}",
                "{\"model\":[],\"prompt\":\"hi\"}", "{\"model\":\"stories260K\",\"prompt\":\"hi\",\"max_tokens\":1e400}",
                "{\"model\":\"stories260K\",\"prompt\":\"hi\",\"seed\":123456789012345678901234567890}");
        for (String body : bodies) {
            for (String path : List.of("/v1/completions", "/v1/chat/completions")) {
                post(as(key), path, body).exchange().expectStatus().isBadRequest().expectBody()
                        .jsonPath("$.error.type").isEqualTo("invalid_request_error")
                        .jsonPath("$.error.message").value(m -> assertThat((String) m).as(path + " " + body)
                                .isNotBlank().doesNotContainPattern(INTERNALS));
            }
            admin().post().uri("/admin/api/tenants").contentType(MediaType.APPLICATION_JSON).bodyValue(body)
                    .exchange().expectStatus().isBadRequest().expectBody()
                    .jsonPath("$.error.message").value(m -> assertThat((String) m).as(body)
                            .doesNotContainPattern(INTERNALS));
        }
        error(post(as(key), "/v1/completions", "{\"model\":\"stories260K\",\n \"prompt\": tru}"),
                HttpStatus.BAD_REQUEST, "invalid_request")
                .jsonPath("$.error.message").value(m -> assertThat((String) m).contains("line 2"));
    }

    @Test
    void modelIdsAreValidated() {
        String key = newTenant("models")[1];
        error(post(as(key), "/v1/completions", Map.of("model", "stories\u0000260K", "prompt", "hi")),
                HttpStatus.BAD_REQUEST, "invalid_request").jsonPath("$.error.param").isEqualTo("model")
                .jsonPath("$.error.message").value(m -> assertThat((String) m).doesNotContain("\u0000"));
        error(post(as(key), "/v1/completions", Map.of("model", "m".repeat(129), "prompt", "hi")),
                HttpStatus.BAD_REQUEST, "invalid_request").jsonPath("$.error.param").isEqualTo("model");
        error(post(as(key), "/v1/completions", Map.of("model", "gpt-99", "prompt", "hi")),
                HttpStatus.NOT_FOUND, "model_not_found").jsonPath("$.error.param").isEqualTo("model");
        error(admin().put().uri("/admin/api/models/" + "m".repeat(129) + "/visibility")
                        .contentType(MediaType.APPLICATION_JSON).bodyValue(Map.of("private", true)),
                HttpStatus.BAD_REQUEST, "invalid_request").jsonPath("$.error.param").isEqualTo("model");
        error(admin().put().uri("/admin/api/models/no-such-model/visibility").contentType(MediaType.APPLICATION_JSON)
                .bodyValue(Map.of("private", true)), HttpStatus.NOT_FOUND, "model_not_found");
    }

    @Test
    void unknownPathsAndWrongMethodsAnswerInTheOpenAiShape() {
        String key = newTenant("lost-paths")[1];
        error(as(key).get().uri("/v1/nope"), HttpStatus.NOT_FOUND, "not_found");
        error(client().get().uri("/nope"), HttpStatus.NOT_FOUND, "not_found");
        error(client().get().uri("/nope/deeper.json"), HttpStatus.NOT_FOUND, "not_found");
        error(admin().get().uri("/admin/api/nope"), HttpStatus.NOT_FOUND, "not_found");
        error(as(key).delete().uri("/v1/models"), HttpStatus.METHOD_NOT_ALLOWED, "method_not_allowed");
        error(client().post().uri("/status.json"), HttpStatus.METHOD_NOT_ALLOWED, "method_not_allowed");
    }

    @Test
    void pathsTheFirewallRefusesGetAnOpenAiBody() throws Exception {
        HttpClient http = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(10)).build();
        for (String path : List.of("/v1//models", "/v1/%2e%2e/admin/api/tenants", "/v1/models;x=1", "/admin/api/%2e/tenants",
                "/v1/models%2Fx", "//nope")) {
            HttpResponse<String> r = http.send(HttpRequest.newBuilder(URI.create(baseUrl() + path))
                    .timeout(Duration.ofSeconds(30)).GET().build(), HttpResponse.BodyHandlers.ofString());
            assertThat(r.statusCode()).as(path).isEqualTo(400);
            assertThat(r.headers().firstValue("Content-Type")).as(path).get().asString().startsWith("application/json");
            assertThat(r.headers().firstValue("X-Request-Id")).as(path).isPresent();
            JsonNode error = JSON.readTree(r.body()).get("error");
            assertThat(error.get("code").asString()).as(path).isEqualTo("invalid_path");
            assertThat(error.get("type").asString()).isEqualTo("invalid_request_error");
            assertThat(error.get("message").asString()).as(path).contains("not allowed").doesNotContain(path);
        }
    }

    @Test
    void controlCharactersInPathIdsAreA4xxNeverA500() throws Exception {
        String key = newTenant("path-ids")[1];
        HttpClient http = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(10)).build();
        for (String[] call : new String[][]{{"GET", "/admin/api/tenants/t_%00x", ADMIN_TOKEN},
                {"GET", "/admin/api/tenants/t_%00x/keys", ADMIN_TOKEN},
                {"DELETE", "/admin/api/tenants/t_x/keys/pw_%00", ADMIN_TOKEN},
                {"PUT", "/admin/api/tenants/t_%01x/limits", ADMIN_TOKEN},
                {"GET", "/v1/audit/requests/%00", key}, {"GET", "/v1/models/a%00b", key}}) {
            HttpRequest.BodyPublisher body = call[0].equals("PUT") ? HttpRequest.BodyPublishers.ofString("{}")
                    : HttpRequest.BodyPublishers.noBody();
            HttpResponse<String> r = http.send(HttpRequest.newBuilder(URI.create(baseUrl() + call[1]))
                    .timeout(Duration.ofSeconds(30)).header("Authorization", "Bearer " + call[2])
                    .header("Content-Type", "application/json").method(call[0], body).build(),
                    HttpResponse.BodyHandlers.ofString());
            assertThat(r.statusCode()).as(call[0] + " " + call[1] + ": " + r.body()).isBetween(400, 404);
            assertThat(JSON.readTree(r.body()).get("error").get("message").asString()).as(call[1]).isNotBlank();
        }
    }

    @Test
    void callersRequestIdIsEchoedSeparatelyNeverAdoptedAsOurs() {
        String key = newTenant("ids")[1];
        String other = as(key).get().uri("/v1/models").exchange().expectStatus().isOk()
                .returnResult(String.class).getResponseHeaders().getFirst("X-Request-Id");
        var copied = as(key).get().uri("/v1/models").header("X-Request-Id", other).exchange().expectStatus().isOk()
                .returnResult(String.class).getResponseHeaders();
        assertThat(copied.getFirst("X-Request-Id")).isNotNull().isNotEqualTo(other);
        assertThat(copied.getFirst("X-Client-Request-Id")).isEqualTo(other);
        var odd = as(key).get().uri("/v1/models").header("X-Request-Id", "no spaces <allowed>").exchange()
                .returnResult(String.class).getResponseHeaders();
        assertThat(odd.getFirst("X-Request-Id")).isNotEqualTo("no spaces <allowed>");
        assertThat(odd.containsHeader("X-Client-Request-Id")).isFalse();
    }
}
