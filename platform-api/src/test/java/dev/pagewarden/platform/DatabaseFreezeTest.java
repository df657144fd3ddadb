package dev.pagewarden.platform;

import dev.pagewarden.db.embedded.EmbeddedPostgresServer;
import dev.pagewarden.db.lineage.JournalingLineageSink;
import dev.pagewarden.platform.testing.PlatformTestBase;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.Test;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.http.MediaType;
import org.springframework.jdbc.core.simple.JdbcClient;
import org.springframework.test.annotation.DirtiesContext;
import org.springframework.test.context.DynamicPropertyRegistry;
import org.springframework.test.context.DynamicPropertySource;
import org.springframework.test.web.reactive.server.EntityExchangeResult;
import org.springframework.test.web.reactive.server.WebTestClient;
import tools.jackson.databind.json.JsonMapper;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;

import static dev.pagewarden.platform.DisconnectTest.awaitUntil;
import static org.assertj.core.api.Assertions.assertThat;

/**
 * A frozen PostgreSQL - SIGSTOP on the postmaster and every backend: connections stay open, nothing answers -
 * must not stall serving. While it is frozen a key used before keeps working from the cache, a key never seen
 * answers 503 auth_unavailable, the admin API answers 503 database_unavailable, readiness answers 200 saying the
 * audit path is degraded; every answer comes within a short client timeout, never a hang. After SIGCONT
 * everything recovers and the lineage journaled meanwhile reaches the database.
 */
@DirtiesContext(classMode = DirtiesContext.ClassMode.AFTER_CLASS)
class DatabaseFreezeTest extends PlatformTestBase {
    private static final Path HOME = tempHome();
    private static final JsonMapper JSON = JsonMapper.builder().build();
    /** Processes this test stopped; resumed in any case, so a failure never leaves a frozen server behind. */
    private static final List<Long> STOPPED = new CopyOnWriteArrayList<>();

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
    static void thawAlways() throws Exception {
        thaw();
    }

    @Test
    void frozenDatabaseDoesNotStallServingAndEverythingRecovers() throws Exception {
        String key = newTenant("used-before")[1];
        String unseen = newTenant("never-used")[1];
        assertThat(complete(as(key)).getStatus().value()).isEqualTo(200); // verified now, so cached

        freeze();
        long emitted;
        try {
            // a key used before: served from the cache, answered well within the client's short timeout
            for (int i = 0; i < 3; i++) {
                EntityExchangeResult<byte[]> ok = complete(quick(3).mutate()
                        .defaultHeader("Authorization", "Bearer " + key).build());
                assertThat(ok.getStatus().value()).as(body(ok)).isEqualTo(200);
                assertThat(body(ok)).contains("\"choices\"");
            }

            // a key never seen: cannot be verified now - 503 auth_unavailable with Retry-After, not 401, no hang
            for (int i = 0; i < 2; i++) {
                EntityExchangeResult<byte[]> refused = complete(quick(10).mutate()
                        .defaultHeader("Authorization", "Bearer " + unseen).build());
                assertThat(refused.getStatus().value()).as(body(refused)).isEqualTo(503);
                assertThat(error(refused).get("code")).isEqualTo("auth_unavailable");
                assertThat(refused.getResponseHeaders().getFirst("Retry-After")).isNotNull();
            }

            // the admin API needs the database: 503 database_unavailable with Retry-After, not 500, no hang
            EntityExchangeResult<byte[]> admin = quick(10).post().uri("/admin/api/tenants")
                    .header("Authorization", "Bearer " + ADMIN_TOKEN).contentType(MediaType.APPLICATION_JSON)
                    .bodyValue(Map.of("name", "during-freeze")).exchange().expectBody().returnResult();
            assertThat(admin.getStatus().value()).as(body(admin)).isEqualTo(503);
            assertThat(error(admin).get("code")).isEqualTo("database_unavailable");
            assertThat(admin.getResponseHeaders().getFirst("Retry-After")).isNotNull();

            // readiness answers at once and stays up while the journal absorbs the lineage; details say degraded
            awaitUntil(() -> {
                EntityExchangeResult<byte[]> ready = client(managementUrl(), Duration.ofSeconds(2)).get()
                        .uri("/actuator/health/readiness").header("Authorization", "Bearer " + ADMIN_TOKEN).exchange()
                        .expectBody().returnResult();
                return ready.getStatus().value() == 200 && "degraded".equals(auditDetails(ready).get("audit"));
            }, "readiness 200 with audit degraded");

            // and requests keep flowing, their lineage going into the journal
            for (int i = 0; i < 3; i++) {
                assertThat(complete(quick(3).mutate().defaultHeader("Authorization", "Bearer " + key).build())
                        .getStatus().value()).isEqualTo(200);
            }
            emitted = lineage.emitted();
        } finally {
            thaw();
        }

        awaitUntil(() -> admin().post().uri("/admin/api/tenants").contentType(MediaType.APPLICATION_JSON)
                .bodyValue(Map.of("name", "after-freeze")).exchange().expectBody().returnResult().getStatus().value() == 201,
                "tenant creation to work again");
        awaitUntil(() -> jdbc.sql("SELECT count(*) FROM kv_lineage").query(Long.class).single() >= emitted,
                "the lineage journaled during the freeze to reach the database");
        awaitUntil(() -> complete(as(unseen)).getStatus().value() == 200, "the key never seen to be verified");
        awaitUntil(() -> {
            EntityExchangeResult<byte[]> ready = client(managementUrl(), Duration.ofSeconds(30)).get()
                    .uri("/actuator/health/readiness").header("Authorization", "Bearer " + ADMIN_TOKEN).exchange()
                    .expectBody().returnResult();
            return ready.getStatus().value() == 200 && "ok".equals(auditDetails(ready).get("audit"));
        }, "readiness to say the audit path is ok again");
    }

