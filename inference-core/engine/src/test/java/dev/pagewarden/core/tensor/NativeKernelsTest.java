package dev.pagewarden.core.tensor;

import dev.pagewarden.core.model.DType;
import dev.pagewarden.core.model.ReferenceDequant;
import dev.pagewarden.core.model.Tensor;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.util.ArrayList;
import java.util.List;
import java.util.SplittableRandom;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

/**
 * The native quantized kernels against the float64 reference, for every weight type and every
 * instruction-set path this CPU runs (the others are reported skipped), on random blocks with ordinary,
 * subnormal and extreme fp16 scales and activation blocks from 1e-38 (subnormal floats) to 1e15.
 *
 * <p>Tolerances. The kernels round each activation block to 8 bits: {@code x ~ q*d} with
 * {@code d = amax/127}, so {@code |x - q*d| <= amax/254} (plus the rounding of {@code d} to float). The
 * integer products are exact; what is left is float rounding in the per-block scaling and the sum over
 * blocks, at most a few units of 2^-24 per block relative to the block's magnitude. Hence three checks:
 * the stored activations within {@code amax/254 + 127*(d*2^-23 + 2^-149)} of x; each output within
 * {@code 2^-16 * sum_i m_i*|q_i*d|} of the float64 product of the dequantized weights with the
 * dequantized activations (m_i: |w_i|, and for Q4_K/Q5_K the magnitudes of both terms {@code d*sc*q}
 * and {@code dmin*m}, which the kernels scale separately), plus {@code 2^-120} per block for products of
 * scales that fall below the float range; and each output within the sum of those two errors of the
 * float64 product with the original activations. Every path gives the bits of the scalar C path.
 */
class NativeKernelsTest {
    static final DType[] TYPES = {DType.Q8_0, DType.Q4_0, DType.Q4_K, DType.Q5_K, DType.Q6_K};

    static NativeKernels kernels() {
        NativeKernels k = NativeKernels.instance();
        assumeTrue(k != null, NativeKernels.reason());
        return k;
    }

    static List<Arguments> cases() {
        List<Arguments> out = new ArrayList<>();
        for (NativeKernels.Isa isa : NativeKernels.Isa.values()) {
            for (DType t : TYPES) {
                out.add(Arguments.of(isa, t));
            }
        }
        return out;
    }

    /** Rows with random quants; block scales drawn from ordinary, subnormal and extreme fp16 values. */
    static Tensor weights(DType type, int rows, int cols, long seed) {
        Tensor t = TestTensors.random(type, rows, cols, 3, seed); // 3: an unaligned start
        SplittableRandom rnd = new SplittableRandom(seed);
        MemorySegment d = t.data();
        for (long p = 0; p < d.byteSize(); p += type.blockBytes()) {
            int kind = rnd.nextInt(6);
            short[] halves = switch (kind) {
                case 0 -> new short[] {(short) rnd.nextInt(1, 0x400), (short) rnd.nextInt(1, 0x400)}; // subnormal
                case 1 -> new short[] {(short) 0x7bff, (short) 0x7bff}; // the largest finite half
                case 2 -> new short[] {(short) 0xfbff, (short) 0x0001}; // negative, the smallest subnormal
                default -> null; // as random() drew it
            };
            if (halves == null) {
                continue;
            }
            switch (type) {
                case Q6_K -> d.set(Tensor.I16_LE, p + 208, halves[0]);
                case Q4_K, Q5_K -> {
                    d.set(Tensor.I16_LE, p, halves[0]);
                    d.set(Tensor.I16_LE, p + 2, halves[1]);
                }
                default -> d.set(Tensor.I16_LE, p, halves[0]);
            }
        }
        return t;
    }

    /** Activation rows whose blocks of 32 have magnitudes from subnormal to 1e15, some all zero. */
    static float[] activations(int n, int batch, long seed) {
        SplittableRandom rnd = new SplittableRandom(seed);
        float[] x = new float[n * batch];
        double[] scales = {1, 1, 1, 1e-38, 1e-30, 1e-3, 1e15, 0};
        for (int b = 0; b < x.length / 32; b++) {
            double s = scales[rnd.nextInt(scales.length)];
            for (int i = 0; i < 32; i++) {
                x[32 * b + i] = (float) (rnd.nextDouble(-1, 1) * s);
            }
        }
        return x;
    }

