package dev.pagewarden.incident.disclosure;

import com.sun.net.httpserver.HttpServer;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import java.io.IOException;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.Executors;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assertions.assertTimeoutPreemptively;

/**
 * Delivery-time checks with a resolver the test controls (standing in for DNS, so no traffic goes to
 * private ranges): every resolved address is checked, the client connects only to checked
 * addresses, redirects are not followed, and timeouts and the answer cap end a delivery. The only
 * real traffic is to a listener on loopback.
 */
class WebhookClientTest {
    private static final Duration DEADLINE = Duration.ofSeconds(30);

    private HttpServer listener;
    private final List<String> hits = new CopyOnWriteArrayList<>();
    private final List<String> resolved = new CopyOnWriteArrayList<>();
    private final CountDownLatch release = new CountDownLatch(1);

    @BeforeEach
    void listen() throws IOException {
        listener = HttpServer.create(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0), 0);
        listener.setExecutor(Executors.newVirtualThreadPerTaskExecutor());
        listener.createContext("/hook", ex -> {
            hits.add(ex.getRequestURI().getPath() + " " + ex.getRequestHeaders().getFirst("X-Test"));
            ex.getRequestBody().readAllBytes();
            ex.sendResponseHeaders(204, -1);
            ex.close();
        });
        listener.createContext("/redirect", ex -> {
            hits.add("/redirect");
            ex.getResponseHeaders().add("Location", "/followed");
            ex.sendResponseHeaders(302, -1);
            ex.close();
        });
        listener.createContext("/followed", ex -> {
            hits.add("/followed");
            ex.sendResponseHeaders(200, -1);
            ex.close();
        });
        listener.createContext("/silent", ex -> {
            hits.add("/silent");
            try {
                release.await();
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
            ex.close();
        });
        listener.createContext("/endless", ex -> {
            hits.add("/endless");
            ex.sendResponseHeaders(200, 0);
            byte[] chunk = new byte[8192];
            try (OutputStream out = ex.getResponseBody()) {
                while (release.getCount() > 0) {
                    out.write(chunk); // fails once the client hangs up
                }
            } catch (IOException e) {
                // the client hung up after its cap
            }
        });
        listener.start();
    }

    @AfterEach
    void stop() {
        release.countDown();
        listener.stop(0);
    }

    private WebhookClient client(boolean allowPrivate, Duration readTimeout, String... answer) {
        WebhookProperties properties = new WebhookProperties(true, allowPrivate, Duration.ofSeconds(2), readTimeout);
        return new WebhookClient(properties, host -> {
            resolved.add(host);
            InetAddress[] out = new InetAddress[answer.length];
            for (int i = 0; i < answer.length; i++) {
                out[i] = InetAddress.ofLiteral(answer[i]);
            }
            return out;
        });
    }

    private String url(String path) {
        return "http://hooks.test:" + listener.getAddress().getPort() + path;
    }

    private WebhookClient.Outcome post(WebhookClient client, String path) {
        return assertTimeoutPreemptively(DEADLINE, () -> client.post(url(path), Map.of("X-Test", "yes"), "{}"));
    }

    @Test
    void aNameResolvingToAForbiddenAddressIsRefusedBeforeConnecting() throws Exception {
        for (String[] answer : List.of(new String[]{"10.0.0.5"}, new String[]{"169.254.169.254"}, new String[]{"fd00::1"},
                new String[]{"8.8.8.8", "192.168.1.1"})) {
            try (WebhookClient client = client(false, Duration.ofSeconds(5), answer)) {
                WebhookClient.Outcome outcome = post(client, "/hook");
                assertThat(outcome.delivered()).isFalse();
                assertThat(outcome.permanent()).isTrue();
                assertThat(outcome.error()).startsWith("refused: 'hooks.test' resolves to a")
                        .contains(InetAddress.ofLiteral(answer[answer.length - 1]).getHostAddress());
            }
        }
        assertThat(resolved).containsOnly("hooks.test");
        assertThat(hits).isEmpty();
    }

    @Test
    void dnsRebindingToLoopbackReachesNothing() throws Exception {
        // the name passed registration; at delivery it resolves to this machine, where a listener waits
        try (WebhookClient client = client(false, Duration.ofSeconds(5), "127.0.0.1")) {
            WebhookClient.Outcome outcome = post(client, "/hook");
            assertThat(outcome.error()).isEqualTo("refused: 'hooks.test' resolves to a loopback address (127.0.0.1)");
        }
        assertThat(hits).isEmpty();
    }

    @Test
    void literalForbiddenAddressesAreRefusedAtDeliveryToo() throws Exception {
        try (WebhookClient client = client(false, Duration.ofSeconds(5), "8.8.8.8")) {
            var outcome = assertTimeoutPreemptively(DEADLINE, () -> client.post(
                    "http://127.0.0.1:" + listener.getAddress().getPort() + "/hook", Map.of(), "{}"));
            assertThat(outcome.error()).contains("loopback address (127.0.0.1)");
            assertThat(outcome.permanent()).isTrue();
        }
        assertThat(hits).isEmpty();
        assertThat(resolved).isEmpty();
    }

    @Test
    void whereAllowedItConnectsToTheCheckedAddress() throws Exception {
        // hooks.test exists in no DNS: reaching the listener proves the connection used the checked answer
        try (WebhookClient client = client(true, Duration.ofSeconds(5), "127.0.0.1")) {
            WebhookClient.Outcome outcome = post(client, "/hook");
            assertThat(outcome.delivered()).as(String.valueOf(outcome.error())).isTrue();
            assertThat(outcome.status()).isEqualTo(204);
        }
        assertThat(hits).containsExactly("/hook yes");
    }

    @Test
    void redirectsAreNotFollowed() throws Exception {
        try (WebhookClient client = client(true, Duration.ofSeconds(5), "127.0.0.1")) {
            WebhookClient.Outcome outcome = post(client, "/redirect");
            assertThat(outcome.delivered()).isFalse();
            assertThat(outcome.permanent()).isTrue();
            assertThat(outcome.status()).isEqualTo(302);
            assertThat(outcome.error()).isEqualTo("HTTP 302: redirects are not followed");
        }
        assertThat(hits).containsExactly("/redirect");
    }

    @Test
    void aReceiverThatNeverAnswersTimesOut() throws Exception {
        try (WebhookClient client = client(true, Duration.ofMillis(300), "127.0.0.1")) {
            WebhookClient.Outcome outcome = post(client, "/silent");
            assertThat(outcome.delivered()).isFalse();
            assertThat(outcome.permanent()).isFalse();
            assertThat(outcome.error()).containsIgnoringCase("time");
        }
        assertThat(hits).containsExactly("/silent");
    }

    @Test
    void anEndlessAnswerIsCutAtTheCap() throws Exception {
        // the read timeout never fires while data flows: only the cap ends this delivery, delivered
        try (WebhookClient client = client(true, Duration.ofSeconds(10), "127.0.0.1")) {
            WebhookClient.Outcome outcome = post(client, "/endless");
            assertThat(outcome.delivered()).as(String.valueOf(outcome.error())).isTrue();
            assertThat(outcome.status()).isEqualTo(200);
        }
        assertThat(hits).containsExactly("/endless");
    }
}
