package dev.pagewarden.platform.tenant;

import dev.pagewarden.platform.testing.PlatformTest;
import org.junit.jupiter.api.Test;
import org.springframework.http.MediaType;
import org.springframework.test.web.reactive.server.WebTestClient;

import java.util.Map;

/**
 * Keys and limits are served from a cache, yet an operator's change on this replica takes effect with the
 * very next request: a key that was just used (so cached) is refused right after its revocation, and new
 * limits apply right after they are set.
 */
class KeyCacheInvalidationTest extends PlatformTest {

    private WebTestClient.ResponseSpec complete(String key, int maxTokens) {
        return as(key).post().uri("/v1/completions").contentType(MediaType.APPLICATION_JSON)
                .bodyValue(Map.of("model", MODEL, "prompt", "hi", "max_tokens", maxTokens)).exchange();
    }

    @Test
    void aCachedKeyIsRefusedRightAfterItsRevocation() {
        String[] tenant = newTenant("revoked-while-cached");
        complete(tenant[1], 2).expectStatus().isOk();
        admin().delete().uri("/admin/api/tenants/" + tenant[0] + "/keys/" + tenant[1].substring(0, 13)).exchange()
                .expectStatus().isOk();
        complete(tenant[1], 2).expectStatus().isUnauthorized()
                .expectBody().jsonPath("$.error.code").isEqualTo("invalid_api_key");
    }

    @Test
    void newLimitsApplyToACachedKeyRightAway() {
        String[] tenant = newTenant("limited-while-cached");
        complete(tenant[1], 100).expectStatus().isOk();
        admin().put().uri("/admin/api/tenants/" + tenant[0] + "/limits").contentType(MediaType.APPLICATION_JSON)
                .bodyValue(Map.of("max_context", 50)).exchange().expectStatus().isOk();
        complete(tenant[1], 100).expectStatus().isBadRequest()
                .expectBody().jsonPath("$.error.code").isEqualTo("context_length_exceeded");
        admin().put().uri("/admin/api/tenants/" + tenant[0] + "/limits").contentType(MediaType.APPLICATION_JSON)
                .bodyValue(java.util.Collections.singletonMap("max_context", null)).exchange().expectStatus().isOk();
        complete(tenant[1], 100).expectStatus().isOk();
    }
}
