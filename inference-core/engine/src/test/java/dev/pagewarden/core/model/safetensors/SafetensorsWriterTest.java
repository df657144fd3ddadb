package dev.pagewarden.core.model.safetensors;

import dev.pagewarden.core.model.DType;
import dev.pagewarden.core.model.ModelFormatException;
import dev.pagewarden.core.model.Tensor;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.lang.foreign.Arena;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * The production writer against {@link SafetensorsTestWriter}, written from the format's description:
 * the same tensors give the same bytes; bf16 rounds to nearest (the test writer truncates, so only
 * values bf16 holds exactly are compared byte for byte).
 */
class SafetensorsWriterTest {
    @TempDir
    Path dir;

    @Test
    void writesTheBytesTheFormatDescribes() throws Exception {
        float[] a = {1, -2, 0.5f, 3.25f, -0.125f, 7};
        float[] b = {0.25f, -1.5f, 2};
        float[] c = {1.5f, -3, 0.75f, 9};
        SafetensorsTestWriter oracle = new SafetensorsTestWriter().add("a", "F32", List.of(2L, 3L), a)
                .add("b", "F16", List.of(3L), b).add("c", "BF16", List.of(2L, 2L), c);
        oracle.write(dir.resolve("oracle.safetensors"));
        SafetensorsWriter w = new SafetensorsWriter()
                .addMatrix("a", DType.F32, 2, 3, (row, dst) -> System.arraycopy(a, row * 3, dst, 0, 3))
                .addVector("b", DType.F16, 3, (row, dst) -> System.arraycopy(b, 0, dst, 0, 3))
                .addMatrix("c", DType.BF16, 2, 2, (row, dst) -> System.arraycopy(c, row * 2, dst, 0, 2));
        Path out = dir.resolve("w.safetensors");
        w.write(out, done -> { });
        assertThat(Files.size(out)).isEqualTo(w.fileSize());
        assertThat(Files.readAllBytes(out)).isEqualTo(Files.readAllBytes(dir.resolve("oracle.safetensors")));
    }

    @Test
    void bf16RoundsToNearest() throws Exception {
        // 1 + 2^-8 + 2^-23 lies just above the midpoint between bf16's 1 and 1 + 2^-7
        float x = Float.intBitsToFloat(0x3f80_8001);
        Path out = dir.resolve("r.safetensors");
        new SafetensorsWriter().addVector("x", DType.BF16, 1, (row, dst) -> dst[0] = x).write(out, done -> { });
        try (Arena arena = Arena.ofConfined()) {
            Map<String, SafetensorsTensor> t = SafetensorsReader.read(out, arena);
            SafetensorsTensor v = t.get("x");
            assertThat(new Tensor("x", v.type(), 1, 1, v.data()).get(0, 0)).isEqualTo(1f + 0x1p-7f);
        }
    }

    @Test
    void quantisedTypesAreRefused() {
        assertThatThrownBy(() -> new SafetensorsWriter().addVector("q", DType.Q8_0, 32, (row, dst) -> { }))
                .isInstanceOf(ModelFormatException.class).hasMessageContaining("f32, f16 or bf16 weights, not q8_0");
    }
}
