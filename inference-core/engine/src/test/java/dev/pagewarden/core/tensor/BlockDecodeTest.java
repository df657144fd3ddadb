package dev.pagewarden.core.tensor;

import dev.pagewarden.core.model.DType;
import dev.pagewarden.core.model.Dequantizer;
import dev.pagewarden.core.model.Tensor;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The Vector API block decoders give the scalar decoder's bits (which the float64 reference checks),
 * and the kernels that compute on the blocks where they lie give the bits of decoding then
 * {@link RowKernels#dot4x1}.
 */
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

    @ParameterizedTest
    @EnumSource(value = DType.class, names = {"BF16", "Q4_K", "Q5_K", "Q6_K"})
    void inPlaceKernelsHaveTheBitsOfDecodeThenDot(DType type) {
        VectorKernels k = VectorKernels.INSTANCE;
        int n = 256 * 3;
        assertThat(k.fusesBlocks(type, n)).as("the vector kernels compute %s in place with 16 lanes", type)
                .isEqualTo(VectorKernels.L == 16);
        if (!k.fusesBlocks(type, n)) {
            return;
        }
        float[] lanes = new float[k.lanesScratch()];
        for (long seed = 1; seed <= 10; seed++) {
            // rows 0, 2, 4, 6 of 7 (a stride of two rows, as the four-stream tiles read them), unaligned or not
            Tensor t = TestTensors.random(type, 7, n, seed % 2 == 0 ? 0 : 3, seed);
            float[] x = TestTensors.randomFloats(n + 5, seed + 100);
            MemorySegment decoded = Arena.ofAuto().allocate(16L * n);
            for (int r = 0; r < 4; r++) {
                k.decode(type, t.data(), 2L * r * t.rowBytes(), n, decoded, 4L * n * r);
            }
            for (int rep = 0; rep < 3000; rep++) { // interpreted, then compiled: the same bits
                float[] expected = new float[8];
                float[] actual = new float[8];
                k.dot4x1(decoded, 0, 4L * n, n, x, 5, expected, 1, 2);
                k.blocks4x1(type, t.data(), 0, 2 * t.rowBytes(), n, x, 5, actual, 1, 2, lanes);
                assertThat(TestTensors.bits(actual)).as("%s seed %d", type, seed).isEqualTo(TestTensors.bits(expected));
                if (seed > 1) {
                    break;
                }
            }
        }
    }
}
