package dev.pagewarden.core.tensor;

import dev.pagewarden.core.model.DType;
import dev.pagewarden.core.model.Tensor;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.stream.Stream;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;

class MatMulTest {
    private static final java.lang.foreign.ValueLayout.OfInt INT_LE =
            java.lang.foreign.ValueLayout.JAVA_INT_UNALIGNED.withOrder(java.nio.ByteOrder.LITTLE_ENDIAN);


    /** Both implementations: the vector one is always present under surefire (it adds the module). */
    static List<RowKernels> kernels() {
        assertThat(Kernels.VECTOR).as("tests run with --add-modules jdk.incubator.vector").isTrue();
        return List.of(VectorKernels.INSTANCE, ScalarKernels.INSTANCE);
    }

    /** rows x cols, awkward on purpose: tails shorter than a vector, one row, one Q8_0 block. */
    static int[][] shapes(DType type) {
        if (type == DType.Q8_0 || type == DType.Q4_0) {
            return new int[][] {{1, 32}, {3, 64}, {33, 96}, {7, 288}, {5, 800}, {130, 768}};
        }
        if (type.blockSize() == 256) {
            return new int[][] {{1, 256}, {3, 512}, {33, 256}, {7, 768}, {130, 1024}};
        }
        return new int[][] {{1, 1}, {1, 37}, {7, 5}, {3, 16}, {33, 31}, {5, 33}, {17, 100}, {130, 768}, {9, 2051}, {6, 64}};
    }

    /** The two layouts of {@link Matrix}. */
    enum Layout {
        ROWS, PANELS;

        Matrix of(Tensor t, RowKernels k) {
            return this == ROWS ? Matrix.rowMajor(t) : TestTensors.panels(t, k);
        }
    }

    static Stream<Arguments> cases() {
        List<Arguments> out = new ArrayList<>();
        for (RowKernels k : kernels()) {
            for (DType type : DType.values()) {
                out.add(Arguments.of(k, type, Layout.ROWS));
            }
            out.add(Arguments.of(k, DType.F32, Layout.PANELS));
            out.add(Arguments.of(k, DType.F16, Layout.PANELS));
            out.add(Arguments.of(k, DType.Q8_0, Layout.PANELS));
        }
        return out.stream();
    }

    @ParameterizedTest(name = "{0} {1} {2}")
    @MethodSource("cases")
    void matchesFloat64ReferenceAndWritesEveryOutput(RowKernels k, DType type, Layout layout) {
        try (Parallel pool = new Parallel(2)) {
            long seed = 1;
            for (int[] shape : shapes(type)) {
                for (int batch : new int[] {1, 3, 4, 9}) {
                    Tensor w = TestTensors.random(type, shape[0], shape[1], seed % 2 == 0 ? 0 : 28, seed++);
                    float[] x = TestTensors.randomFloats(batch * shape[1], seed++);
                    float[] out = new float[batch * shape[0]];
                    Arrays.fill(out, Float.NaN); // poisoned: every element must be overwritten
                    MatMul.matmul(pool, layout.of(w, k), x, batch, out, k);
                    double[] ref = TestTensors.referenceMatmul(w, x, batch);
                    double[] mag = TestTensors.magnitudes(w, x, batch);
                    for (int i = 0; i < out.length; i++) {
                        // float32 accumulation: error a small multiple of eps * sum |w*x|
                        assertThat((double) out[i]).as("%s %s %s %dx%d batch %d out[%d]", k.name(), type, layout, shape[0], shape[1], batch, i)
                                .isCloseTo(ref[i], org.assertj.core.data.Offset.offset(1e-5 * mag[i] + 1e-30));
                    }
                }
            }
        }
    }

    @ParameterizedTest(name = "{0} {1} {2}")
    @MethodSource("cases")
    void batchPositionAndThreadCountDoNotChangeABit(RowKernels k, DType type, Layout layout) {
        try (Parallel one = new Parallel(1); Parallel two = new Parallel(2); Parallel three = new Parallel(3)) {
            long seed = 100;
            for (int[] shape : shapes(type)) {
                int rows = shape[0];
                int cols = shape[1];
                Matrix w = layout.of(TestTensors.random(type, rows, cols, 28, seed++), k); // llama2.c-like alignment
                float[] v = TestTensors.randomFloats(cols, seed++);
                float[] alone = new float[rows];
                MatMul.matmul(one, w, v, 1, alone, k);
                // 5: vectors one at a time (four-row tiles and single rows); 9: a group of eight
                // (two-row tiles) plus one; the vector at every position of both.
                for (int batch : new int[] {5, 9}) {
                    for (int pos = 0; pos < batch; pos++) {
                        float[] x = TestTensors.randomFloats(batch * cols, seed++);
                        System.arraycopy(v, 0, x, pos * cols, cols);
                        for (Parallel pool : List.of(one, two, three)) {
                            float[] out = new float[batch * rows];
                            MatMul.matmul(pool, w, x, batch, out, k);
                            float[] mine = Arrays.copyOfRange(out, pos * rows, (pos + 1) * rows);
                            assertArrayEquals(TestTensors.bits(alone), TestTensors.bits(mine),
                                    k.name() + " " + type + " " + layout + " " + rows + "x" + cols + " batch " + batch
                                            + " position " + pos + " threads " + pool.threads());
                        }
                    }
                }
            }
        }
    }

