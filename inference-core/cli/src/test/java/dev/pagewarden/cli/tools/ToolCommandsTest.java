package dev.pagewarden.cli.tools;

import dev.pagewarden.command.Args;
import dev.pagewarden.command.Command;
import dev.pagewarden.core.model.DType;
import dev.pagewarden.core.model.load.LoadedModel;
import dev.pagewarden.core.model.load.ModelLoader;
import dev.pagewarden.core.testing.TestModels;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.List;
import java.util.Set;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

class ToolCommandsTest {
    @TempDir
    Path dir;
    private final ByteArrayOutputStream out = new ByteArrayOutputStream();
    private final ByteArrayOutputStream err = new ByteArrayOutputStream();

    private int run(Command c, String... argv) throws Exception {
        return c.run(new Args(List.of(argv), Set.of()), new PrintStream(out, true, StandardCharsets.UTF_8),
                new PrintStream(err, true, StandardCharsets.UTF_8));
    }

    @Test
    void makeModelWritesALoadableModel() throws Exception {
        Path gguf = dir.resolve("m.gguf");
        assertThat(run(new MakeModelCommand(), "--shape", "tiny-gqa", "--dtype", "q8_0", "--out", gguf.toString(),
                "--seed", "5")).isZero();
        assertThat(out.toString(StandardCharsets.UTF_8)).contains("wrote " + gguf).contains("Q8_0");
        try (LoadedModel m = ModelLoader.load(gguf, null)) {
            assertThat(m.config().nKvHeads()).isEqualTo(2);
            assertThat(m.weights().layers().getFirst().wk().type()).isEqualTo(DType.Q8_0);
        }
        Path bin = dir.resolve("m.bin");
        Path tok = dir.resolve("tok.bin");
        assertThat(run(new MakeModelCommand(), "--shape", "tiny-gqa", "--out", bin.toString(),
                "--tokenizer-out", tok.toString())).isZero();
        try (LoadedModel m = ModelLoader.load(bin, tok)) {
            assertThat(m.format()).isEqualTo("llama2c");
            assertThat(m.vocabulary().size()).isEqualTo(512);
        }
    }

    @Test
    void makeModelRejectsBadOptions() {
        String out = dir.resolve("x.bin").toString();
        assertThatThrownBy(() -> run(new MakeModelCommand(), "--shape", "tiny-gqa", "--dtype", "f16", "--out", out))
                .isInstanceOf(Args.UsageException.class).hasMessageContaining("--format gguf");
        assertThatThrownBy(() -> run(new MakeModelCommand(), "--shape", "tiny-gqa", "--dtype", "q4", "--out", out))
                .isInstanceOf(Args.UsageException.class).hasMessageContaining("--dtype must be f32, f16, bf16, q8_0");
        assertThatThrownBy(() -> run(new MakeModelCommand(), "--shape", "huge", "--out", out))
                .isInstanceOf(Args.UsageException.class).hasMessageContaining("--shape: unknown model shape 'huge'");
        assertThatThrownBy(() -> run(new MakeModelCommand(), "--shape", "tiny-gqa", "--out", out, "--colour", "red"))
                .isInstanceOf(Args.UsageException.class).hasMessageContaining("--colour");
        assertThatThrownBy(() -> run(new MakeModelCommand(), "--shape", "tiny-gqa", "--out", out, "--format", "onnx"))
                .isInstanceOf(Args.UsageException.class).hasMessageContaining("--format must be bin, gguf or safetensors");
    }

    @Test
    void convertCommand() throws Exception {
        Path gguf = dir.resolve("s.gguf");
        assertThat(run(new ConvertCommand(), "--model", TestModels.stories260K().toString(), "--tokenizer",
                TestModels.tok512().toString(), "--out", gguf.toString(), "--dtype", "f16")).isZero();
        try (LoadedModel m = ModelLoader.load(gguf, null)) {
            assertThat(m.weights().layers().getFirst().wq().type()).isEqualTo(DType.F16);
            assertThat(m.vocabulary().size()).isEqualTo(512);
        }
        assertThatThrownBy(() -> run(new ConvertCommand(), "--model", TestModels.stories260K().toString(),
                "--out", dir.resolve("t.gguf").toString()))
                .hasMessageContaining("--tokenizer");
        assertThat(new ConvertCommand().name()).isEqualTo("convert");
        assertThat(new MakeModelCommand().name()).isEqualTo("make-model");
    }

    @Test
    void progressBarPrintsAtMostElevenLinesOffConsole() {
        ByteArrayOutputStream buf = new ByteArrayOutputStream();
        ProgressBar bar = new ProgressBar(new PrintStream(buf, true, StandardCharsets.UTF_8), "write", 1000, false);
        for (long done = 0; done <= 1000; done += 7) {
            bar.accept(done);
        }
        bar.accept(1000);
        List<String> lines = buf.toString(StandardCharsets.UTF_8).lines().toList();
        assertThat(lines).hasSizeBetween(10, 11);
        assertThat(lines.getLast()).startsWith("write 100%").contains("MB/s");
    }
}
