package dev.pagewarden.platform;

import dev.pagewarden.platform.engine.EngineHost;
import dev.pagewarden.platform.testing.PlatformTestBase;
import org.junit.jupiter.api.Test;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.http.MediaType;
import org.springframework.jdbc.core.simple.JdbcClient;
import org.springframework.test.context.DynamicPropertyRegistry;
import org.springframework.test.context.DynamicPropertySource;
import org.springframework.test.context.TestPropertySource;

import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Lab engine whose sender flips a byte of every KV page after checksumming it: decode's checksum
 * check must stop each request with kv_transfer_failed - a 500 before the stream starts, or an
 * error event and [DONE] once it has - and never a normal-looking 200.
 */
@TestPropertySource(properties = {"pagewarden.lab.enabled=true", "pagewarden.lab.faults=corrupt-transfer-byte"})
class LabTransferFaultTest extends PlatformTestBase {
    private static final Path HOME = tempHome();

    @Autowired
    EngineHost host;
    @Autowired
    JdbcClient jdbc;

    @DynamicPropertySource
    static void home(DynamicPropertyRegistry registry) {
        registry.add("pagewarden.home", HOME::toString);
    }

    @Test
    void corruptedTransferIs500KvTransferFailedAndItsPagesAreQuarantinedAndScrubbed() throws Exception {
        String key = newTenant("unlucky")[1];
        as(key).post().uri("/v1/completions").contentType(MediaType.APPLICATION_JSON)
                .bodyValue(Map.of("model", MODEL, "prompt", "Once upon a time", "max_tokens", 10))
                .exchange().expectStatus().isEqualTo(500)
                .expectHeader().exists("X-Request-Id")
                .expectBody()
                .jsonPath("$.error.code").isEqualTo("kv_transfer_failed")
                .jsonPath("$.error.type").isEqualTo("server_error")
                .jsonPath("$.error.message").value(m -> assertThat((String) m).contains("checksum"));
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
        long recorded = 0;
        while (recorded == 0 && System.nanoTime() < deadline) {
            recorded = jdbc.sql("SELECT count(*) FROM safety_events WHERE type = 'CHECKSUM_MISMATCH'").query(Long.class).single();
            Thread.sleep(20);
        }
        assertThat(recorded).as("the detector's event reached PostgreSQL").isPositive();
        var decode = host.served().orElseThrow().engine().decodePool();
        while (decode.freePages() != decode.capacityPages() && System.nanoTime() < deadline) {
            Thread.sleep(10);
        }
        assertThat(decode.freePages()).as("quarantined pages are scrubbed and freed").isEqualTo(decode.capacityPages());
    }

    @Test
    void failureAfterTheStreamBeganEndsItWithTheErrorObjectThenDone() {
        String key = newTenant("streamer")[1];
        String raw = as(key).post().uri("/v1/chat/completions").contentType(MediaType.APPLICATION_JSON)
                .bodyValue(Map.of("model", MODEL, "stream", true, "max_tokens", 10,
                        "messages", List.of(Map.of("role", "user", "content", "hello"))))
                .exchange().expectStatus().isOk().expectBody(String.class).returnResult().getResponseBody();
        assertOpenAiEventStream(raw);
        List<String> data = sseData(raw);
        assertThat(data.getLast()).isEqualTo("[DONE]");
        Map<?, ?> error = (Map<?, ?>) Json.parse(data.get(data.size() - 2)).get("error");
        assertThat(error.get("code")).isEqualTo("kv_transfer_failed");
        assertThat(data.subList(0, data.size() - 2)).noneMatch(d -> d.contains("\"finish_reason\":\"stop\"")
                || d.contains("\"finish_reason\":\"length\""));
    }
}
