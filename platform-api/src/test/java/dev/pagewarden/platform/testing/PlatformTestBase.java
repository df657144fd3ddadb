package dev.pagewarden.platform.testing;

import dev.pagewarden.core.testing.TestModels;
import org.junit.jupiter.api.extension.ExtendWith;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.context.annotation.Import;
import org.springframework.core.env.Environment;
import org.springframework.http.MediaType;
import org.springframework.http.client.reactive.ReactorClientHttpConnector;
import org.springframework.test.context.DynamicPropertyRegistry;
import org.springframework.test.context.DynamicPropertySource;
import org.springframework.test.web.reactive.server.WebTestClient;

import reactor.netty.http.client.HttpClient;
import reactor.netty.resources.ConnectionProvider;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Map;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The whole platform on a random port: embedded PostgreSQL 17, the real stories260K model,
 * in-process prefill and decode. Each concrete setting (a subclass with its own properties) gives
 * its own home folder through {@code pagewarden.home} - one embedded database each - and every test
 * class with the same setting shares that running platform (Spring's context cache).
 */
@ExtendWith({ModelRequired.class, StalledCallReport.class})
@Import(HoldingGateConfiguration.class)
@SpringBootTest(webEnvironment = SpringBootTest.WebEnvironment.RANDOM_PORT, properties = {
        "pagewarden.admin-token=" + PlatformTestBase.ADMIN_TOKEN,
        "pagewarden.engine.canary-interval=0s",
        "management.server.port=0",
        "pagewarden.metrics-token=" + PlatformTestBase.METRICS_TOKEN,
        "pagewarden.shutdown.grace=2s",
        // the tests' admin users are minutes old; the minimum reviewer account age has its own tests
        "pagewarden.disclosure.reviewer-min-age=0s"})
public abstract class PlatformTestBase {
    static {
        EventLoopGuard.install();
    }

    public static final String ADMIN_TOKEN = "test-admin-token-0123456789";
    public static final String METRICS_TOKEN = "test-metrics-token-0123456789";
    public static final String MODEL = "stories260K";

    @Autowired
    protected Environment env;
    @Autowired
    protected HoldingGate gate;

    @DynamicPropertySource
    static void modelProperties(DynamicPropertyRegistry registry) {
        registry.add("pagewarden.model.path", () -> TestModels.stories260K().toString());
        registry.add("pagewarden.model.tokenizer", () -> TestModels.tok512().toString());
    }

    /** A fresh folder for one setting's {@code pagewarden.home}. */
    protected static Path tempHome() {
        try {
            return Files.createTempDirectory("pagewarden-test-home");
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    protected String baseUrl() {
        return "http://localhost:" + env.getProperty("local.server.port");
    }

    /** The management port (actuator), random in tests. */
    protected String managementUrl() {
        return "http://localhost:" + env.getProperty("local.management.port");
    }

    protected WebTestClient client() {
        return client(baseUrl(), Duration.ofSeconds(90));
    }

    /**
     * A test client that opens a connection per call instead of taking one from Reactor Netty's
     * JVM-wide pool. With the pool, the first call of a test class - which takes a connection the
     * previous class left idle - now and then (2 full runs in 21 here, once in CI) got no answer at
     * all: no thread busy, nothing logged, a 90 s timeout. That is the signature of reactor-netty
     * #4361 (fixed by the 1.3.8 upgrade): a request arriving before the previous response's operations
     * terminated was queued and the connection never read again ({@link StalledCallReport} prints the
     * socket queues and threads if a call stalls again). Keep-alive reuse is covered by
     * {@code http.KeepAliveTest} and by the OpenAI SDK test, whose client pools its connections.
     */
    public static WebTestClient client(String baseUrl, Duration timeout) {
        return WebTestClient.bindToServer(new ReactorClientHttpConnector(HttpClient.create(ConnectionProvider.newConnection())))
                .baseUrl(baseUrl).responseTimeout(timeout).build();
    }

    protected WebTestClient admin() {
        return client().mutate().defaultHeader("Authorization", "Bearer " + ADMIN_TOKEN).build();
    }

    /** A new tenant; returns {tenantId, key}. */
    protected String[] newTenant(String name) {
        Map<?, ?> tenant = admin().post().uri("/admin/api/tenants").contentType(MediaType.APPLICATION_JSON)
                .bodyValue(Map.of("name", name)).exchange().expectStatus().isCreated()
                .expectBody(Map.class).returnResult().getResponseBody();
        String id = (String) tenant.get("id");
        Map<?, ?> key = admin().post().uri("/admin/api/tenants/" + id + "/keys").exchange().expectStatus().isCreated()
                .expectBody(Map.class).returnResult().getResponseBody();
        return new String[]{id, (String) key.get("key")};
    }

    protected WebTestClient as(String key) {
        return client().mutate().defaultHeader("Authorization", "Bearer " + key).build();
    }

    /**
     * OpenAI's wire format, byte for byte: every event is {@code data: } lines (a space after the colon;
     * clients split on {@code "data: "}) ended by a blank line, and the last event is {@code data: [DONE]}.
     */
    protected static void assertOpenAiEventStream(String raw) {
        assertThat(raw).as("the stream's end").endsWith("data: [DONE]\n\n");
        for (String event : raw.split("\n\n")) {
            assertThat(event.lines()).as("event %s", event).isNotEmpty().allMatch(line -> line.startsWith("data: "));
        }
    }

    /** The {@code data:} payloads of a Server-Sent Events body, in order. */
    protected static java.util.List<String> sseData(String raw) {
        return raw.lines().filter(l -> l.startsWith("data:")).map(l -> l.substring(5).strip()).toList();
    }
}