    private WebTestClient quick(int seconds) {
        return client(baseUrl(), Duration.ofSeconds(seconds));
    }

    private static EntityExchangeResult<byte[]> complete(WebTestClient caller) {
        return caller.post().uri("/v1/completions").contentType(MediaType.APPLICATION_JSON)
                .bodyValue(Map.of("model", MODEL, "prompt", "Once", "max_tokens", 2)).exchange().expectBody().returnResult();
    }

    private static String body(EntityExchangeResult<byte[]> r) {
        return r.getResponseBody() == null ? "" : new String(r.getResponseBody(), java.nio.charset.StandardCharsets.UTF_8);
    }

    private static Map<?, ?> error(EntityExchangeResult<byte[]> r) {
        return (Map<?, ?>) JSON.readValue(body(r), Map.class).get("error");
    }

    private static Map<?, ?> auditDetails(EntityExchangeResult<byte[]> r) {
        Map<?, ?> components = (Map<?, ?>) JSON.readValue(body(r), Map.class).get("components");
        return (Map<?, ?>) ((Map<?, ?>) components.get("audit")).get("details");
    }

    /** SIGSTOP the postmaster (so it forks nothing new), then every backend and helper process under it. */
    private void freeze() throws IOException, InterruptedException {
        long postmaster = Long.parseLong(Files.readAllLines(postgres.dataDirectory().resolve("postmaster.pid")).getFirst()
                .strip());
        signal("-STOP", List.of(postmaster));
        List<Long> children = new ArrayList<>();
        ProcessHandle.of(postmaster).orElseThrow().descendants().forEach(p -> children.add(p.pid()));
        assertThat(children).as("postgres backends").isNotEmpty();
        signal("-STOP", children);
    }

    private static void thaw() throws IOException, InterruptedException {
        List<Long> pids = List.copyOf(STOPPED);
        if (!pids.isEmpty()) {
            signal("-CONT", pids);
            STOPPED.removeAll(pids);
        }
    }

    private static void signal(String signal, List<Long> pids) throws IOException, InterruptedException {
        if ("-STOP".equals(signal)) {
            STOPPED.addAll(pids); // before the signal: if kill dies halfway, thaw still covers them
        }
        List<String> command = new ArrayList<>(List.of("kill", signal));
        pids.forEach(p -> command.add(Long.toString(p)));
        Process kill = new ProcessBuilder(command).redirectErrorStream(true).start();
        assertThat(kill.waitFor(10, TimeUnit.SECONDS)).as("kill %s finished", signal).isTrue();
        String out = new String(kill.getInputStream().readAllBytes());
        assertThat(kill.exitValue()).as("kill %s %s: %s", signal, pids, out).isZero();
    }
}
