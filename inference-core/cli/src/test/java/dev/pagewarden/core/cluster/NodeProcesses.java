package dev.pagewarden.core.cluster;

import dev.pagewarden.core.testing.TestModels;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import static org.assertj.core.api.Assertions.assertThat;

/** Engine nodes as child processes: the {@code node} command run from the test's own classes on stories260K. */
final class NodeProcesses {
    static final Pattern LISTENING = Pattern.compile(
            "node (\\S+) \\((prefill|decode)\\) listening on 127\\.0\\.0\\.1:(\\d+), model (\\S+), window (\\d+) tokens");

    private NodeProcesses() {
    }

    /** Starts node {@code name} of {@code role} on 127.0.0.1:{@code port} (0: any free port) with the pki folder's certificates. */
    static Process start(Path pki, String role, String name, int port, String... extra) throws IOException {
        Path java = Path.of(System.getProperty("java.home"), "bin", "java");
        List<String> cmd = new ArrayList<>(List.of(java.toString(), "--add-modules", "jdk.incubator.vector", "-cp",
                System.getProperty("java.class.path"), "dev.pagewarden.cli.Main", "node", "--role", role,
                "--listen", "127.0.0.1:" + port, "--model", TestModels.stories260K().toString(), "--tokenizer",
                TestModels.tok512().toString(), "--tls", pki.toString(), "--name", name, "--threads", "1",
                "--backend", "cpu", "--heartbeat-ms", "100"));
        cmd.addAll(Arrays.asList(extra));
        return new ProcessBuilder(cmd).redirectError(ProcessBuilder.Redirect.DISCARD).start();
    }

    /**
     * The node's listening line (its first line of output), or a failure after 60 s (node JVMs starting together on
     * a loaded machine take a while); the rest of its output is read and dropped so that a full pipe never blocks
     * the node.
     */
    static Matcher listening(Process node) throws Exception {
        BufferedReader out = new BufferedReader(new InputStreamReader(node.getInputStream(), StandardCharsets.UTF_8));
        CompletableFuture<String> line = CompletableFuture.supplyAsync(() -> {
            try {
                return out.readLine();
            } catch (IOException e) {
                throw new UncheckedIOException(e);
            }
        });
        String got = line.get(60, TimeUnit.SECONDS);
        Thread.ofVirtual().start(() -> {
            try {
                while (out.readLine() != null) {
                    // dropped
                }
            } catch (IOException e) {
                // the node is gone
            }
        });
        Matcher m = LISTENING.matcher(String.valueOf(got));
        assertThat(m.matches()).as("listening line: %s", got).isTrue();
        return m;
    }
}
