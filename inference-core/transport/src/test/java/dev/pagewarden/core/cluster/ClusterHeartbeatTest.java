package dev.pagewarden.core.cluster;

import dev.pagewarden.core.request.GenerationRequest;
import dev.pagewarden.core.request.TokenListener;
import dev.pagewarden.core.sampling.SamplingParams;
import dev.pagewarden.core.testing.IsolationFixtures;
import dev.pagewarden.core.testing.RealModelTest;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * A decode node that goes silent with its control connection still open (its bytes held up on the
 * way, as by a stalled network path) drops out of rotation once it has missed its heartbeats, gets no
 * request meanwhile, and is back in rotation as soon as its STATUS flows again.
 */
class ClusterHeartbeatTest extends RealModelTest {
    @TempDir
    Path dir;

    @Test
    void aSilentNodeLeavesTheRotationAndComesBackWhenItsStatusFlowsAgain() throws Exception {
        ClusterFixture pki = new ClusterFixture(dir, "cluster-ca");
        try (PrefillNode prefill = pki.prefill(model, ClusterFixture.config(), "prefill-a", 0);
             DecodeNode steady = pki.decode(model, ClusterFixture.config(), "decode-a", 0);
             DecodeNode silent = pki.decode(model, ClusterFixture.config(), "decode-b", 0);
             HoldingProxy path = new HoldingProxy(silent.port());
             ClusterEngine cluster = pki.client(List.of(ClusterFixture.at(NodeRole.PREFILL, prefill.port()),
                     ClusterFixture.at(NodeRole.DECODE, steady.port()), ClusterFixture.at(NodeRole.DECODE, path.port())))) {
            assertThat(cluster.awaitReady(Duration.ofSeconds(30))).isTrue();
            assertThat(IsolationFixtures.eventually(10_000, () -> cluster.liveNodes().size() == 3)).isTrue();

            path.hold();
            // three heartbeats of 100 ms missed: out of rotation, well before the 5 s network timeout
            assertThat(IsolationFixtures.eventually(3_000, () -> cluster.liveNodes().size() == 2)).isTrue();
            assertThat(cluster.liveNodes()).noneMatch(n -> n.startsWith("decode-b"));
            for (int i = 0; i < 4; i++) {
                cluster.submit(new GenerationRequest("t", IsolationFixtures.prompt(24, i), 16, SamplingParams.greedy()),
                        TokenListener.NONE).result().get(60, TimeUnit.SECONDS);
            }
            assertThat(silent.pool().peakUsedPages()).as("the silent node got no request").isZero();
            assertThat(steady.pool().peakUsedPages()).isPositive();

            path.release();
            assertThat(IsolationFixtures.eventually(3_000, () -> cluster.liveNodes().size() == 3)).isTrue();
            assertThat(cluster.liveNodes()).anyMatch(n -> n.startsWith("decode-b"));
        }
    }

    /**
     * A TCP relay to {@code 127.0.0.1:target} that can hold back what the target sends (the
     * connection stays open, TLS records are only delayed, never changed), and let it flow again.
     */
    private static final class HoldingProxy implements AutoCloseable {
        private final ServerSocket server;
        private final Object gate = new Object();
        private boolean held;

        HoldingProxy(int target) throws IOException {
            server = new ServerSocket(0, 8, InetAddress.getLoopbackAddress());
            Thread.ofPlatform().daemon().name("test-proxy-accept").start(() -> {
                while (!server.isClosed()) {
                    try {
                        Socket in = server.accept();
                        Socket out = new Socket(InetAddress.getLoopbackAddress(), target);
                        pump(in, out, false);
                        pump(out, in, true);
                    } catch (IOException e) {
                        return;
                    }
                }
            });
        }

        int port() {
            return server.getLocalPort();
        }

        void hold() {
            synchronized (gate) {
                held = true;
            }
        }

        void release() {
            synchronized (gate) {
                held = false;
                gate.notifyAll();
            }
        }

        private void pump(Socket from, Socket to, boolean holdable) {
            Thread.ofPlatform().daemon().name("test-proxy-pump").start(() -> {
                byte[] buf = new byte[16384];
                try (InputStream in = from.getInputStream(); OutputStream out = to.getOutputStream()) {
                    int n;
                    while ((n = in.read(buf)) > 0) {
                        if (holdable) {
                            synchronized (gate) {
                                while (held) {
                                    gate.wait();
                                }
                            }
                        }
                        out.write(buf, 0, n);
                        out.flush();
                    }
                } catch (IOException | InterruptedException e) {
                    // a side closed: close the other one too
                } finally {
                    try {
                        to.close();
                        from.close();
                    } catch (IOException ignored) {
                        // already closed
                    }
                }
            });
        }

        @Override
        public void close() throws IOException {
            release();
            server.close();
        }
    }
}