    @ParameterizedTest(name = "{0} {1} {2}")
    @MethodSource("cases")
    void unalignedWeightsGiveTheSameBits(RowKernels k, DType type, Layout layout) {
        try (Parallel pool = new Parallel(2)) {
            int cols = type.blockSize() == 256 ? 512 : type.blockSize() == 32 ? 96 : 67;
            Tensor aligned = TestTensors.random(type, 19, cols, 0, 7);
            Tensor at28 = TestTensors.copyAt(aligned, 28); // where llama2.c puts its fp32 data
            Tensor at3 = TestTensors.copyAt(aligned, 3);
            float[] x = TestTensors.randomFloats(2 * cols, 8);
            float[] expected = new float[2 * 19];
            MatMul.matmul(pool, layout.of(aligned, k), x, 2, expected, k);
            for (Tensor t : List.of(at28, at3)) {
                float[] out = new float[2 * 19];
                MatMul.matmul(pool, layout.of(t, k), x, 2, out, k);
                assertArrayEquals(TestTensors.bits(expected), TestTensors.bits(out));
            }
        }
    }

    @ParameterizedTest(name = "{0} {1} {2}")
    @MethodSource("cases")
    void sameBitsBeforeAndAfterJitCompilation(RowKernels k, DType type, Layout layout) {
        // The first calls of a fresh shape run partly interpreted / C1 (the Vector API's Java
        // fallback); thousands of calls later the loops are C2-compiled intrinsics. Other tests may
        // have compiled the kernels already: KernelDigestTest checks -Xint and C1-only JVMs as well.
        int cols = type.blockSize() == 256 ? 768 : type.blockSize() == 32 ? 160 : 83;
        Matrix w = layout.of(TestTensors.random(type, 11, cols, 28, 21), k);
        float[] x = TestTensors.randomFloats(6 * cols, 22);
        try (Parallel pool = new Parallel(2)) {
            float[] first = new float[6 * 11];
            MatMul.matmul(pool, w, x, 6, first, k);
            float[] later = new float[6 * 11];
            for (int i = 0; i < 20_000; i++) {
                MatMul.matmul(pool, w, x, 6, later, k);
            }
            assertArrayEquals(TestTensors.bits(first), TestTensors.bits(later));
        }
    }

    @Test
    void f16DecodeIsExactForAllHalfValuesAndBothKernelsAgree() {
        MemorySegment halves = Arena.ofAuto().allocate(2L * 65536 + 2, 64).asSlice(2); // unaligned, too
        for (int h = 0; h < 65536; h++) {
            halves.set(Tensor.I16_LE, 2L * h, (short) h);
        }
        MemorySegment scalar = Arena.ofAuto().allocate(4L * 65536, 64);
        ScalarKernels.INSTANCE.decodeF16(halves, 0, 65536, scalar, 0);
        MemorySegment vector = Arena.ofAuto().allocate(4L * 65536, 64);
        VectorKernels.INSTANCE.decodeF16(halves, 0, 65536, vector, 0);
        for (int h = 0; h < 65536; h++) {
            float expected = Float.float16ToFloat((short) h);
            int got = scalar.get(INT_LE, 4L * h);
            assertThat(Integer.toHexString(vector.get(INT_LE, 4L * h)))
                    .as("vector vs scalar, half 0x%04x", h).isEqualTo(Integer.toHexString(got));
            if (Float.isNaN(expected)) {
                // NaN: same sign and payload, quiet bit set
                int payload = (h & 0x3ff) << 13;
                assertThat(got).as("half 0x%04x", h).isEqualTo((h & 0x8000) << 16 | 0x7fc0_0000 | payload);
            } else {
                assertThat(Integer.toHexString(got)).as("half 0x%04x", h)
                        .isEqualTo(Integer.toHexString(Float.floatToRawIntBits(expected)));
            }
        }
    }

