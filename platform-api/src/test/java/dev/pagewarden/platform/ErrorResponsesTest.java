package dev.pagewarden.platform;

import dev.pagewarden.platform.engine.EngineHost;
import dev.pagewarden.platform.testing.PlatformTest;
import org.junit.jupiter.api.Test;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.http.HttpStatus;
import org.springframework.http.MediaType;
import org.springframework.test.web.reactive.server.WebTestClient;

import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Every refusal of the tenant API: status, OpenAI error body (message naming the problem, type,
 * param, code), Retry-After where a retry helps, and X-Request-Id on all of them.
 */
class ErrorResponsesTest extends PlatformTest {
    @Autowired
    EngineHost host;

    private WebTestClient.BodyContentSpec error(WebTestClient.RequestHeadersSpec<?> request, HttpStatus status,
                                                String code) {
        return request.exchange().expectStatus().isEqualTo(status)
                .expectHeader().exists("X-Request-Id")
                .expectHeader().contentTypeCompatibleWith(MediaType.APPLICATION_JSON)
                .expectBody()
                .jsonPath("$.error.code").isEqualTo(code)
                .jsonPath("$.error.message").isNotEmpty()
                .jsonPath("$.error.type").isNotEmpty();
    }

    private WebTestClient.RequestHeadersSpec<?> completion(String key, Object body) {
        return as(key).post().uri("/v1/completions").contentType(MediaType.APPLICATION_JSON).bodyValue(body);
    }

    @Test
    void promptLongerThanTheWindowIsRefusedAtAdmissionBeforeAnyPage() {
        String key = newTenant("long")[1];
        int freeBefore = host.served().orElseThrow().engine().decodePool().freePages();
        error(completion(key, Map.of("model", MODEL, "prompt", "Once upon a time there was a cat. ".repeat(80))),
                HttpStatus.BAD_REQUEST, "context_length_exceeded")
                .jsonPath("$.error.message").value(m -> assertThat((String) m).contains("512"));
        assertThat(host.served().orElseThrow().engine().decodePool().freePages()).isEqualTo(freeBefore);
        assertThat(host.served().orElseThrow().engine().prefillPool().peakUsedPages()).isLessThanOrEqualTo(
                host.served().orElseThrow().engine().prefillPool().capacityPages());
    }

    @Test
    void malformedRequestsNameTheProblem() {
        String key = newTenant("typos")[1];
        error(completion(key, Map.of("model", MODEL, "prompt", "hi", "max_tokens", -3)), HttpStatus.BAD_REQUEST,
                "invalid_request").jsonPath("$.error.param").isEqualTo("max_tokens");
        error(completion(key, Map.of("model", MODEL, "prompt", "hi", "max_tokens", 100_000)), HttpStatus.BAD_REQUEST,
                "invalid_request").jsonPath("$.error.param").isEqualTo("max_tokens");
        error(completion(key, Map.of("model", MODEL, "prompt", "hi", "max_tokens", "ten")), HttpStatus.BAD_REQUEST,
                "invalid_request").jsonPath("$.error.message").value(m -> assertThat((String) m).contains("integer"));
        error(completion(key, Map.of("model", MODEL, "prompt", "hi", "temperature", 7)), HttpStatus.BAD_REQUEST,
                "invalid_request").jsonPath("$.error.param").isEqualTo("temperature");
        error(completion(key, Map.of("model", MODEL, "prompt", "hi", "max_token", 5)), HttpStatus.BAD_REQUEST,
                "unknown_parameter").jsonPath("$.error.param").isEqualTo("max_token");
        error(completion(key, Map.of("model", MODEL, "prompt", "hi", "n", 9)), HttpStatus.BAD_REQUEST,
                "invalid_request").jsonPath("$.error.param").isEqualTo("n");
        error(completion(key, Map.of("prompt", "hi")), HttpStatus.BAD_REQUEST, "invalid_request")
                .jsonPath("$.error.param").isEqualTo("model");
        error(completion(key, "{\"model\": \"stories260K\", \"prompt\": "), HttpStatus.BAD_REQUEST, "invalid_request")
                .jsonPath("$.error.message").value(m -> assertThat((String) m).contains("not valid JSON"));
        error(completion(key, "[1, 2]"), HttpStatus.BAD_REQUEST, "invalid_request");
        byte[] badUtf8 = "{\"model\":\"stories260K\",\"prompt\":\"\u00ff\"}".getBytes(StandardCharsets.ISO_8859_1);
        error(completion(key, badUtf8), HttpStatus.BAD_REQUEST, "invalid_request")
                .jsonPath("$.error.message").value(m -> assertThat((String) m).contains("UTF-8"));
        error(as(key).post().uri("/v1/chat/completions").contentType(MediaType.APPLICATION_JSON)
                        .bodyValue(Map.of("model", MODEL, "messages", List.of(Map.of("role", "wizard", "content", "hi")))),
                HttpStatus.BAD_REQUEST, "invalid_request").jsonPath("$.error.param").isEqualTo("messages[0].role");
        error(completion(key, Map.of("model", MODEL, "prompt", List.of(1, 2, 99_999))), HttpStatus.BAD_REQUEST,
                "invalid_request").jsonPath("$.error.param").isEqualTo("prompt");
    }

