package dev.pagewarden.platform;

import dev.pagewarden.platform.testing.PlatformTest;
import org.junit.jupiter.api.Test;
import org.springframework.http.MediaType;
import org.springframework.test.web.reactive.server.WebTestClient;

import java.util.HashMap;
import java.util.List;
import java.util.Map;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The prefix cache through the API: scoped to the tenant, narrowed by prompt_cache_key / cache_salt, switchable off
 * per tenant, reported as usage.prompt_tokens_details.cached_tokens; a hit answers what a miss answers.
 */
class PromptCacheApiTest extends PlatformTest {
    /** Long enough for several full 16-token pages. */
    private static final String PROMPT = "Once upon a time, there was a little girl named Lily. She loved to play outside "
            + "in the park with her friends. One day, she saw a big red ball under a tree and ran to get it. Her mom";

    private Map<?, ?> complete(String key, Map<String, Object> extra) {
        Map<String, Object> body = new HashMap<>(Map.of("model", MODEL, "prompt", PROMPT, "max_tokens", 12,
                "temperature", 0));
        body.putAll(extra);
        return as(key).post().uri("/v1/completions").contentType(MediaType.APPLICATION_JSON).bodyValue(body)
                .exchange().expectStatus().isOk().expectBody(Map.class).returnResult().getResponseBody();
    }

    private static int cached(Map<?, ?> response) {
        Map<?, ?> details = (Map<?, ?>) ((Map<?, ?>) response.get("usage")).get("prompt_tokens_details");
        return (Integer) details.get("cached_tokens");
    }

    private static Object text(Map<?, ?> response) {
        return ((Map<?, ?>) ((List<?>) response.get("choices")).getFirst()).get("text");
    }

    @Test
    void theSameTenantHitsItsOwnPrefixAndAnotherTenantNeverDoes() throws Exception {
        String a = newTenant("cache-a")[1];
        String b = newTenant("cache-b")[1];
        Map<?, ?> first = complete(a, Map.of());
        assertThat(cached(first)).isZero();
        Map<?, ?> second = complete(a, Map.of());
        assertThat(cached(second)).isPositive().isLessThan((Integer) ((Map<?, ?>) second.get("usage")).get("prompt_tokens"));
        assertThat(text(second)).isEqualTo(text(first));
        // the audit lists the reused pages with their writer and verifies them against the lineage
        Map<?, ?> writer = awaitVerified(a, (String) first.get("id"));
        Map<?, ?> audit = awaitVerified(a, (String) second.get("id"));
        List<?> reused = (List<?>) audit.get("reused_prefix_pages");
        assertThat(reused).hasSize(cached(second) / 16);
        assertThat(reused).allSatisfy(r -> assertThat(((Number) ((Map<?, ?>) r).get("writer_request")).longValue())
                .isEqualTo(((Number) writer.get("request_id")).longValue()));
        assertThat((List<?>) writer.get("reused_prefix_pages")).isEmpty();
        // tenant B sends tenant A's exact prompt: nothing of A's is reused
        Map<?, ?> other = complete(b, Map.of());
        assertThat(cached(other)).isZero();
        assertThat(text(other)).isEqualTo(text(first));
        // a prompt cache key (or vLLM's cache_salt) narrows the scope: a fresh key starts cold, then hits
        assertThat(cached(complete(a, Map.of("prompt_cache_key", "conversation-1")))).isZero();
        assertThat(cached(complete(a, Map.of("prompt_cache_key", "conversation-1")))).isPositive();
        assertThat(cached(complete(a, Map.of("cache_salt", "conversation-1")))).isZero();
    }

