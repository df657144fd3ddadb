package dev.pagewarden.core.tensor;

import dev.pagewarden.core.model.DType;
import dev.pagewarden.core.model.Dequantizer;
import dev.pagewarden.core.model.Tensor;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;

import static org.assertj.core.api.Assertions.assertThat;

/** The Vector API block decoders give the scalar decoder's bits (which the float64 reference checks). */
class BlockDecodeTest {

    @ParameterizedTest
    @EnumSource(value = DType.class, names = {"BF16", "Q4_0", "Q4_K", "Q5_K", "Q6_K"})
    void vectorDecodeHasTheBitsOfTheScalarDecoder(DType type) {
        int n = 256 * 5;
        for (long seed = 1; seed <= 10; seed++) {
            Tensor t = TestTensors.random(type, 3, n, seed % 2 == 0 ? 0 : 28, seed);
            MemorySegment vector = Arena.ofAuto().allocate(4L * n + 12);
            MemorySegment scalar = Arena.ofAuto().allocate(4L * n + 12);
            for (int r = 0; r < t.rows(); r++) {
                VectorKernels.INSTANCE.decode(type, t.data(), r * t.rowBytes(), n, vector, 12);
                ScalarKernels.INSTANCE.decode(type, t.data(), r * t.rowBytes(), n, scalar, 12);
                float[] direct = new float[n];
                Dequantizer.row(type, t.data(), r * t.rowBytes(), n, direct, 0);
                for (int k = 0; k < n; k++) {
                    int v = Float.floatToRawIntBits(vector.get(Tensor.F32_LE, 12 + 4L * k));
                    assertThat(v).as("%s seed %d row %d element %d", type, seed, r, k)
                            .isEqualTo(Float.floatToRawIntBits(scalar.get(Tensor.F32_LE, 12 + 4L * k)))
                            .isEqualTo(Float.floatToRawIntBits(direct[k]));
                }
            }
        }
    }
}