    @Test
    void q8DecodeMatchesTheTensorAccessor() {
        Tensor q = TestTensors.random(DType.Q8_0, 1, 32 * 9, 28, 5);
        for (RowKernels k : kernels()) {
            MemorySegment floats = Arena.ofAuto().allocate(4L * q.cols(), 64);
            k.decodeQ8(q.data(), 0, q.cols(), floats, 0);
            for (int c = 0; c < q.cols(); c++) {
                assertThat(floats.get(Tensor.F32_LE, 4L * c)).as("%s col %d", k.name(), c).isEqualTo(q.get(0, c));
            }
        }
    }

    @Test
    void publicEntryPointUsesTheVectorKernelsAndRejectsShortArrays() {
        assertThat(MatMul.implementation()).startsWith("vector-");
        Tensor w = TestTensors.random(DType.F32, 4, 8, 0, 1);
        try (Parallel pool = new Parallel(2)) {
            float[] out = new float[8];
            MatMul.matmul(pool, w, TestTensors.randomFloats(16, 2), 2, out);
            org.assertj.core.api.Assertions.assertThatThrownBy(
                    () -> MatMul.matmul(pool, w, new float[15], 2, out)).isInstanceOf(IllegalArgumentException.class);
            org.assertj.core.api.Assertions.assertThatThrownBy(
                    () -> MatMul.matmul(pool, w, new float[16], 2, new float[7])).isInstanceOf(IllegalArgumentException.class);
        }
    }

    /** One parallel loop over several matrices (and the fused SwiGLU) gives the bits of separate calls, any thread count. */
    @Test
    void fusedMatmulsMatchSeparateCalls() {
        record Case(DType type, Layout layout) {
        }
        for (Case cs : List.of(new Case(DType.F32, Layout.ROWS), new Case(DType.F16, Layout.ROWS),
                new Case(DType.F32, Layout.PANELS), new Case(DType.F16, Layout.PANELS))) {
            for (int batch : new int[] {1, 3, 8, 9}) {
                // 37 rows: whole panels and a partial one; 13: a partial panel alone
                Matrix a = cs.layout().of(TestTensors.random(cs.type(), 37, 96, 4, 11 + batch), Kernels.ROWS);
                Matrix b = cs.layout().of(TestTensors.random(cs.type(), 13, 96, 0, 12 + batch), Kernels.ROWS);
                Matrix c = cs.layout().of(TestTensors.random(cs.type(), 37, 96, 8, 13 + batch), Kernels.ROWS);
                float[] x = TestTensors.randomFloats(batch * 96, 14 + batch);
                for (int threads : new int[] {1, 2, 3}) {
                    try (Parallel pool = new Parallel(threads)) {
                        float[][] sep = {new float[batch * 37], new float[batch * 13], new float[batch * 37]};
                        MatMul.matmul(pool, a, x, batch, sep[0]);
                        MatMul.matmul(pool, b, x, batch, sep[1]);
                        MatMul.matmul(pool, c, x, batch, sep[2]);
                        float[][] fused = {new float[batch * 37], new float[batch * 13], new float[batch * 37]};
                        MatMul.matmul(pool, new Matrix[] {a, b, c}, x, batch, fused);
                        for (int i = 0; i < 3; i++) {
                            assertArrayEquals(TestTensors.bits(sep[i]), TestTensors.bits(fused[i]),
                                    cs + " batch " + batch + " threads " + threads + " matrix " + i);
                        }
                        float[] gate = new float[batch * 37];
                        float[] up = new float[batch * 37];
                        MatMul.swiglu(pool, a, c, x, batch, gate, up);
                        Ops.swiglu(sep[0], sep[2], 0, batch * 37);
                        assertArrayEquals(TestTensors.bits(sep[0]), TestTensors.bits(gate), "swiglu " + cs + " batch " + batch);
                        assertArrayEquals(TestTensors.bits(sep[2]), TestTensors.bits(up));
                    }
                }
            }
        }
    }

