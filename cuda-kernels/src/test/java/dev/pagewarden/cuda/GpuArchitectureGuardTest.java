package dev.pagewarden.cuda;

import dev.pagewarden.core.model.write.ModelGenerator;
import dev.pagewarden.core.model.write.ModelShape;
import dev.pagewarden.core.backend.BackendOptions;
import dev.pagewarden.core.model.DType;
import dev.pagewarden.core.model.ModelConfig;
import dev.pagewarden.core.model.load.LoadedModel;
import dev.pagewarden.core.model.load.ModelLoader;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Path;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * The device kernels run every architecture the CPU runs; the matvec kernels take F32, F16, BF16 and Q8_0,
 * and Q4_0 and the K-quants need the tensor-core GEMM's property. Models with other matrix types are refused
 * with a pointer to the CPU backend.
 */
class GpuArchitectureGuardTest {
    @TempDir
    Path dir;

    @Test
    void everyArchitectureTheCpuRunsIsAcceptedByTheGpuBackend() throws Exception {
        // qwen3 with a head size that makes the Q width (4 x 24) differ from dim
        String[][] cases = {{"llama", null, ""}, {"llama", "llama3", ""}, {"mistral", null, ""}, {"mistral", "llama3", ""},
                {"qwen2", null, ""}, {"qwen3", null, ""}, {"qwen3", null, ",head_dim=24"}};
        for (String[] c : cases) {
            String shape = "dim=64,hidden=128,layers=1,heads=4,kv_heads=2,vocab=300,seq=32" + c[2];
            ModelConfig cfg = ModelShape.parse(shape).forArchitecture(c[0], c[1]).config();
            Path file = dir.resolve(c[0] + "-" + c[1] + c[2].length() + ".gguf");
            ModelGenerator.generate(cfg, DType.F32, ModelGenerator.FileFormat.GGUF, 1, file, size -> done -> { });
            try (LoadedModel model = ModelLoader.load(file, null)) {
                assertThat(model.config().architecture().toString()).isEqualTo(c[0].equals("mistral") ? "llama" : c[0]);
                assertThat(model.config().ropeScaling() != null).isEqualTo(c[1] != null);
                assertThat(BackendSelectionTest.gpu().refusal(model)).as(String.join(" ", c[0], c[1], c[2])).isNull();
            }
        }
    }

    @Test
    void weightTypesWithoutDeviceKernelsAreRefusedAndTheKernelTypesAccepted() throws Exception {
        String shape = "dim=256,hidden=256,layers=1,heads=4,vocab=300,seq=32";
        for (DType type : DType.values()) {
            Path file = dir.resolve(type + ".gguf");
            ModelGenerator.generate(ModelShape.parse(shape).config(), type, ModelGenerator.FileFormat.GGUF, 1, file,
                    size -> done -> { });
            try (LoadedModel model = ModelLoader.load(file, null)) {
                String why = BackendSelectionTest.gpu().refusal(model);
                assertThat(GpuBackendProvider.refusal(model, true)).as("%s with the GEMM on", type).isNull();
                if (type == DType.F32 || type == DType.F16 || type == DType.Q8_0 || type == DType.BF16) {
                    assertThat(why).as(type.name()).isNull();
                } else {
                    assertThat(why).as(type.name()).contains("[" + type + "]").contains("needs backend 'cpu'")
                            .contains("tensor-core GEMM").contains("-Dpagewarden.gpu.gemm=true");
                    assertThatThrownBy(() -> BackendSelectionTest.gpu().create(model, new BackendOptions(1)))
                            .isInstanceOf(IllegalArgumentException.class).hasMessageContaining(why);
                }
            }
        }
    }
}
