package dev.pagewarden.cuda.cli;

import dev.pagewarden.command.Commands;
import dev.pagewarden.command.Json;
import dev.pagewarden.core.model.write.ModelGenerator;
import dev.pagewarden.core.model.DType;
import dev.pagewarden.core.model.ModelConfig;
import dev.pagewarden.cuda.cli.CheckRun.Verdict;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

import static org.assertj.core.api.Assertions.assertThat;

/** gpu-check's verdicts carry their reasons, and its CPU mode runs the backend-independent checks without a GPU. */
class GpuCheckCommandTest {
    private final ByteArrayOutputStream err = new ByteArrayOutputStream();
    private final PrintStream errStream = new PrintStream(err, true, StandardCharsets.UTF_8);

    @Test
    void aFailedCheckPrintsItsReasonAndTheJsonCarriesIt() {
        CheckRun run = new CheckRun(errStream);
        run.run("fine", () -> Verdict.PASS);
        run.run("graphs", () -> Verdict.when(1 >= 2, "%d graphs captured, 2 needed", 1));
        run.run("thrower", () -> {
            throw new IllegalStateException("a clean step was refused: page table has 2 pages");
        });
        run.skip("tags", "needs the gpu backend");
        Map<String, Object> r = new LinkedHashMap<>();
        run.report(r);

        assertThat(run.passed()).isFalse();
        assertThat(err.toString(StandardCharsets.UTF_8))
                .contains("gpu-check: graphs FAIL: 1 graphs captured, 2 needed")
                .contains("gpu-check: thrower FAIL: threw java.lang.IllegalStateException: a clean step was refused")
                .contains("skipped: needs the gpu backend");
        assertThat(r.get("pass")).isEqualTo(false);
        assertThat(r.get("failures")).asInstanceOf(org.assertj.core.api.InstanceOfAssertFactories.LIST)
                .containsExactly(Map.of("check", "graphs", "reason", "1 graphs captured, 2 needed"),
                        Map.of("check", "thrower", "reason",
                                "threw java.lang.IllegalStateException: a clean step was refused: page table has 2 pages"));
        assertThat(r.get("skipped")).asInstanceOf(org.assertj.core.api.InstanceOfAssertFactories.LIST)
                .containsExactly(Map.of("check", "tags", "reason", "needs the gpu backend"));
    }

    @Test
    void onlySkippedChecksDoNotPass() {
        CheckRun run = new CheckRun(errStream);
        run.skip("tags", "needs the gpu backend");
        assertThat(run.passed()).isFalse();
    }

    @Test
    @SuppressWarnings("unchecked")
    void theCpuModeRunsTheBackendIndependentChecksAndSaysWhichItSkipped(@TempDir Path dir) throws Exception {
        Path model = dir.resolve("tiny.gguf");
        ModelGenerator.generate(new ModelConfig(64, 160, 2, 8, 2, 300, 128, 1e-5f, 10000f, true), DType.F32,
                ModelGenerator.FileFormat.GGUF, 3, model, size -> done -> { });
        Path json = dir.resolve("check.json");
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        int rc = Commands.run("gpu", Commands.discovered(), new String[] {"gpu-check", "--backend", "cpu", "--model", model.toString(), "--tokens", "8",
                "--sweep", "3", "--out", json.toString()}, new PrintStream(out, true, StandardCharsets.UTF_8), errStream);

        assertThat(rc).as(err.toString(StandardCharsets.UTF_8)).isZero();
        Map<String, Object> r = (Map<String, Object>) Json.parse(Files.readString(json));
        assertThat(r).containsEntry("backend", "cpu").containsEntry("pass", true).containsEntry("failures", List.of());
        assertThat(r.get("decode_invariance_max_abs_diff")).isEqualTo(0.0);
        assertThat(r.get("parity_real_model_max_rel_error")).isEqualTo(0.0);
        List<Map<String, Object>> skipped = (List<Map<String, Object>>) r.get("skipped");
        assertThat(skipped).extracting(m -> m.get("check"))
                .containsExactly("device", "tags", "fused_rope", "graphs", "checksums", "quant_decode", "copy_bandwidth");
        assertThat(skipped).allSatisfy(m -> assertThat((String) m.get("reason")).contains("needs the gpu backend"));
        assertThat(err.toString(StandardCharsets.UTF_8)).contains("gpu-check: PASS (backend cpu)");
    }

    @Test
    void anUnknownBackendIsAUsageError() {
        int rc = Commands.run("gpu", Commands.discovered(), new String[] {"gpu-check", "--backend", "tpu", "--model", "pom.xml"},
                new PrintStream(new ByteArrayOutputStream(), true, StandardCharsets.UTF_8), errStream);
        assertThat(rc).isEqualTo(2);
        assertThat(err.toString(StandardCharsets.UTF_8)).contains("--backend must be gpu or cpu, got tpu");
    }
}