    @Test
    void missingWrongAndRevokedKeysAre401() {
        String[] tenant = newTenant("keys");
        error(client().post().uri("/v1/completions").contentType(MediaType.APPLICATION_JSON)
                .bodyValue(Map.of("model", MODEL, "prompt", "hi")), HttpStatus.UNAUTHORIZED, "invalid_api_key");
        error(completion("pw_aaaaaaaaaa_" + "x".repeat(43), Map.of("model", MODEL, "prompt", "hi")),
                HttpStatus.UNAUTHORIZED, "invalid_api_key");
        error(completion("not-a-key", Map.of("model", MODEL, "prompt", "hi")), HttpStatus.UNAUTHORIZED, "invalid_api_key");
        String prefix = tenant[1].substring(0, 13);
        admin().delete().uri("/admin/api/tenants/" + tenant[0] + "/keys/" + prefix).exchange().expectStatus().isOk();
        error(completion(tenant[1], Map.of("model", MODEL, "prompt", "hi")), HttpStatus.UNAUTHORIZED, "invalid_api_key");
        // a tenant key is no admin credential
        error(as(newTenant("sneaky")[1]).post().uri("/admin/api/tenants").contentType(MediaType.APPLICATION_JSON)
                .bodyValue(Map.of("name", "x")), HttpStatus.UNAUTHORIZED, "invalid_api_key");
    }

    @Test
    void unknownModelIs404() {
        String key = newTenant("lost")[1];
        error(completion(key, Map.of("model", "gpt-99", "prompt", "hi")), HttpStatus.NOT_FOUND, "model_not_found")
                .jsonPath("$.error.param").isEqualTo("model");
    }

    @Test
    void tenantLimitsAre429WithRetryAfter() {
        String[] tenant = newTenant("limited");
        admin().put().uri("/admin/api/tenants/" + tenant[0] + "/limits").contentType(MediaType.APPLICATION_JSON)
                .bodyValue(Map.of("requests_per_minute", 1)).exchange().expectStatus().isOk();
        completion(tenant[1], Map.of("model", MODEL, "prompt", "hi", "max_tokens", 2)).exchange().expectStatus().isOk();
        error(completion(tenant[1], Map.of("model", MODEL, "prompt", "hi", "max_tokens", 2)),
                HttpStatus.TOO_MANY_REQUESTS, "rate_limit_exceeded");
        completion(tenant[1], Map.of("model", MODEL, "prompt", "hi", "max_tokens", 2)).exchange()
                .expectHeader().value("Retry-After", v -> assertThat(Integer.parseInt(v)).isBetween(1, 60));

        String[] small = newTenant("small-context");
        admin().put().uri("/admin/api/tenants/" + small[0] + "/limits").contentType(MediaType.APPLICATION_JSON)
                .bodyValue(Map.of("max_context", 50)).exchange().expectStatus().isOk();
        error(completion(small[1], Map.of("model", MODEL, "prompt", "hi", "max_tokens", 100)), HttpStatus.BAD_REQUEST,
                "context_length_exceeded").jsonPath("$.error.message").value(m -> assertThat((String) m).contains("50"));

        String[] tokens = newTenant("few-tokens");
        admin().put().uri("/admin/api/tenants/" + tokens[0] + "/limits").contentType(MediaType.APPLICATION_JSON)
                .bodyValue(Map.of("tokens_per_minute", 30)).exchange().expectStatus().isOk();
        completion(tokens[1], Map.of("model", MODEL, "prompt", "hi", "max_tokens", 20)).exchange().expectStatus().isOk();
        error(completion(tokens[1], Map.of("model", MODEL, "prompt", "hi", "max_tokens", 20)),
                HttpStatus.TOO_MANY_REQUESTS, "rate_limit_exceeded");
    }

