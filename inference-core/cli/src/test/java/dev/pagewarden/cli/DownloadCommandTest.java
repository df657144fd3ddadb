package dev.pagewarden.cli;

import com.sun.net.httpserver.HttpServer;
import dev.pagewarden.cli.testing.CliRun;
import dev.pagewarden.core.download.FakeHub;
import dev.pagewarden.core.testing.TestModels;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Map;

import static dev.pagewarden.cli.testing.CliRun.run;
import static org.assertj.core.api.Assertions.assertThat;

/**
 * {@code download stories260K} end to end through the CLI, against a local mirror serving the real
 * fixture files at the Hub's paths: the registry's pinned hashes must match them, and the
 * downloaded model must generate.
 */
class DownloadCommandTest {

    @Test
    void downloadsTheRealStories260KFromAMirrorAndItGenerates(@TempDir Path dir) throws Exception {
        Map<String, Path> files = Map.of(
                "/karpathy/tinyllamas/resolve/main/stories260K/stories260K.bin", TestModels.stories260K(),
                "/karpathy/tinyllamas/resolve/main/stories260K/tok512.bin", TestModels.tok512());
        HttpServer mirror = HttpServer.create(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0), 0);
        mirror.createContext("/", ex -> {
            try (ex) {
                Path p = files.get(ex.getRequestURI().getPath());
                if (p == null) {
                    ex.sendResponseHeaders(404, -1);
                    return;
                }
                byte[] body = Files.readAllBytes(p);
                ex.sendResponseHeaders(200, body.length);
                ex.getResponseBody().write(body);
            }
        });
        mirror.start();
        try {
            String endpoint = "http://127.0.0.1:" + mirror.getAddress().getPort();
            CliRun r = run("download", "stories260K", "--dir", dir.toString(), "--endpoint", endpoint);
            assertThat(r.code()).as(r.err()).isZero();
            assertThat(r.out()).contains("b0a507e7ad0f626624f17112325e66691f9076d622e1d3274d103d00299f2696  "
                    + dir.resolve("stories260K/stories260K.bin") + " (downloaded, SHA-256 pinned in the registry)");
            assertThat(dir.resolve("stories260K/tok512.bin")).hasSameBinaryContentAs(TestModels.tok512());

            CliRun again = run("download", "stories260K", "--dir", dir.toString(), "--endpoint", "http://127.0.0.1:1", "--json");
            assertThat(again.code()).as(again.err()).isZero();
            assertThat(again.out()).contains("\"verification\":\"pinned\"").contains("\"downloaded\":false");

            CliRun gen = run("generate", "--model", dir.resolve("stories260K/stories260K.bin").toString(), "--tokenizer",
                    dir.resolve("stories260K/tok512.bin").toString(), "--prompt", "Once upon a time", "--max-tokens", "20");
            assertThat(gen.code()).as(gen.err()).isZero();
            assertThat(gen.out()).startsWith("Once upon a time, there was a little girl");

            CliRun missing = run("download", "stories15M", "--dir", dir.toString(), "--endpoint", endpoint);
            assertThat(missing.code()).isEqualTo(1);
            assertThat(missing.err()).contains("tokenizer.bin").contains("--insecure-no-checksum");
        } finally {
            mirror.stop(0);
        }
    }

    @Test
    void downloadsAHubGgufFileThatGeneratesAndAWholeSafetensorsRepository(@TempDir Path dir) throws Exception {
        Path gguf = dir.resolve("stories260K.gguf");
        CliRun conv = run("convert", "--model", TestModels.stories260K().toString(), "--tokenizer", TestModels.tok512().toString(),
                "--out", gguf.toString());
        assertThat(conv.code()).as(conv.err()).isZero();
        byte[] ggufBytes = Files.readAllBytes(gguf);
        byte[] weights = new byte[3000];
        new java.util.Random(1).nextBytes(weights);
        try (FakeHub hub = new FakeHub()) {
            hub.file("karpathy/stories-GGUF", "main", "stories260K.gguf", ggufBytes, true)
                    .file("org/tiny-hf", "main", "config.json", "{\"hidden_size\":64}", false)
                    .file("org/tiny-hf", "main", "model.safetensors", weights, true)
                    .file("org/tiny-hf", "main", "tokenizer.json", "{\"model\":{}}", false);
            Path models = dir.resolve("models");
            String endpoint = hub.endpoint().toString();
            CliRun r = run("download", "karpathy/stories-GGUF:stories260K.gguf", "--dir", models.toString(), "--endpoint", endpoint);
            assertThat(r.code()).as(r.err()).isZero();
            Path got = models.resolve("karpathy/stories-GGUF/stories260K.gguf");
            assertThat(r.out()).contains(FakeHub.sha256(ggufBytes) + "  " + got + " (downloaded, hash listed by the Hub)")
                    .contains("model id stories260K; serve it: PAGEWARDEN_MODEL_PATH=" + got);
            assertThat(got).hasBinaryContent(ggufBytes);
            CliRun gen = run("generate", "--model", got.toString(), "--prompt", "Once upon a time", "--max-tokens", "20");
            assertThat(gen.code()).as(gen.err()).isZero();
            assertThat(gen.out()).startsWith("Once upon a time");

            CliRun repo = run("download", "org/tiny-hf", "--dir", models.toString(), "--endpoint", endpoint, "--json");
            assertThat(repo.code()).as(repo.err()).isZero();
            assertThat(repo.out()).contains("\"name\":\"tiny-hf\"").contains("\"model\":\"" + models.resolve("org/tiny-hf") + "\"")
                    .contains("\"tokenizer\":null").contains("\"verification\":\"listed\"");
            assertThat(models.resolve("org/tiny-hf/model.safetensors")).hasBinaryContent(weights);

            CliRun missing = run("download", "karpathy/stories-GGUF:stories15M.gguf", "--dir", models.toString(), "--endpoint", endpoint);
            assertThat(missing.code()).isEqualTo(1);
            assertThat(missing.err()).contains("has no file 'stories15M.gguf'").contains("stories260K.gguf");
            CliRun bad = run("download", "karpathy/stories-GGUF:../x.gguf", "--dir", models.toString(), "--endpoint", endpoint);
            assertThat(bad.code()).isEqualTo(1);
            assertThat(bad.err()).contains("bad file '../x.gguf'");

            hub.requiredToken = "hf_secret";
            Path tokenFile = dir.resolve("token");
            Files.writeString(tokenFile, "hf_secret\n");
            CliRun gated = run("download", "org/tiny-hf", "--dir", dir.resolve("other").toString(), "--endpoint", endpoint);
            assertThat(gated.code()).isEqualTo(1);
            assertThat(gated.err()).contains("is gated").contains("HF_TOKEN");
            CliRun withToken = run("download", "org/tiny-hf", "--dir", dir.resolve("other").toString(), "--endpoint", endpoint,
                    "--token-file", tokenFile.toString());
            assertThat(withToken.code()).as(withToken.err()).isZero();
        }
    }

    @Test
    void listAndBadCommandLines() {
        CliRun list = run("download", "--list");
        assertThat(list.code()).isZero();
        assertThat(list.out()).contains("stories260K").contains("SHA-256 pinned").contains("stories110M");
        CliRun none = run("download");
        assertThat(none.code()).isEqualTo(2);
        assertThat(none.err()).contains("give a NAME");
        CliRun unknown = run("download", "gpt5", "--dir", "/nonexistent-dir-never-created");
        assertThat(unknown.code()).isEqualTo(1);
        assertThat(unknown.err()).contains("unknown model 'gpt5'");
        CliRun positional = run("generate", "oops");
        assertThat(positional.code()).isEqualTo(2);
        assertThat(positional.err()).contains("unexpected argument 'oops'");
    }
}
