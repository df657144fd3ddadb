package dev.pagewarden.platform.http;

import dev.pagewarden.platform.testing.PlatformTestBase;
import dev.pagewarden.platform.testing.RawHttp;
import org.junit.jupiter.api.Test;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.test.context.DynamicPropertyRegistry;
import org.springframework.test.context.DynamicPropertySource;
import org.springframework.test.context.TestPropertySource;

import java.io.IOException;
import java.net.InetAddress;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Slow and greedy clients on raw sockets, against shortened limits: partial headers, an incomplete
 * body and an idle connection are closed by the server; one address holds at most three connections;
 * a stream held longer than every timeout still completes, and so does a request pipelined behind it.
 */
@TestPropertySource(properties = {
        "pagewarden.http.header-timeout=1s",
        // counted from the headers until the body is read, which includes the server's own time before it
        // starts reading: generous enough for a cold, busy test machine
        "pagewarden.http.body-timeout=5s",
        "pagewarden.http.idle-timeout=2s",
        "pagewarden.http.max-connections-per-address=3"})
class SlowClientTest extends PlatformTestBase {
    private static final Path HOME = tempHome();
    private static final Duration WAIT = Duration.ofSeconds(15);

    @Autowired
    HttpServerLimits limits;

    @DynamicPropertySource
    static void home(DynamicPropertyRegistry registry) {
        registry.add("pagewarden.home", HOME::toString);
    }

    private int port() {
        return Integer.parseInt(env.getProperty("local.server.port"));
    }

    @Test
    void aConnectionThatSendsNothingIsClosed() throws IOException {
        try (RawHttp idle = RawHttp.local(port(), WAIT)) {
            assertThat(idle.closedByServer()).as("closed by the idle timeout").isTrue();
        }
    }

    @Test
    void headersTrickledByteByByteAreCutOff() throws Exception {
        try (RawHttp slow = RawHttp.local(port(), Duration.ofMillis(200))) {
            slow.send("GET /status HTTP/1.1\r\nHost: localhost\r\n");
            assertThat(trickleUntilClosed(slow, "X-Slow: 1\r\n")).as("closed by the header timeout").isTrue();
        }
    }

    @Test
    void aBodyThatNeverCompletesIsCutOff() throws Exception {
        String key = newTenant("slow-body")[1];
        try (RawHttp slow = RawHttp.local(port(), Duration.ofMillis(200))) {
            slow.send("POST /v1/completions HTTP/1.1\r\nHost: localhost\r\nAuthorization: Bearer " + key
                    + "\r\nContent-Type: application/json\r\nContent-Length: 400\r\n\r\n{\"model\":");
            assertThat(trickleUntilClosed(slow, " ")).as("closed by the body timeout").isTrue();
        }
    }

    @Test
    void oversizedHeadersAreRefused() throws IOException {
        try (RawHttp big = RawHttp.local(port(), WAIT)) {
            assertThat(big.get("/status", "X-Big: " + "a".repeat(20_000)).status()).isEqualTo(431);
        }
    }

    @Test
    void oneAddressGetsAtMostTheCap() throws Exception {
        InetAddress loopback = InetAddress.getLoopbackAddress();
        await(() -> limits.openConnectionsFrom(loopback) == 0, "earlier tests' connections to be gone");
        List<RawHttp> held = new ArrayList<>();
        try {
            for (int i = 0; i < 3; i++) {
                RawHttp c = RawHttp.local(port(), WAIT);
                held.add(c);
                assertThat(c.get("/status").status()).as("connection %d under the cap", i).isEqualTo(200);
            }
            try (RawHttp over = RawHttp.local(port(), WAIT)) {
                boolean refused;
                try {
                    over.send("GET /status HTTP/1.1\r\nHost: localhost\r\n\r\n");
                    refused = over.closedWithoutResponse();
                } catch (IOException closedAlready) {
                    refused = true;
                }
                assertThat(refused).as("the fourth connection is refused").isTrue();
            }
        } finally {
            for (RawHttp c : held) {
                c.close();
            }
        }
        // the closed ones no longer count
        await(() -> limits.openConnectionsFrom(loopback) == 0, "the closed connections to be uncounted");
        try (RawHttp again = RawHttp.local(port(), WAIT)) {
            assertThat(again.get("/status").status()).isEqualTo(200);
        }
    }

    private static void await(java.util.function.BooleanSupplier condition, String what) throws InterruptedException {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(15);
        while (!condition.getAsBoolean()) {
            assertThat(System.nanoTime()).as("waiting for " + what).isLessThan(deadline);
            Thread.sleep(20);
        }
    }

    @Test
    void aStreamHeldLongerThanEveryTimeoutStillCompletes() throws Exception {
        String key = newTenant("patient-reader")[1];
        gate.arm(3);
        try (RawHttp stream = RawHttp.local(port(), Duration.ofSeconds(60))) {
            stream.send(RawHttp.postRequest("/v1/completions", "application/json",
                    "{\"model\":\"" + MODEL + "\",\"prompt\":\"Once upon a time\",\"max_tokens\":8,\"temperature\":0,\"stream\":true}",
                    "Authorization: Bearer " + key));
            try {
                gate.awaitHeld();
                // the next request pipelined behind the stream, its headers unfinished: its clock must
                // not run while the stream is still being written
                stream.send("GET /status HTTP/1.1\r\nHost: localhost\r\n");
                // while the stream is held, let every timeout pass: an idle connection and trickled
                // headers opened now are both closed only after their timeouts ran out
                try (RawHttp idle = RawHttp.local(port(), WAIT); RawHttp slow = RawHttp.local(port(), Duration.ofMillis(200))) {
                    slow.send("GET /status HTTP/1.1\r\nHost: localhost\r\n");
                    assertThat(trickleUntilClosed(slow, "X-Slow: 1\r\n")).isTrue();
                    assertThat(idle.closedByServer()).isTrue();
                }
            } finally {
                gate.release();
            }
            RawHttp.Response r = stream.read();
            assertThat(r.status()).isEqualTo(200);
            assertThat(sseData(r.body())).last().isEqualTo("[DONE]");
            assertThat(stream.send("\r\n").read().status()).as("the pipelined request, finished now").isEqualTo(200);
        }
    }

    /** Sends {@code piece} every read timeout until the server closes the connection (true) or 20 s pass (false). */
    private static boolean trickleUntilClosed(RawHttp connection, String piece) throws IOException {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(20);
        while (System.nanoTime() < deadline) {
            if (connection.closedByServer()) {
                return true;
            }
            try {
                connection.send(piece);
            } catch (IOException closed) {
                return true;
            }
        }
        return false;
    }
}
