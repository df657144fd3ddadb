package dev.pagewarden.cli.bench.http;

import dev.pagewarden.command.Json;
import dev.pagewarden.cli.testing.CliRun;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Path;
import java.time.Duration;
import java.util.Map;

import static dev.pagewarden.cli.testing.CliRun.run;
import static org.assertj.core.api.Assertions.assertThat;

class BenchHttpCommandTest {

    @Test
    void jsonAndMarkdownReports(@TempDir Path dir) throws Exception {
        try (FakeOpenAiServer server = new FakeOpenAiServer()) {
            Path md = dir.resolve("report.md");
            CliRun r = run("bench-http", "--base", server.base().toString(), "--key", FakeOpenAiServer.KEY, "--clients", "2",
                    "--requests", "3", "--max-tokens", "4", "--json", "--out", md.toString(),
                    "--metrics-url", server.base() + "/actuator/prometheus", "--metrics-token", FakeOpenAiServer.METRICS_TOKEN);
            assertThat(r.code()).as(r.err()).isZero();
            Map<?, ?> json = (Map<?, ?>) Json.parse(r.out().strip());
            assertThat(json.get("completed")).isEqualTo(6.0);
            assertThat(json.get("errors")).isEqualTo(0.0);
            assertThat(json.get("output_tokens")).isEqualTo(24.0);
            assertThat(json.get("pool_back_to_free")).isEqualTo(true);
            assertThat(json.get("clean")).isEqualTo(true);
            assertThat(((Map<?, ?>) json.get("pools")).keySet().stream().map(Object::toString).toList()).containsExactly("decode-0", "prefill-0");
            assertThat(md).content().contains("| requests completed | 6 |").contains("| errors | 0 |")
                    .contains("time to first token p50 / p99");
        }
    }

    @Test
    void aDurationRunLoopsUntilTheEndAndErrorsFailTheExitCode() throws Exception {
        try (FakeOpenAiServer server = new FakeOpenAiServer()) {
            CliRun r = run("bench-http", "--base", server.base().toString(), "--key", FakeOpenAiServer.KEY, "--clients", "2",
                    "--duration", "300ms", "--model", "fake-model",
                    "--metrics-url", server.base() + "/actuator/prometheus", "--metrics-token", FakeOpenAiServer.METRICS_TOKEN);
            assertThat(r.code()).as(r.err()).isZero();
            assertThat(r.out()).contains("bench-http: 2 clients").contains("0 errors").contains("every pool all-free again");
            assertThat(server.requests.get()).isPositive();

            server.behaviour = n -> FakeOpenAiServer.Mode.HTTP_503;
            CliRun bad = run("bench-http", "--base", server.base().toString(), "--key", FakeOpenAiServer.KEY,
                    "--requests", "2", "--clients", "1", "--no-pool-check");
            assertThat(bad.code()).isEqualTo(1);
            assertThat(bad.err()).contains("not clean").contains("http_503:overloaded=2");
        }
    }

    @Test
    void badOptions() {
        assertThat(run("bench-http", "--duration", "3x").err()).contains("--duration must be a duration like 500ms, 30s or 2m");
        assertThat(run("bench-http", "--duration", "1s", "--requests", "3").err()).contains("not both");
        assertThat(run("bench-http", "--base", "localhost:8080").err()).contains("--base must be an http(s) URL");
        assertThat(run("bench-http", "--clients", "0").code()).isEqualTo(2);
        assertThat(BenchHttpCommand.duration("x", "2m")).isEqualTo(Duration.ofMinutes(2));
        assertThat(BenchHttpCommand.duration("x", "1.5")).isEqualTo(Duration.ofMillis(1500));
    }
}
