package dev.pagewarden.cli.tools;

import dev.pagewarden.command.Args;
import dev.pagewarden.core.model.Architecture;
import dev.pagewarden.core.model.ModelConfig;
import dev.pagewarden.core.model.RopeScaling;
import dev.pagewarden.core.model.load.LoadedModel;
import dev.pagewarden.core.model.load.ModelLoader;
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

/** {@code make-model --arch ... [--rope-scaling llama3]}: files of each architecture, and the refusals. */
class MakeModelArchitectureTest {
    @TempDir
    Path dir;

    private int run(String... argv) throws Exception {
        ByteArrayOutputStream sink = new ByteArrayOutputStream();
        PrintStream ps = new PrintStream(sink, true, StandardCharsets.UTF_8);
        return new MakeModelCommand().run(new Args(List.of(argv), Set.of()), ps, ps);
    }

    private ModelConfig written(String... extra) throws Exception {
        Path out = dir.resolve("m.gguf");
        List<String> argv = new java.util.ArrayList<>(List.of("--shape",
                "dim=64,hidden=96,layers=1,heads=4,kv_heads=2,vocab=300,seq=32,head_dim=32", "--out", out.toString()));
        argv.addAll(List.of(extra));
        assertThat(run(argv.toArray(String[]::new))).isZero();
        try (LoadedModel m = ModelLoader.load(out, null)) {
            return m.config();
        }
    }

    @Test
    void eachArchitectureLoadsBackAsWhatWasAskedFor() throws Exception {
        assertThat(written().architecture()).isEqualTo(Architecture.LLAMA);
        ModelConfig qwen3 = written("--arch", "qwen3");
        assertThat(qwen3.architecture()).isEqualTo(Architecture.QWEN3);
        assertThat(qwen3.headSize()).isEqualTo(32);
        assertThat(qwen3.ropeTheta()).isEqualTo(1e6f);
        assertThat(qwen3.rmsEps()).isEqualTo(1e-6f);
        assertThat(written("--arch", "qwen2").architecture()).isEqualTo(Architecture.QWEN2);
        ModelConfig mistral = written("--arch", "mistral");
        assertThat(mistral.architecture()).isEqualTo(Architecture.LLAMA);
        assertThat(mistral.ropeTheta()).isEqualTo(1e6f);
        ModelConfig llama3 = written("--arch", "llama", "--rope-scaling", "llama3");
        assertThat(llama3.ropeScaling()).isEqualTo(RopeScaling.llama32(32, 500000));
        assertThat(llama3.ropeTheta()).isEqualTo(500000f);
    }

    @Test
    void badArchitectureChoicesAreRefusedByName() {
        String out = dir.resolve("x.gguf").toString();
        assertThatThrownBy(() -> run("--shape", "tiny-gqa", "--out", out, "--arch", "phi3"))
                .isInstanceOf(Args.UsageException.class).hasMessageContaining("unknown architecture 'phi3'")
                .hasMessageContaining("llama, mistral, qwen2, qwen3");
        assertThatThrownBy(() -> run("--shape", "tiny-gqa", "--out", out, "--arch", "qwen2", "--rope-scaling", "llama3"))
                .isInstanceOf(Args.UsageException.class).hasMessageContaining("not qwen2");
        assertThatThrownBy(() -> run("--shape", "tiny-gqa", "--out", out, "--rope-scaling", "yarn"))
                .isInstanceOf(Args.UsageException.class).hasMessageContaining("unknown rope scaling 'yarn'");
        assertThatThrownBy(() -> run("--shape", "tiny-gqa", "--out", dir.resolve("x.bin").toString(), "--arch", "qwen3"))
                .isInstanceOf(Args.UsageException.class).hasMessageContaining("--format gguf");
    }
}
