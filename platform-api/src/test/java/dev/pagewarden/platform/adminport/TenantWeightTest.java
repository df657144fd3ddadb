package dev.pagewarden.platform.adminport;

import dev.pagewarden.adminui.users.AdminRole;
import org.junit.jupiter.api.Test;
import org.springframework.http.HttpStatus;
import org.springframework.http.MediaType;

import java.util.List;
import java.util.Map;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * A tenant's fair-admission weight: set by an admin with its limits, 400 naming the field when it is not 1..100,
 * stored, carried to the engine with each request; the tenant page shows it with the tenant's queue and served tokens.
 */
class TenantWeightTest extends AdminUiTest {
    TenantWeightTest() {
        super("tw-");
    }

    private org.springframework.test.web.reactive.server.WebTestClient.ResponseSpec put(String tenant, Map<String, ?> body) {
        return admin().put().uri("/admin/api/tenants/" + tenant + "/limits").contentType(MediaType.APPLICATION_JSON)
                .bodyValue(body).exchange();
    }

    @Test
    void aBadWeightIs400NamingTheField() {
        String id = newTenant("weighed-badly")[0];
        for (Object bad : List.of(0, 101, -1, "3", 2.5, true)) {
            put(id, Map.of("weight", bad)).expectStatus().isEqualTo(HttpStatus.BAD_REQUEST).expectBody()
                    .jsonPath("$.error.param").isEqualTo("weight")
                    .jsonPath("$.error.code").isEqualTo("invalid_request")
                    .jsonPath("$.error.message").isEqualTo("weight must be an integer from 1 to 100, got " + bad);
        }
        assertThat(jdbc.sql("SELECT weight FROM tenants WHERE id = ?").param(id).query(Integer.class).single()).isEqualTo(1);
    }

    @Test
    void theWeightIsStoredShownAndServedWith() {
        String[] tenant = newTenant("weighed");
        String id = tenant[0];
        Map<?, ?> set = put(id, Map.of("weight", 7, "max_concurrent", 3)).expectStatus().isOk()
                .expectBody(Map.class).returnResult().getResponseBody();
        assertThat(((Map<?, ?>) set.get("limits")).get("weight")).isEqualTo(7);
        assertThat(jdbc.sql("SELECT weight FROM tenants WHERE id = ?").param(id).query(Integer.class).single()).isEqualTo(7);
        Map<?, ?> read = admin().get().uri("/admin/api/tenants/" + id).exchange().expectStatus().isOk()
                .expectBody(Map.class).returnResult().getResponseBody();
        assertThat(((Map<?, ?>) read.get("limits")).get("weight")).isEqualTo(7);

        as(tenant[1]).post().uri("/v1/completions").contentType(MediaType.APPLICATION_JSON)
                .bodyValue(Map.of("model", MODEL, "prompt", "Once upon a time", "max_tokens", 3)).exchange()
                .expectStatus().isOk();
        String page = as(AdminRole.ADMIN).get("/admin/tenants/" + id).getResponseBody();
        assertThat(page).contains("name=\"weight\" value=\"7\"");
        String share = page.substring(page.indexOf("id=\"share\""));
        // weight 7, nobody waiting, and at least the prompt and the 3 tokens generated served
        assertThat(share).containsPattern("<td>7</td><td>0</td><td>([4-9]|\\d\\d+)</td>");

        // a PUT sets every limit: one without the weight puts it back to the default
        put(id, Map.of("max_concurrent", 3)).expectStatus().isOk();
        assertThat(jdbc.sql("SELECT weight FROM tenants WHERE id = ?").param(id).query(Integer.class).single()).isEqualTo(1);
    }
}
