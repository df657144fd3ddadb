package dev.pagewarden.platform.ops;

import dev.pagewarden.platform.testing.PlatformTest;
import org.junit.jupiter.api.Test;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.http.MediaType;
import org.springframework.jdbc.core.simple.JdbcClient;

import java.util.List;
import java.util.Map;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The ids tenants see are opaque: random base62, never the engine's sequential id; the audit
 * endpoint finds a request by that id (with or without its prefix), and only for its own tenant.
 */
class PublicRequestIdsTest extends PlatformTest {
    @Autowired
    JdbcClient jdbc;

    private Map<?, ?> complete(String key, String path, Map<String, Object> body) {
        return as(key).post().uri(path).contentType(MediaType.APPLICATION_JSON).bodyValue(body).exchange()
                .expectStatus().isOk().expectBody(Map.class).returnResult().getResponseBody();
    }

    @Test
    void idsAreOpaqueAndTheAuditFindsThem() {
        String key = newTenant("opaque-ids")[1];
        Map<String, Object> prompt = Map.of("model", MODEL, "prompt", "Once upon a time", "max_tokens", 4, "temperature", 0);
        String first = (String) complete(key, "/v1/completions", prompt).get("id");
        String second = (String) complete(key, "/v1/completions", prompt).get("id");
        String chat = (String) complete(key, "/v1/chat/completions", Map.of("model", MODEL, "max_tokens", 4,
                "messages", List.of(Map.of("role", "user", "content", "hi")))).get("id");

        assertThat(first).matches("cmpl-[0-9A-Za-z]{24}");
        assertThat(second).matches("cmpl-[0-9A-Za-z]{24}").isNotEqualTo(first);
        assertThat(chat).matches("chatcmpl-[0-9A-Za-z]{24}");
        // nothing of the engine's sequence shows: the row keeps the public id beside the engine's own
        Map<String, Object> row = jdbc.sql("SELECT id, public_id FROM requests WHERE public_id = ?")
                .param(second.substring(5)).query().singleRow();
        assertThat(second).doesNotContain(String.valueOf(row.get("id")));
        // ... and the prefix the tenant saw, so that pages and notices show the id exactly as the tenant holds it
        for (String shown : new String[]{second, chat}) {
            String prefix = shown.substring(0, shown.indexOf('-') + 1);
            assertThat(jdbc.sql("SELECT public_prefix FROM requests WHERE public_id = ?").param(shown.substring(prefix.length()))
                    .query(String.class).single()).isEqualTo(prefix);
        }

        for (String asked : new String[]{first, first.substring(5)}) {
            Map<?, ?> audit = as(key).get().uri("/v1/audit/requests/" + asked).exchange().expectStatus().isOk()
                    .expectBody(Map.class).returnResult().getResponseBody();
            assertThat(audit.get("id")).isEqualTo(asked);
            assertThat(audit.get("status")).isEqualTo("FINISHED");
        }
        as(key).get().uri("/v1/audit/requests/" + chat).exchange().expectStatus().isOk();

        String stranger = newTenant("opaque-stranger")[1];
        as(stranger).get().uri("/v1/audit/requests/" + first).exchange().expectStatus().isNotFound()
                .expectBody().jsonPath("$.error.code").isEqualTo("request_not_found");
        as(key).get().uri("/v1/audit/requests/cmpl-" + "A".repeat(24)).exchange().expectStatus().isNotFound();
    }

    @Test
    void aStreamCarriesTheSameOpaqueIdInEveryChunk() {
        String key = newTenant("opaque-stream")[1];
        String raw = as(key).post().uri("/v1/completions").contentType(MediaType.APPLICATION_JSON)
                .bodyValue(Map.of("model", MODEL, "prompt", "Once", "max_tokens", 4, "stream", true)).exchange()
                .expectStatus().isOk().expectBody(String.class).returnResult().getResponseBody();
        List<String> ids = sseData(raw).stream().filter(d -> d.startsWith("{"))
                .map(d -> d.replaceAll(".*\"id\":\"([^\"]+)\".*", "$1")).distinct().toList();
        assertThat(ids).hasSize(1);
        assertThat(ids.getFirst()).matches("cmpl-[0-9A-Za-z]{24}");
    }
}