    /** The receipt is "pending" until the request's lineage events have been shipped; then "ok". */
    private Map<?, ?> awaitVerified(String key, String id) throws InterruptedException {
        long deadline = System.nanoTime() + java.util.concurrent.TimeUnit.SECONDS.toNanos(60);
        while (true) {
            Map<?, ?> audit = as(key).get().uri("/v1/audit/requests/" + id).exchange().expectStatus().isOk()
                    .expectBody(Map.class).returnResult().getResponseBody();
            String status = (String) ((Map<?, ?>) audit.get("receipt_verification")).get("status");
            if (!status.equals("pending") || System.nanoTime() > deadline) {
                assertThat(status).as("%s", audit.get("receipt_verification")).isEqualTo("ok");
                return audit;
            }
            Thread.sleep(50); // polling for the shipper, not timing anything
        }
    }

    @Test
    void aTenantWithTheCacheSwitchedOffNeverHits() {
        String[] c = newTenant("cache-off");
        Map<?, ?> described = admin().put().uri("/admin/api/tenants/" + c[0] + "/prefix-cache")
                .contentType(MediaType.APPLICATION_JSON).bodyValue(Map.of("enabled", false)).exchange()
                .expectStatus().isOk().expectBody(Map.class).returnResult().getResponseBody();
        assertThat(described.get("prefix_cache")).isEqualTo(false);
        assertThat(cached(complete(c[1], Map.of()))).isZero();
        assertThat(cached(complete(c[1], Map.of()))).isZero();
        admin().put().uri("/admin/api/tenants/" + c[0] + "/prefix-cache").contentType(MediaType.APPLICATION_JSON)
                .bodyValue(Map.of("enabled", "no")).exchange().expectStatus().isBadRequest()
                .expectBody().jsonPath("$.error.param").isEqualTo("enabled");
    }

    @Test
    void badCacheKeysAreRefusedNamingTheField() {
        String key = newTenant("cache-keys")[1];
        for (Map.Entry<String, Object> bad : List.of(Map.entry("prompt_cache_key", (Object) 7),
                Map.entry("prompt_cache_key", (Object) ""), Map.entry("cache_salt", (Object) "x".repeat(257)),
                Map.entry("cache_salt", (Object) List.of("a")))) {
            for (String uri : List.of("/v1/completions", "/v1/chat/completions")) {
                Map<String, Object> body = new HashMap<>(Map.of("model", MODEL, "max_tokens", 2));
                if (uri.contains("chat")) {
                    body.put("messages", List.of(Map.of("role", "user", "content", "hi")));
                } else {
                    body.put("prompt", "hi");
                }
                body.put(bad.getKey(), bad.getValue());
                WebTestClient.BodyContentSpec answer = as(key).post().uri(uri).contentType(MediaType.APPLICATION_JSON)
                        .bodyValue(body).exchange().expectStatus().isBadRequest().expectBody();
                answer.jsonPath("$.error.param").isEqualTo(bad.getKey());
            }
        }
    }

    @Test
    void chatUsageCarriesCachedTokensStreamedAndNot() {
        String key = newTenant("cache-chat")[1];
        Map<String, Object> request = new HashMap<>(Map.of("model", MODEL, "max_tokens", 6, "temperature", 0,
                "messages", List.of(Map.of("role", "user", "content", PROMPT))));
        Map<?, ?> body = as(key).post().uri("/v1/chat/completions").contentType(MediaType.APPLICATION_JSON)
                .bodyValue(request).exchange().expectStatus().isOk().expectBody(Map.class).returnResult().getResponseBody();
        assertThat(cached(body)).isZero();
        request.put("stream", true);
        request.put("stream_options", Map.of("include_usage", true));
        Map<?, ?> usage = null;
        String raw = as(key).post().uri("/v1/chat/completions").contentType(MediaType.APPLICATION_JSON).bodyValue(request)
                .exchange().expectStatus().isOk().expectBody(String.class).returnResult().getResponseBody();
        for (String e : sseData(raw)) {
            if (!e.equals("[DONE]") && ((List<?>) Json.parse(e).get("choices")).isEmpty()) {
                usage = Json.parse(e);
            }
        }
        assertThat(usage).isNotNull();
        assertThat(cached(usage)).isPositive();
    }
}
