package dev.pagewarden.core.cluster;

import dev.pagewarden.core.engine.Engine;
import dev.pagewarden.core.request.GenerationRequest;
import dev.pagewarden.core.request.TokenListener;
import dev.pagewarden.core.sampling.SamplingParams;
import dev.pagewarden.core.testing.IsolationFixtures;
import dev.pagewarden.core.testing.RealModelTest;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The {@code node} command as two child processes (a prefill and a decode node on loopback, any free port):
 * each prints its listening line, serves a request through {@link ClusterEngine} with the in-process
 * engine's greedy tokens, and exits on SIGTERM.
 */
class NodeCommandProcessTest extends RealModelTest {
    @TempDir
    Path dir;

    @Test
    void twoNodeProcessesServeARequestAndStopOnSigterm() throws Exception {
        ClusterFixture pki = new ClusterFixture(dir, "cluster-ca");
        pki.tls("prefill-a");
        pki.tls("decode-a");
        GenerationRequest request = new GenerationRequest("t", IsolationFixtures.prompt(20, 5), 24, SamplingParams.greedy());
        int[] expected;
        try (Engine engine = Engine.builder(model, ClusterFixture.config()).build()) {
            expected = engine.submit(request, TokenListener.NONE).result().get(60, TimeUnit.SECONDS).outputTokens();
        }

        List<Process> nodes = new ArrayList<>();
        try {
            Process prefill = start("prefill", "prefill-a");
            nodes.add(prefill);
            Process decode = start("decode", "decode-a");
            nodes.add(decode);
            Matcher p = listening(prefill);
            Matcher d = listening(decode);
            assertThat(p.group(1)).isEqualTo("prefill-a");
            assertThat(d.group(2)).isEqualTo("decode");
            assertThat(d.group(4)).isEqualTo("stories260K.bin");
            assertThat(d.group(5)).isEqualTo("512");

            try (ClusterEngine cluster = pki.client(List.of(ClusterFixture.at(NodeRole.PREFILL, Integer.parseInt(p.group(3))),
                    ClusterFixture.at(NodeRole.DECODE, Integer.parseInt(d.group(3)))))) {
                assertThat(cluster.awaitReady(Duration.ofSeconds(20))).isTrue();
                assertThat(cluster.submit(request, TokenListener.NONE).result().get(30, TimeUnit.SECONDS).outputTokens())
                        .isEqualTo(expected);
            }
            for (Process n : nodes) {
                n.destroy(); // SIGTERM
            }
            for (Process n : nodes) {
                assertThat(n.waitFor(15, TimeUnit.SECONDS)).as("node exited after SIGTERM").isTrue();
            }
        } finally {
            for (Process n : nodes) {
                n.destroyForcibly();
            }
        }
    }

    private Process start(String role, String name) throws Exception {
        return NodeProcesses.start(dir, role, name, 0);
    }

    private static Matcher listening(Process node) throws Exception {
        return NodeProcesses.listening(node);
    }
}
