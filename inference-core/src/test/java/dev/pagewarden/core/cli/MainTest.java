package dev.pagewarden.core.cli;

import dev.pagewarden.core.testing.TestModels;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;

import static org.assertj.core.api.Assertions.assertThat;

/** The engine CLI as a user runs it: exit codes, stdout, stderr. */
class MainTest {

    record Run(int code, String out, String err) {
    }

    static Run run(String... argv) {
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        ByteArrayOutputStream err = new ByteArrayOutputStream();
        int code = Main.run(argv, new PrintStream(out, true, StandardCharsets.UTF_8), new PrintStream(err, true, StandardCharsets.UTF_8));
        return new Run(code, out.toString(StandardCharsets.UTF_8), err.toString(StandardCharsets.UTF_8));
    }

    @Test
    void generatePrintsThePromptAndAFluentContinuation() {
        Run r = run("generate", "--model", TestModels.stories260K().toString(), "--tokenizer", TestModels.tok512().toString(),
                "--prompt", "Once upon a time", "--max-tokens", "120", "--temperature", "0", "--backend", "cpu");
        assertThat(r.code()).as(r.err()).isZero();
        assertThat(r.out()).startsWith("Once upon a time, there was a little girl named Lily.");
        assertThat(r.err()).contains("tok/s").contains("generated");
    }

    @Test
    void generateOnTheConvertedGgufGivesTheSameText(@TempDir Path dir) {
        Path gguf = dir.resolve("stories.gguf");
        Run conv = run("convert", "--model", TestModels.stories260K().toString(), "--tokenizer", TestModels.tok512().toString(),
                "--out", gguf.toString());
        assertThat(conv.code()).as(conv.err()).isZero();
        Run fromBin = run("generate", "--model", TestModels.stories260K().toString(), "--tokenizer",
                TestModels.tok512().toString(), "--prompt", "The cat", "--max-tokens", "80", "--temperature", "0");
        Run fromGguf = run("generate", "--model", gguf.toString(), "--prompt", "The cat", "--max-tokens", "80",
                "--temperature", "0");
        assertThat(fromGguf.code()).as(fromGguf.err()).isZero();
        assertThat(fromGguf.out()).isEqualTo(fromBin.out());
    }

    @Test
    void badCommandLinesSayWhatIsWrong(@TempDir Path dir) throws Exception {
        Run noCmd = run();
        assertThat(noCmd.code()).isEqualTo(2);
        assertThat(noCmd.err()).contains("generate").contains("bench");

        Run unknown = run("fly");
        assertThat(unknown.code()).isEqualTo(2);
        assertThat(unknown.err()).contains("unknown command 'fly'");

        Run missing = run("generate", "--model", dir.resolve("nope.bin").toString(), "--prompt", "x");
        assertThat(missing.code()).isEqualTo(2);
        assertThat(missing.err()).contains("no such file").contains("nope.bin");

        Run typo = run("generate", "--model", TestModels.stories260K().toString(), "--prompt", "x", "--max-tokns", "3");
        assertThat(typo.code()).isEqualTo(2);
        assertThat(typo.err()).contains("unknown option --max-tokns");

        String model = TestModels.stories260K().toString();
        String tok = TestModels.tok512().toString();
        Run empty = run("generate", "--model", model, "--tokenizer", tok, "--prompt", "");
        assertThat(empty.code()).isEqualTo(1);
        assertThat(empty.err()).contains("prompt is empty");

        Run zero = run("generate", "--model", model, "--tokenizer", tok, "--prompt", "hi", "--max-tokens", "0");
        assertThat(zero.code()).isEqualTo(1);
        assertThat(zero.err()).contains("max-tokens must be > 0");

        Run notNumber = run("generate", "--model", model, "--tokenizer", tok, "--prompt", "hi", "--temperature", "warm");
        assertThat(notNumber.code()).isEqualTo(2);
        assertThat(notNumber.err()).contains("--temperature must be a finite number");

        Path junk = dir.resolve("junk.bin");
        Files.write(junk, new byte[]{1, 2, 3});
        Run corrupt = run("generate", "--model", junk.toString(), "--tokenizer", tok, "--prompt", "hi");
        assertThat(corrupt.code()).isEqualTo(1);
        assertThat(corrupt.err()).contains("junk.bin");

        Run noTok = run("generate", "--model", model, "--prompt", "hi");
        assertThat(noTok.code()).isEqualTo(1);
        assertThat(noTok.err()).contains("tokenizer");
    }

    @Test
    void benchJsonHasTheDocumentedFields() {
        Run r = run("bench", "--model", TestModels.stories260K().toString(), "--tokenizer", TestModels.tok512().toString(),
                "--prompt-tokens", "16", "--gen-tokens", "8", "--batch", "1,4", "--repeats", "1", "--json");
        assertThat(r.code()).as(r.err()).isZero();
        assertThat(r.out().trim()).startsWith("{").endsWith("}")
                .contains("\"prefill_tok_s\":").contains("\"decode_tok_s\":{\"1\":").contains("\"4\":")
                .contains("\"peak_kv_pages\":").contains("\"mem_read_gbs\":");
    }
}