    /**
     * Panels have one arithmetic everywhere: a fused multiply-add chain per output in column
     * order. So the vector kernels (panels of one vector's lanes, two panels and eight vectors at a
     * time, or four panels and four vectors, or four panels and one vector), the scalar fallback
     * (panels of 8 rows) and that chain written out here as the oracle
     * agree bit for bit.
     */
    @Test
    void panelsGiveTheSameBitsInEveryImplementationAsOneFmaChainPerOutput() {
        // one thread: a chunk of many panels (four at a time, for one vector at batch 1 and, F32
        // only, for each group of four vectors at 4, 5, 8, 13, 16; pairs otherwise); three: chunks
        // of a unit or two
        try (Parallel one = new Parallel(1); Parallel three = new Parallel(3)) {
            long seed = 700;
            // 300 rows: four panels at a time, then a pair; 200: four at a time, then a partial panel
            for (int[] shape : new int[][] {{1, 1}, {7, 5}, {33, 31}, {64, 768}, {70, 100}, {9, 2051}, {300, 40},
                    {1, 32}, {33, 96}, {300, 64}, {200, 48}}) {
              for (DType type : shape[1] % 32 == 0 ? new DType[] {DType.F32, DType.F16, DType.Q8_0} : new DType[] {DType.F32, DType.F16}) {
                Tensor t = TestTensors.random(type, shape[0], shape[1], 28, seed++);
                for (int batch : new int[] {1, 2, 4, 5, 8, 13, 16}) {
                    float[] x = TestTensors.randomFloats(batch * shape[1], seed++);
                    float[] oracle = new float[batch * shape[0]];
                    for (int b = 0; b < batch; b++) {
                        for (int r = 0; r < shape[0]; r++) {
                            float acc = 0f;
                            for (int c = 0; c < shape[1]; c++) {
                                acc = Math.fma(t.get(r, c), x[b * shape[1] + c], acc);
                            }
                            oracle[b * shape[0] + r] = acc;
                        }
                    }
                    for (RowKernels k : kernels()) {
                        for (Parallel pool : List.of(one, three)) {
                            float[] out = new float[batch * shape[0]];
                            MatMul.matmul(pool, TestTensors.panels(t, k), x, batch, out, k);
                            assertArrayEquals(TestTensors.bits(oracle), TestTensors.bits(out), k.name() + " " + type + " "
                                    + shape[0] + "x" + shape[1] + " batch " + batch + " threads " + pool.threads());
                        }
                    }
                }
              }
            }
        }
    }

    @Test
    void packingKeepsEveryElementPadsWithZerosAndRejectsWhatItCannotHold() {
        Tensor t = TestTensors.random(DType.F32, 37, 11, 28, 3);
        Matrix.Panels p = TestTensors.panels(t, VectorKernels.INSTANCE);
        assertThat(p.height()).isEqualTo(VectorKernels.INSTANCE.panelHeight());
        assertThat(p.count()).isEqualTo((37 + p.height() - 1) / p.height());
        for (int r = 0; r < 37; r++) {
            for (int c = 0; c < 11; c++) {
                assertThat(p.get(r, c)).as("(%d, %d)", r, c).isEqualTo(t.get(r, c));
            }
        }
        for (int r = 37; r < p.count() * p.height(); r++) {
            for (int c = 0; c < 11; c++) {
                assertThat(p.get(r, c)).as("padding (%d, %d)", r, c).isZero();
            }
        }
        MemorySegment room = Arena.ofAuto().allocate(Matrix.Panels.bytesFor(DType.F32, 37, 11, 16));
        // an F16 matrix with an infinity, or a Q8_0 one with a NaN scale, stays row-major: the panel
        // kernels widen halves without that case
        Tensor half = TestTensors.random(DType.F16, 5, 7, 0, 5);
        assertThat(Matrix.Panels.packable(half)).isTrue();
        half.data().set(Tensor.I16_LE, 2L * 17, (short) 0x7c00);
        assertThat(Matrix.Panels.packable(half)).isFalse();
        Tensor q8 = TestTensors.random(DType.Q8_0, 2, 64, 0, 6);
        assertThat(Matrix.Panels.packable(q8)).isTrue();
        q8.data().set(Tensor.I16_LE, 34L * 3, (short) 0x7e00);
        assertThat(Matrix.Panels.packable(q8)).isFalse();
        org.assertj.core.api.Assertions.assertThatThrownBy(() -> Matrix.Panels.pack(half, 16, room))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("only F32 weights and finite F16/Q8_0");
        Tensor q8ok = TestTensors.random(DType.Q8_0, 37, 96, 0, 7);
        Matrix.Panels q8p = TestTensors.panels(q8ok, VectorKernels.INSTANCE);
        for (int r = 0; r < 37; r++) {
            for (int c = 0; c < 96; c++) {
                assertThat(q8p.get(r, c)).as("Q8_0 (%d, %d)", r, c).isEqualTo(q8ok.get(r, c));
            }
        }
        org.assertj.core.api.Assertions.assertThatThrownBy(() -> Matrix.Panels.pack(t, 32, room))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("destination");
        // panels of another height than the kernels read are refused, not misread
        int other = 2 * VectorKernels.INSTANCE.panelHeight();
        Matrix.Panels tall = Matrix.Panels.pack(t, other, Arena.ofAuto().allocate(Matrix.Panels.bytesFor(DType.F32, 37, 11, other)));
        try (Parallel pool = new Parallel(1)) {
            org.assertj.core.api.Assertions.assertThatThrownBy(
                            () -> MatMul.matmul(pool, tall, new float[11], 1, new float[37], VectorKernels.INSTANCE))
                    .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("panels of " + other + " rows");
        }
    }
}
