package dev.pagewarden.core.cluster;

import dev.pagewarden.core.engine.Engine;
import dev.pagewarden.core.request.GenerationRequest;
import dev.pagewarden.core.request.TokenListener;
import dev.pagewarden.core.sampling.SamplingParams;
import dev.pagewarden.core.testing.IsolationFixtures;
import dev.pagewarden.core.testing.RealModelTest;
import dev.pagewarden.core.testing.TestModels;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The {@code node} command as two child processes (a prefill and a decode node on loopback, any free port):
 * each prints its listening line, serves a request through {@link ClusterEngine} with the in-process
 * engine's greedy tokens, and exits on SIGTERM.
 */
class NodeCommandProcessTest extends RealModelTest {
    private static final Pattern LISTENING = Pattern.compile(
            "node (\\S+) \\((prefill|decode)\\) listening on 127\\.0\\.0\\.1:(\\d+), model (\\S+), window (\\d+) tokens");

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
        Path java = Path.of(System.getProperty("java.home"), "bin", "java");
        return new ProcessBuilder(java.toString(), "--add-modules", "jdk.incubator.vector", "-cp",
                System.getProperty("java.class.path"), "dev.pagewarden.cli.Main", "node", "--role", role,
                "--listen", "127.0.0.1:0", "--model", TestModels.stories260K().toString(), "--tokenizer",
                TestModels.tok512().toString(), "--tls", dir.toString(), "--name", name, "--threads", "1",
                "--backend", "cpu", "--heartbeat-ms", "100")
                .redirectError(ProcessBuilder.Redirect.DISCARD).start();
    }

    /** The node's listening line (its first line of output), or a failure after 20 s. */
    private static Matcher listening(Process node) throws Exception {
        CompletableFuture<String> line = CompletableFuture.supplyAsync(() -> {
            try {
                return new BufferedReader(new InputStreamReader(node.getInputStream(), StandardCharsets.UTF_8)).readLine();
            } catch (java.io.IOException e) {
                throw new java.io.UncheckedIOException(e);
            }
        });
        String got = line.get(20, TimeUnit.SECONDS);
        Matcher m = LISTENING.matcher(String.valueOf(got));
        assertThat(m.matches()).as("listening line: %s", got).isTrue();
        return m;
    }
}
