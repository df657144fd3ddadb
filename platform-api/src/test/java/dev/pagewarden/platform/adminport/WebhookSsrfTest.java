package dev.pagewarden.platform.adminport;

import dev.pagewarden.incident.disclosure.WebhookClient;
import dev.pagewarden.incident.disclosure.WebhookProperties;
import dev.pagewarden.platform.testing.PlatformTest;
import org.junit.jupiter.api.Test;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.http.MediaType;
import org.springframework.jdbc.core.simple.JdbcClient;

import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.UUID;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The tenant webhook cannot be aimed at the platform itself or anything else internal: refused at
 * registration with the reason ({@code param: url}), and refused again at delivery, so the server
 * no longer POSTs to its own loopback admin API.
 */
class WebhookSsrfTest extends PlatformTest {
    @Autowired
    WebhookProperties webhooks;
    @Autowired
    JdbcClient jdbc;

    private String port() {
        return env.getProperty("local.server.port");
    }

    @Test
    void registrationRefusesInternalTargetsNamingTheReason() {
        String key = newTenant("hooked-" + UUID.randomUUID())[1];
        Map<String, String> refused = Map.ofEntries(
                Map.entry("http://127.0.0.1:" + port() + "/admin/api/tenants", "must use https"),
                Map.entry("https://127.0.0.1:" + port() + "/admin/api/tenants", "loopback address (127.0.0.1)"),
                Map.entry("https://localhost:" + port() + "/admin/api/tenants", "loopback host"),
                Map.entry("https://2130706433/", "loopback address (127.0.0.1)"),
                Map.entry("https://0x7f.1/", "loopback address (127.0.0.1)"),
                Map.entry("https://[::1]/", "loopback address"),
                Map.entry("https://[::ffff:10.0.0.1]/", "private address (10.0.0.1)"),
                Map.entry("https://169.254.169.254/latest/meta-data/", "cloud metadata address"),
                Map.entry("https://192.168.0.1/", "private address"),
                Map.entry("https://[fe80::1]/", "link-local address"),
                Map.entry("https://admin:secret@hooks.example.com/", "user name or password"),
                Map.entry("ftp://hooks.example.com/", "absolute https URL"));
        refused.forEach((url, reason) -> as(key).put().uri("/v1/webhook").contentType(MediaType.APPLICATION_JSON)
                .bodyValue(Map.of("url", url)).exchange().expectStatus().isBadRequest()
                .expectBody()
                .jsonPath("$.error.param").isEqualTo("url")
                .jsonPath("$.error.code").isEqualTo("invalid_request")
                .jsonPath("$.error.message").value(String.class, m -> assertThat(m).as(url).contains(reason)));
        // nothing was stored; a public https URL is accepted
        assertThat(jdbc.sql("SELECT count(*) FROM tenant_webhooks WHERE url LIKE '%127.0.0.1%' OR url LIKE '%localhost%'")
                .query(Long.class).single()).isZero();
        as(key).put().uri("/v1/webhook").contentType(MediaType.APPLICATION_JSON)
                .bodyValue(Map.of("url", "https://hooks.example.com/pagewarden")).exchange().expectStatus().isOk()
                .expectBody().jsonPath("$.secret").value(String.class, s -> assertThat(s).startsWith("whsec_"));
    }

    @Test
    void deliveryNeverReachesTheOwnAdminApi() throws Exception {
        assertThat(webhooks.allowHttp()).isFalse();
        assertThat(webhooks.allowPrivateAddresses()).isFalse();
        // a probe that creates a tenant if it ever lands: the admin API with the admin token
        Map<String, String> headers = Map.of("Authorization", "Bearer " + ADMIN_TOKEN);
        String probe = "ssrf-probe-" + UUID.randomUUID();
        String body = "{\"name\":\"" + probe + "\"}";
        List<String> targets = List.of("http://127.0.0.1:" + port() + "/admin/api/tenants",
                "http://localhost:" + port() + "/admin/api/tenants", "http://[::1]:" + port() + "/admin/api/tenants",
                "http://2130706433:" + port() + "/admin/api/tenants");
        // even with plain http allowed, the loopback target is refused before any connection
        try (WebhookClient client = new WebhookClient(new WebhookProperties(true, false, Duration.ofSeconds(2),
                Duration.ofSeconds(5)), WebhookClient.Resolver.SYSTEM)) {
            for (String target : targets) {
                WebhookClient.Outcome outcome = client.post(target, headers, body);
                assertThat(outcome.delivered()).as(target).isFalse();
                assertThat(outcome.permanent()).as(target).isTrue();
                assertThat(outcome.error()).as(target).startsWith("refused: 'url' points to");
            }
        }
        assertThat(tenantsNamed(probe)).isZero();
        // the probe is real: where an operator allows private targets, the same call does land
        try (WebhookClient open = new WebhookClient(new WebhookProperties(true, true, Duration.ofSeconds(2),
                Duration.ofSeconds(30)), WebhookClient.Resolver.SYSTEM)) {
            assertThat(open.post(targets.getFirst(), headers, body).status()).isEqualTo(201);
        }
        assertThat(tenantsNamed(probe)).isEqualTo(1);
    }

    private long tenantsNamed(String name) {
        return jdbc.sql("SELECT count(*) FROM tenants WHERE display_name = :n").param("n", name).query(Long.class).single();
    }
}
