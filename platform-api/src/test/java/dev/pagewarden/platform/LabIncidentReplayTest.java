package dev.pagewarden.platform;

import dev.pagewarden.core.engine.PoolStats;
import dev.pagewarden.platform.audit.RequestRecordRepository;
import dev.pagewarden.platform.engine.EngineHost;
import dev.pagewarden.platform.testing.PlatformTestBase;
import io.micrometer.core.instrument.MeterRegistry;
import org.junit.jupiter.api.Test;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.http.MediaType;
import org.springframework.jdbc.core.simple.JdbcClient;
import org.springframework.test.context.DynamicPropertyRegistry;
import org.springframework.test.context.DynamicPropertySource;
import org.springframework.test.context.TestPropertySource;
import org.springframework.web.reactive.function.client.WebClient;

import java.nio.file.Path;
import java.util.List;
import java.util.Map;

import static dev.pagewarden.platform.DisconnectTest.awaitUntil;
import static org.assertj.core.api.Assertions.assertThat;

/**
 * The 2026 incident re-created through the API: an engine started with a window larger than its
 * prefill pool (skip-capacity-check) and the legacy "rejected but alive" check, with slow KV
 * writes. A prompt that does not fit prefill is sent on to decode with a placeholder page; the
 * handoff check (tokens received must equal tokens reserved) must stop it with a 500
 * kv_transfer_failed, not answer 200 from pages it never wrote.
 * And a client that hangs up while its KV writes are still in flight must leave its pages deferred
 * until the writes are acknowledged, then drained - never reused early.
 */
@TestPropertySource(properties = {"pagewarden.lab.enabled=true",
        "pagewarden.lab.faults=skip-capacity-check,legacy-finished-check,delay-transfer-writes=150",
        "pagewarden.engine.prefill-pool-tokens=128", "pagewarden.engine.deferred-release-timeout=60s"})
class LabIncidentReplayTest extends PlatformTestBase {
    private static final Path HOME = tempHome();

    @Autowired
    EngineHost host;
    @Autowired
    MeterRegistry registry;
    @Autowired
    RequestRecordRepository requests;
    @Autowired
    JdbcClient jdbc;

    @DynamicPropertySource
    static void home(DynamicPropertyRegistry registry) {
        registry.add("pagewarden.home", HOME::toString);
    }

    @Test
    void promptThatDoesNotFitPrefillIsStoppedAtHandoffNotServed() {
        String key = newTenant("victim")[1];
        as(key).post().uri("/v1/completions").contentType(MediaType.APPLICATION_JSON)
                .bodyValue(Map.of("model", MODEL, "prompt", "Once upon a time there was a cat. ".repeat(20),
                        "max_tokens", 20, "temperature", 0))
                .exchange().expectStatus().isEqualTo(500)
                .expectBody().jsonPath("$.error.code").isEqualTo("kv_transfer_failed")
                .jsonPath("$.error.message").value(m -> assertThat((String) m).contains("received"));
    }

    @Test
    void disconnectWhileKvWritesAreInFlightDefersThePagesUntilDrained() throws Exception {
        String key = newTenant("impatient")[1];
        java.util.function.Supplier<PoolStats> decode = () -> host.served().orElseThrow().engine().decodePool();
        double drainedBefore = registry.counter("kv.deferred.release", "outcome", "drained").count();
        // the client leaves once the request's KV frames are on the wire (held back by the lab delay)
        List<String> got = new java.util.concurrent.CopyOnWriteArrayList<>();
        reactor.core.Disposable client = WebClient.create(baseUrl()).post().uri("/v1/chat/completions")
                .header("Authorization", "Bearer " + key).contentType(MediaType.APPLICATION_JSON)
                .bodyValue(Map.of("model", MODEL, "stream", true, "max_tokens", 50,
                        "messages", List.of(Map.of("role", "user", "content", "hello"))))
                .retrieve().bodyToFlux(String.class).subscribe(got::add);
        awaitUntil(() -> ((dev.pagewarden.core.engine.Engine) host.served().orElseThrow().engine()).transfersInFlight() > 0 && !got.isEmpty(),
                "the stream to begin and the KV transfer to be in flight");
        client.dispose();
        awaitUntil(() -> decode.get().pagesByState().get("deferred") > 0
                        || registry.counter("kv.deferred.release", "outcome", "drained").count() > drainedBefore,
                "the aborted request's pages to be deferred");
        awaitUntil(() -> registry.counter("kv.deferred.release", "outcome", "drained").count() > drainedBefore,
                "the in-flight writes to be acknowledged and the pages drained");
        awaitUntil(() -> decode.get().allFree(), "every decode page to be free again");
        assertThat(decode.get().pagesByState().get("quarantined")).isZero();
        long aborted = jdbc.sql("SELECT id FROM requests WHERE error_code = 'client_disconnected' ORDER BY id DESC LIMIT 1")
                .query(Long.class).single();
        awaitUntil(() -> jdbc.sql("SELECT count(*) FROM kv_lineage WHERE request_id = :id AND kind IN (7, 8)")
                .param("id", aborted).query(Long.class).single() >= 2, "DEFER and DRAIN in the lineage");
    }
}