    @Test
    void privateModelIs503UntilRestored() {
        String key = newTenant("waiting")[1];
        admin().put().uri("/admin/api/models/" + MODEL + "/visibility").contentType(MediaType.APPLICATION_JSON)
                .bodyValue(Map.of("private", true)).exchange().expectStatus().isOk();
        try {
            error(completion(key, Map.of("model", MODEL, "prompt", "hi")), HttpStatus.SERVICE_UNAVAILABLE,
                    "model_unavailable");
            as(key).get().uri("/v1/models").exchange().expectBody().jsonPath("$.data.length()").isEqualTo(0);
        } finally {
            admin().put().uri("/admin/api/models/" + MODEL + "/visibility").contentType(MediaType.APPLICATION_JSON)
                    .bodyValue(Map.of("private", false)).exchange().expectStatus().isOk();
        }
        completion(key, Map.of("model", MODEL, "prompt", "hi", "max_tokens", 3)).exchange().expectStatus().isOk();
    }

    @Test
    void fullAdmissionQueueIs503OverloadedWithRetryAfter() throws Exception {
        String key = newTenant("crowd")[1];
        HttpClient http = HttpClient.newHttpClient();
        gate.arm(0); // the first request holds the decode thread at its first token
        List<CompletableFuture<HttpResponse<String>>> fillers = new ArrayList<>();
        try {
            fillers.add(send(http, key));
            gate.awaitHeld();
            // four requests of 32 pages each (481 prompt tokens: 31 pages, plus one of headroom) fill the 128-page
            // decode pool; two more wait in the queue of two
            for (int i = 0; i < 5; i++) {
                fillers.add(send(http, key));
            }
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
            while (host.served().orElseThrow().engine().queued() < 2 && System.nanoTime() < deadline) {
                Thread.sleep(10);
            }
            assertThat(host.served().orElseThrow().engine().queued()).isEqualTo(2);
            error(completion(key, Map.of("model", MODEL, "prompt", "Once", "max_tokens", 500)),
                    HttpStatus.SERVICE_UNAVAILABLE, "overloaded");
            completion(key, Map.of("model", MODEL, "prompt", "Once", "max_tokens", 500)).exchange()
                    .expectHeader().exists("Retry-After");
        } finally {
            gate.release();
        }
        for (CompletableFuture<HttpResponse<String>> f : fillers) {
            assertThat(f.get(120, TimeUnit.SECONDS).statusCode()).isEqualTo(200);
        }
    }

    private CompletableFuture<HttpResponse<String>> send(HttpClient http, String key) {
        HttpRequest request = HttpRequest.newBuilder(URI.create(baseUrl() + "/v1/completions"))
                .header("Authorization", "Bearer " + key).header("Content-Type", "application/json")
                .POST(HttpRequest.BodyPublishers.ofString("{\"model\":\"stories260K\",\"prompt\":"
                        + java.util.Collections.nCopies(481, 300) + ",\"max_tokens\":31,\"temperature\":0}"))
                .build();
        return http.sendAsync(request, HttpResponse.BodyHandlers.ofString());
    }
}
