package dev.pagewarden.platform.ops;

import dev.pagewarden.platform.testing.PlatformTest;
import org.junit.jupiter.api.Test;
import org.springframework.test.web.reactive.server.WebTestClient;

import java.time.Duration;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Actuator answers only on the management port: probes without credentials (status only), details
 * and metrics with the admin token or the scrape token, nothing at all on the API port.
 */
class ManagementPortTest extends PlatformTest {
    private WebTestClient management() {
        return client(managementUrl(), Duration.ofSeconds(30));
    }

    private WebTestClient management(String token) {
        return management().mutate().defaultHeader("Authorization", "Bearer " + token).build();
    }

    @Test
    void theManagementPortIsNotTheApiPort() {
        assertThat(env.getProperty("local.management.port")).isNotNull().isNotEqualTo(env.getProperty("local.server.port"));
    }

    @Test
    void probesAnswerWithoutCredentialsAndShowOnlyTheStatus() {
        for (String probe : new String[]{"/actuator/health/liveness", "/actuator/health/readiness", "/actuator/health"}) {
            String body = management().get().uri(probe).exchange().expectStatus().isOk()
                    .expectBody(String.class).returnResult().getResponseBody();
            assertThat(body).as(probe).contains("\"status\":\"UP\"").doesNotContain("components").doesNotContain("details");
        }
    }

    @Test
    void detailsNeedTheAdminOrTheScrapeToken() {
        for (String token : new String[]{ADMIN_TOKEN, METRICS_TOKEN}) {
            assertThat(management(token).get().uri("/actuator/health/readiness").exchange().expectStatus().isOk()
                    .expectBody(String.class).returnResult().getResponseBody()).contains("\"components\"").contains("engine");
        }
    }

    @Test
    void metricsNeedTheAdminOrTheScrapeToken() {
        for (String path : new String[]{"/actuator/prometheus", "/actuator/metrics", "/actuator/info"}) {
            String refused = management().get().uri(path).exchange().expectStatus().isUnauthorized()
                    .expectBody(String.class).returnResult().getResponseBody();
            assertThat(refused).as(path).contains("\"error\"").contains("invalid_api_key");
            management("not-the-token-at-all-000").get().uri(path).exchange().expectStatus().isUnauthorized();
        }
        assertThat(management(METRICS_TOKEN).get().uri("/actuator/prometheus").exchange().expectStatus().isOk()
                .expectBody(String.class).returnResult().getResponseBody()).contains("engine_context_window_tokens")
                // every pool's pages by state, read from that pool (a fresh platform: all free, none leased)
                .containsPattern("kv_pool_pages\\{[^}]*state=\"free\",worker=\"prefill-0\"\\} [1-9]")
                .containsPattern("kv_pool_pages\\{[^}]*state=\"free\",worker=\"decode-0\"\\} [1-9]")
                .containsPattern("kv_pool_capacity_tokens\\{[^}]*worker=\"decode-0\"\\} [1-9]");
        management(ADMIN_TOKEN).get().uri("/actuator/prometheus").exchange().expectStatus().isOk();
        management(METRICS_TOKEN).get().uri("/actuator/metrics").exchange().expectStatus().isOk();
    }

    @Test
    void theApiPortServesNoActuator() {
        for (String path : new String[]{"/actuator", "/actuator/health", "/actuator/health/readiness", "/actuator/prometheus",
                "/actuator/metrics", "/actuator/info"}) {
            client().get().uri(path).exchange().expectStatus().isNotFound();
            admin().get().uri(path).exchange().expectStatus().isNotFound();
        }
    }
}
