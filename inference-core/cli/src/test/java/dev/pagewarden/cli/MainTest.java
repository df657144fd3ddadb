package dev.pagewarden.cli;

import dev.pagewarden.cli.testing.CliRun;
import dev.pagewarden.command.Command;
import dev.pagewarden.core.testing.TestModels;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.LinkedHashMap;
import java.util.Map;

import static dev.pagewarden.cli.testing.CliRun.run;
import static org.assertj.core.api.Assertions.assertThat;

/** The engine CLI as a user runs it: exit codes, stdout, stderr. */
class MainTest {

    @Test
    void helpListsTheBuiltInCommandsAndThoseOfTheInstalledJars() {
        CliRun r = run("help");
        assertThat(r.code()).isZero();
        // gpu-check comes from the GPU backend's jar, replay from the lab's, both through the command SPI
        assertThat(r.out()).contains("generate").contains("bench").contains("gpu-check").contains("replay");
    }

    @Test
    void withoutTheLabReplaySaysHowToInstallIt() {
        Map<String, Command> withoutLab = new LinkedHashMap<>(Main.commands());
        withoutLab.remove("replay");
        ByteArrayOutputStream err = new ByteArrayOutputStream();
        int code = Main.run(withoutLab, new String[] {"replay", "--model", "m.bin"}, new PrintStream(new ByteArrayOutputStream()),
                new PrintStream(err, true, StandardCharsets.UTF_8));
        assertThat(code).isEqualTo(2);
        assertThat(err.toString(StandardCharsets.UTF_8)).contains("comes with the incident-replay lab")
                .contains("pagewarden-engine.jar:pagewarden-lab.jar");
    }


    @Test
    void generatePrintsThePromptAndAFluentContinuation() {
        CliRun r = run("generate", "--model", TestModels.stories260K().toString(), "--tokenizer", TestModels.tok512().toString(),
                "--prompt", "Once upon a time", "--max-tokens", "120", "--temperature", "0", "--backend", "cpu");
        assertThat(r.code()).as(r.err()).isZero();
        assertThat(r.out()).startsWith("Once upon a time, there was a little girl named Lily.");
        assertThat(r.err()).contains("tok/s").contains("generated");
    }

    @Test
    void generateOnTheConvertedGgufGivesTheSameText(@TempDir Path dir) {
        Path gguf = dir.resolve("stories.gguf");
        CliRun conv = run("convert", "--model", TestModels.stories260K().toString(), "--tokenizer", TestModels.tok512().toString(),
                "--out", gguf.toString());
        assertThat(conv.code()).as(conv.err()).isZero();
        CliRun fromBin = run("generate", "--model", TestModels.stories260K().toString(), "--tokenizer",
                TestModels.tok512().toString(), "--prompt", "The cat", "--max-tokens", "80", "--temperature", "0");
        CliRun fromGguf = run("generate", "--model", gguf.toString(), "--prompt", "The cat", "--max-tokens", "80",
                "--temperature", "0");
        assertThat(fromGguf.code()).as(fromGguf.err()).isZero();
        assertThat(fromGguf.out()).isEqualTo(fromBin.out());
    }

    @Test
    void badCommandLinesSayWhatIsWrong(@TempDir Path dir) throws Exception {
        CliRun noCmd = run();
        assertThat(noCmd.code()).isEqualTo(2);
        assertThat(noCmd.err()).contains("generate").contains("bench");

        CliRun unknown = run("fly");
        assertThat(unknown.code()).isEqualTo(2);
        assertThat(unknown.err()).contains("unknown command 'fly'");

        CliRun missing = run("generate", "--model", dir.resolve("nope.bin").toString(), "--prompt", "x");
        assertThat(missing.code()).isEqualTo(2);
        assertThat(missing.err()).contains("no such file").contains("nope.bin");

        CliRun typo = run("generate", "--model", TestModels.stories260K().toString(), "--prompt", "x", "--max-tokns", "3");
        assertThat(typo.code()).isEqualTo(2);
        assertThat(typo.err()).contains("unknown option --max-tokns");

        String model = TestModels.stories260K().toString();
        String tok = TestModels.tok512().toString();
        CliRun empty = run("generate", "--model", model, "--tokenizer", tok, "--prompt", "");
        assertThat(empty.code()).isEqualTo(1);
        assertThat(empty.err()).contains("prompt is empty");

        CliRun zero = run("generate", "--model", model, "--tokenizer", tok, "--prompt", "hi", "--max-tokens", "0");
        assertThat(zero.code()).isEqualTo(1);
        assertThat(zero.err()).contains("max-tokens must be > 0");

        CliRun notNumber = run("generate", "--model", model, "--tokenizer", tok, "--prompt", "hi", "--temperature", "warm");
        assertThat(notNumber.code()).isEqualTo(2);
        assertThat(notNumber.err()).contains("--temperature must be a finite number");

        Path junk = dir.resolve("junk.bin");
        Files.write(junk, new byte[]{1, 2, 3});
        CliRun corrupt = run("generate", "--model", junk.toString(), "--tokenizer", tok, "--prompt", "hi");
        assertThat(corrupt.code()).isEqualTo(1);
        assertThat(corrupt.err()).contains("junk.bin");

        CliRun noTok = run("generate", "--model", model, "--prompt", "hi");
        assertThat(noTok.code()).isEqualTo(1);
        assertThat(noTok.err()).contains("tokenizer");
    }

    @Test
    void benchJsonHasTheDocumentedFields() {
        CliRun r = run("bench", "--model", TestModels.stories260K().toString(), "--tokenizer", TestModels.tok512().toString(),
                "--prompt-tokens", "16", "--gen-tokens", "8", "--batch", "1,4", "--repeats", "1", "--json");
        assertThat(r.code()).as(r.err()).isZero();
        assertThat(r.out().trim()).startsWith("{").endsWith("}")
                .contains("\"prefill_tok_s\":").contains("\"decode_tok_s\":{\"1\":").contains("\"4\":")
                .contains("\"peak_kv_pages\":").contains("\"mem_read_gbs\":").contains("\"mem_read_gbs_one_thread\":")
                .contains("\"decode_speedup_vs_batch1\":{\"1\":1,\"4\":");
    }

    @Test
    void prefixBenchReportsHitsOnTheSharedSystemPrompt() {
        CliRun r = run("prefix-bench", "--model", TestModels.stories260K().toString(), "--tokenizer",
                TestModels.tok512().toString(), "--system-tokens", "40", "--turn-tokens", "5", "--gen-tokens", "2",
                "--turns", "2", "--conversations", "1", "--repeats", "1", "--backend", "cpu", "--json");
        assertThat(r.code()).as(r.err()).isZero();
        // 40 system tokens: two full 16-token pages come from the cache on a hit
        assertThat(r.out().trim()).startsWith("{").contains("\"cached_tokens_on_hit\":32").contains("\"ttft_speedup\":")
                .contains("\"cache_off_cached_tokens\":0").contains("\"turns_speedup\":");
        assertThat(r.out()).doesNotContain("\"cache_on_cached_tokens\":0,");
    }
}
