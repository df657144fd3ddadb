package dev.pagewarden.platform.adminport;

import dev.pagewarden.adminui.users.AdminRole;
import org.junit.jupiter.api.Test;
import org.springframework.http.MediaType;

import java.util.Map;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * A new tenant starts with the configured default limits (8 concurrent requests and 100,000 tokens a minute
 * unless the operator sets others), through the admin API and the admin UI alike, and the tenants page says so.
 */
class TenantDefaultLimitsTest extends AdminUiTest {
    TenantDefaultLimitsTest() {
        super("tl-");
    }

    @Test
    void newTenantsStartWithTheDefaultLimits() {
        Map<?, ?> created = admin().post().uri("/admin/api/tenants").contentType(MediaType.APPLICATION_JSON)
                .bodyValue(Map.of("name", "limited-by-default")).exchange().expectStatus().isCreated()
                .expectBody(Map.class).returnResult().getResponseBody();
        Map<?, ?> limits = (Map<?, ?>) created.get("limits");
        assertThat(limits.get("max_concurrent")).isEqualTo(8);
        assertThat(limits.get("tokens_per_minute")).isEqualTo(100_000);

        UiSession admin = as(AdminRole.ADMIN);
        String list = admin.get("/admin/tenants").getResponseBody();
        assertThat(list).contains("id=\"tenant-defaults\"").contains("<strong>8</strong>").contains("<strong>100000</strong>");
        String path = UiSession.location(admin.post("/admin/tenants", "name", "ui-limited-by-default"));
        String page = admin.get(path).getResponseBody();
        assertThat(page).contains("value=\"8\"").contains("value=\"100000\"");
    }
}