    @ParameterizedTest(name = "{0} {1}")
    @MethodSource("cases")
    void everyPathMatchesTheFloat64ReferenceWithinTheActivationRounding(NativeKernels.Isa isa, DType type) {
        NativeKernels k = kernels();
        assumeTrue(k.supports(isa), "this CPU lacks " + isa);
        // 23 rows: a tile of sixteen (AVX-512 VNNI: Q8_0 and Q4_0 from 4 vectors on, the K-quants from 16),
        // then seven more; 6 vectors: a group of four, then two; 18: four groups of four, then two
        for (int batch : new int[] {6, 18}) {
            matchesTheReferences(k, isa, type, 23, batch);
        }
    }

    private static void matchesTheReferences(NativeKernels k, NativeKernels.Isa isa, DType type, int rows, int batch) {
        int cols = type.blockSize() == 32 ? 32 * 37 : 256 * 5;
        Tensor w = weights(type, rows, cols, 11 + type.ordinal());
        float[] x = activations(cols, batch, 5 + type.ordinal());
        int format = NativeKernels.format(type);
        int group = format == NativeKernels.A32 ? 32 : 256;
        long rowBytes = NativeKernels.actRowBytes(format, cols);
        MemorySegment acts = Arena.ofAuto().allocate(batch * rowBytes, 64);
        k.quantize(format, x, cols, 0, batch, acts);
        float[] out = new float[batch * rows];
        k.matmul(isa, w, 0, rows, acts, batch, out);

        double[] xq = new double[x.length];
        double[] quantErr = new double[x.length];
        for (int b = 0; b < batch; b++) {
            for (int g = 0; g < cols / group; g++) {
                // A32: the row's heads (float d, int32 sum) first, then its blocks' quants; A256: whole blocks
                boolean a32 = format == NativeKernels.A32;
                long blk = b * rowBytes + (long) g * (a32 ? 8 : 296);
                long quants = a32 ? b * rowBytes + 8L * (cols / 32) + 32L * g : blk + 40;
                float d = acts.get(ValueLayout.JAVA_FLOAT_UNALIGNED, blk);
                double amax = 0;
                for (int i = 0; i < group; i++) {
                    amax = Math.max(amax, Math.abs(x[b * cols + g * group + i]));
                }
                double bound = amax / 254 + 127 * (Math.abs(d) * 0x1p-23 + 0x1p-149);
                for (int i = 0; i < group; i++) {
                    int e = b * cols + g * group + i;
                    int q = acts.get(ValueLayout.JAVA_BYTE, quants + i);
                    xq[e] = (double) q * d;
                    assertThat(Math.abs(x[e] - xq[e])).as("activation %d", e).isLessThanOrEqualTo(bound);
                    quantErr[e] = bound;
                }
            }
        }
        for (int r = 0; r < rows; r++) {
            double[] wr = ReferenceDequant.row(type, w.data(), r * w.rowBytes(), cols);
            double[] mag = magnitudes(w, r);
            for (int b = 0; b < batch; b++) {
                double refq = 0, ref = 0, slack = cols / type.blockSize() * 0x1p-120, roundErr = 0;
                for (int c = 0; c < cols; c++) {
                    refq += wr[c] * xq[b * cols + c];
                    ref += wr[c] * x[b * cols + c];
                    slack += 0x1p-16 * mag[c] * Math.abs(xq[b * cols + c]);
                    roundErr += Math.abs(wr[c]) * quantErr[b * cols + c];
                }
                double got = out[b * rows + r];
                String what = isa + " " + type + " batch " + batch + " row " + r + " vector " + b;
                assertThat(Math.abs(got - refq)).as(what + " against the rounded activations").isLessThanOrEqualTo(slack);
                assertThat(Math.abs(got - ref)).as(what + " against the activations").isLessThanOrEqualTo(slack + roundErr * (1 + 1e-9));
            }
        }
        float[] scalar = new float[batch * rows];
        k.matmul(NativeKernels.Isa.SCALAR, w, 0, rows, acts, batch, scalar);
        assertArrayEquals(TestTensors.bits(scalar), TestTensors.bits(out),
                isa + " " + type + " batch " + batch + " against the scalar path");
    }

