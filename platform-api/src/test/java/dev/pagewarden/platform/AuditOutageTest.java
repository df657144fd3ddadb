package dev.pagewarden.platform;

import dev.pagewarden.db.lineage.JournalingLineageSink;
import dev.pagewarden.platform.testing.PlatformTestBase;
import dev.pagewarden.db.embedded.EmbeddedPostgresServer;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.MethodOrderer;
import org.junit.jupiter.api.Order;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestMethodOrder;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.http.MediaType;
import org.springframework.jdbc.core.simple.JdbcClient;
import org.springframework.test.annotation.DirtiesContext;
import org.springframework.test.context.DynamicPropertyRegistry;
import org.springframework.test.context.DynamicPropertySource;
import org.springframework.test.context.TestPropertySource;

import java.nio.file.Path;
import java.util.Map;

import static dev.pagewarden.platform.DisconnectTest.awaitUntil;
import static org.assertj.core.api.Assertions.assertThat;

/**
 * The audit path under stress. PostgreSQL goes away: the engine keeps serving from
 * the local journal until the journal reaches its cap, then refuses new work with 503
 * audit_backpressure (fail closed: nothing unaudited) and readiness goes down; PostgreSQL comes
 * back: every journaled event arrives exactly once and admission reopens.
 */
@TestMethodOrder(MethodOrderer.OrderAnnotation.class)
@DirtiesContext(classMode = DirtiesContext.ClassMode.AFTER_CLASS)
@TestPropertySource(properties = {"pagewarden.audit.journal-cap=32KB"})
class AuditOutageTest extends PlatformTestBase {
    private static final Path HOME = tempHome();
    private static EmbeddedPostgresServer restarted;

    @Autowired
    EmbeddedPostgresServer postgres;
    @Autowired
    JournalingLineageSink lineage;
    @Autowired
    JdbcClient jdbc;

    @DynamicPropertySource
    static void home(DynamicPropertyRegistry registry) {
        registry.add("pagewarden.home", HOME::toString);
    }

    @AfterAll
    static void stopRestarted() throws Exception {
        if (restarted != null) {
            restarted.close();
        }
    }

    @Test
    @Order(1)
    void databaseOutageFillsTheJournalThenAdmissionPausesThenEverythingArrivesOnce() throws Exception {
        String key = newTenant("during-outage")[1];
        // one request while the database is up: the key is verified (and remembered) then
        as(key).post().uri("/v1/completions").contentType(MediaType.APPLICATION_JSON)
                .bodyValue(Map.of("model", MODEL, "prompt", "Once", "max_tokens", 2)).exchange().expectStatus().isOk();
        int port = postgres.port();
        postgres.close();

        int served = 0;
        boolean refused = false;
        for (int i = 0; i < 500 && !refused; i++) {
            var result = as(key).post().uri("/v1/completions").contentType(MediaType.APPLICATION_JSON)
                    .bodyValue(Map.of("model", MODEL, "prompt", "Once upon a time", "max_tokens", 16))
                    .exchange().returnResult(String.class);
            if (result.getStatus().value() == 200) {
                served++;
            } else {
                assertThat(result.getStatus().value()).isEqualTo(503);
                assertThat(result.getResponseBodyContent()).isNotNull();
                assertThat(new String(result.getResponseBodyContent())).contains("audit_backpressure");
                assertThat(result.getResponseHeaders().getFirst("Retry-After")).isNotNull();
                refused = true;
            }
        }
        assertThat(served).as("the engine kept serving while PostgreSQL was down").isPositive();
        assertThat(refused).as("admission paused at the journal cap").isTrue();
        client(managementUrl(), java.time.Duration.ofSeconds(30)).get().uri("/actuator/health/readiness").exchange().expectStatus().isEqualTo(503);

        restarted = EmbeddedPostgresServer.start(EmbeddedPostgresServer.Config.defaults()
                .withDataDirectory(HOME.resolve("pg")).withPort(port));
        long emitted = lineage.emitted();
        awaitUntil(() -> {
            try {
                return jdbc.sql("SELECT count(*) FROM kv_lineage").query(Long.class).single() >= emitted;
            } catch (RuntimeException e) {
                return false; // the pool is still reconnecting
            }
        }, "every journaled event to be shipped after the database came back");
        long rows = jdbc.sql("SELECT count(*) FROM kv_lineage").query(Long.class).single();
        long distinct = jdbc.sql("SELECT count(DISTINCT event_id) FROM kv_lineage").query(Long.class).single();
        assertThat(distinct).as("no duplicates").isEqualTo(rows);
        awaitUntil(() -> as(key).post().uri("/v1/completions").contentType(MediaType.APPLICATION_JSON)
                .bodyValue(Map.of("model", MODEL, "prompt", "Once", "max_tokens", 4))
                .exchange().returnResult(String.class).getStatus().value() == 200, "admission to reopen");
        client(managementUrl(), java.time.Duration.ofSeconds(30)).get().uri("/actuator/health/readiness").exchange().expectStatus().isOk();
    }
}