    /** |w| per element, and for Q4_K/Q5_K |d*sc*q| + |dmin*m| (the two terms are rounded separately). */
    static double[] magnitudes(Tensor w, int r) {
        int cols = w.cols();
        double[] mag = new double[cols];
        if (w.type() != DType.Q4_K && w.type() != DType.Q5_K) {
            double[] v = ReferenceDequant.row(w.type(), w.data(), r * w.rowBytes(), cols);
            for (int c = 0; c < cols; c++) {
                mag[c] = Math.abs(v[c]);
            }
            return mag;
        }
        MemorySegment row = Arena.ofAuto().allocate(w.rowBytes());
        for (int part = 0; part < 2; part++) {
            row.copyFrom(w.data().asSlice(r * w.rowBytes(), w.rowBytes()));
            for (long p = 0; p < row.byteSize(); p += w.type().blockBytes()) {
                row.set(Tensor.I16_LE, p + 2 * (1 - part), (short) 0); // part 0: no min term; part 1: no scale term
            }
            double[] v = ReferenceDequant.row(w.type(), row, 0, cols);
            for (int c = 0; c < cols; c++) {
                mag[c] += Math.abs(v[c]);
            }
        }
        return mag;
    }

    @Test
    void aNonFiniteActivationMakesTheOutputNaN() {
        NativeKernels k = kernels();
        for (DType type : TYPES) {
            Tensor w = TestTensors.random(type, 2, 256, 0, 3);
            float[] x = TestTensors.randomFloats(256, 4);
            x[100] = Float.POSITIVE_INFINITY;
            int format = NativeKernels.format(type);
            MemorySegment acts = Arena.ofAuto().allocate(NativeKernels.actRowBytes(format, 256), 64);
            k.quantize(format, x, 256, 0, 1, acts);
            float[] out = new float[2];
            k.matmul(k.isa(), w, 0, 2, acts, 1, out);
            assertThat(out[0]).as(type.name()).isNaN();
            assertThat(out[1]).as(type.name()).isNaN();
        }
    }

    /**
     * Through {@link MatMul} as the CPU backend calls it: each output of a batch has the bits of the same
     * vector alone, with one thread and with two, for every type (and for several matrices in one call).
     */
    @Test
    void batchAndThreadInvariant() {
        kernels();
        for (DType type : TYPES) {
            // 67 rows: four tiles of sixteen and three more; up to 19 vectors: the K-quants' tiles from 16 on
            int rows = 67, cols = 512, n = 19;
            Tensor t = TestTensors.random(type, rows, cols, 0, 21);
            Matrix w = Matrix.rowMajor(t);
            float[] x = TestTensors.randomFloats(cols * n, 22);
            try (Parallel one = new Parallel(1); Parallel two = new Parallel(2)) {
                float[] alone = new float[rows];
                for (int b = 0; b < n; b++) {
                    float[] v = java.util.Arrays.copyOfRange(x, b * cols, (b + 1) * cols);
                    MatMul.matmul(one, w, v, 1, alone);
                    for (Parallel pool : new Parallel[] {one, two}) {
                        for (int batch : new int[] {b + 1, n}) {
                            float[] out = new float[batch * rows];
                            MatMul.matmul(pool, w, x, batch, out);
                            assertArrayEquals(TestTensors.bits(alone),
                                    TestTensors.bits(java.util.Arrays.copyOfRange(out, b * rows, (b + 1) * rows)),
                                    type + " vector " + b + " in a batch of " + batch + ", " + pool.threads() + " threads");
                        }
                    }
                }
                float[][] outs = {new float[n * rows], new float[n * rows]};
                MatMul.matmul(two, new Matrix[] {w, Matrix.rowMajor(TestTensors.random(DType.F32, rows, cols, 0, 1))}, x, n,
                        outs);
                float[] single = new float[n * rows];
                MatMul.matmul(one, w, x, n, single);
                assertArrayEquals(TestTensors.bits(single), TestTensors.bits(outs[0]), type + " among several matrices");
            }
        }
    }

    @Test
    void theLogLineNamesTheKernelsInUse() {
        String line = MatMul.kernelsInUse();
        if (NativeKernels.instance() != null) {
            assertThat(line).startsWith("native " + NativeKernels.instance().isa().name().toLowerCase(java.util.Locale.ROOT));
            assertThat(MatMul.servesNatively(DType.Q4_K)).isTrue();
            assertThat(MatMul.servesNatively(DType.BF16)).isFalse();
        } else {
            assertThat(line).startsWith(MatMul.implementation() + " for every type; ");
            assertThat(MatMul.servesNatively(DType.Q4_K)).isFalse();
        }
    }
}
