package dev.pagewarden.core.tensor;

import dev.pagewarden.core.model.DType;
import dev.pagewarden.core.model.ReferenceDequant;
import dev.pagewarden.core.model.Tensor;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.util.SplittableRandom;

/** Random test inputs and float64 reference results. */
final class TestTensors {
    private TestTensors() {
    }

    /** A random {@code rows x cols} tensor whose data starts {@code offset} bytes into a fresh 64-aligned buffer. */
    static Tensor random(DType type, int rows, int cols, long offset, long seed) {
        long bytes = type.bytesFor((long) rows * cols);
        MemorySegment data = Arena.ofAuto().allocate(bytes + offset, 64).asSlice(offset, bytes);
        SplittableRandom rnd = new SplittableRandom(seed);
        switch (type) {
            case F32 -> {
                for (long p = 0; p < bytes; p += 4) {
                    data.set(Tensor.F32_LE, p, (float) rnd.nextDouble(-1, 1));
                }
            }
            case F16 -> {
                for (long p = 0; p < bytes; p += 2) {
                    data.set(Tensor.I16_LE, p, Float.floatToFloat16((float) rnd.nextDouble(-1, 1)));
                }
            }
            case Q8_0 -> {
                for (long p = 0; p < bytes; p += 34) {
                    data.set(Tensor.I16_LE, p, Float.floatToFloat16((float) rnd.nextDouble(0.001, 0.05)));
                    for (int j = 0; j < 32; j++) {
                        data.set(ValueLayout.JAVA_BYTE, p + 2 + j, (byte) rnd.nextInt(-128, 128));
                    }
                }
            }
            case BF16 -> {
                for (long p = 0; p < bytes; p += 2) {
                    data.set(Tensor.I16_LE, p, (short) (Float.floatToRawIntBits((float) rnd.nextDouble(-1, 1)) >>> 16));
                }
            }
            default -> {
                // every bit pattern of quants and sub-block scales; fp16 scales small and finite
                for (long p = 0; p < bytes; p++) {
                    data.set(ValueLayout.JAVA_BYTE, p, (byte) rnd.nextInt(256));
                }
                for (long p = 0; p < bytes; p += type.blockBytes()) {
                    switch (type) {
                        case Q4_0 -> data.set(Tensor.I16_LE, p, Float.floatToFloat16((float) rnd.nextDouble(-0.2, 0.2)));
                        case Q4_K, Q5_K -> {
                            data.set(Tensor.I16_LE, p, Float.floatToFloat16((float) rnd.nextDouble(0.0005, 0.002)));
                            data.set(Tensor.I16_LE, p + 2, Float.floatToFloat16((float) rnd.nextDouble(0.0005, 0.004)));
                        }
                        case Q6_K -> data.set(Tensor.I16_LE, p + 208, Float.floatToFloat16((float) rnd.nextDouble(-0.0005, 0.0005)));
                        default -> throw new IllegalArgumentException(type.name());
                    }
                }
            }
        }
        return new Tensor("test", type, rows, cols, data);
    }

    /** The same tensor with its bytes copied to {@code offset} bytes into a new buffer. */
    static Tensor copyAt(Tensor t, long offset) {
        MemorySegment data = Arena.ofAuto().allocate(t.data().byteSize() + offset, 64).asSlice(offset, t.data().byteSize());
        data.copyFrom(t.data());
        return new Tensor(t.name(), t.type(), t.rows(), t.cols(), data);
    }

    /** {@code t} repacked into panels of the height {@code kernels} read. */
    static Matrix.Panels panels(Tensor t, RowKernels kernels) {
        int h = kernels.panelHeight();
        return Matrix.Panels.pack(t, h, Arena.ofAuto().allocate(Matrix.Panels.bytesFor(t.type(), t.rows(), t.cols(), h), 64));
    }

    /** A fresh 64-aligned buffer of {@code bytes} (whole floats) filled with {@link #randomFloats}. */
    static MemorySegment randomSegment(long bytes, long seed) {
        MemorySegment mem = Arena.ofAuto().allocate(bytes, 64);
        float[] data = randomFloats((int) (bytes / 4), seed);
        MemorySegment.copy(data, 0, mem, ValueLayout.JAVA_FLOAT, 0, data.length);
        return mem;
    }

    static float[] randomFloats(int n, long seed) {
        SplittableRandom rnd = new SplittableRandom(seed);
        float[] x = new float[n];
        for (int i = 0; i < n; i++) {
            x[i] = (float) rnd.nextDouble(-1, 1);
        }
        return x;
    }

    /** Naive float64 matmul: {@code [b*rows + r] = sum_c W[r][c] * x[b*cols + c]}. */
    static double[] referenceMatmul(Tensor w, float[] x, int batch) {
        double[] out = new double[batch * w.rows()];
        for (int b = 0; b < batch; b++) {
            for (int r = 0; r < w.rows(); r++) {
                double s = 0;
                for (int c = 0; c < w.cols(); c++) {
                    s += weight(w, r, c) * x[b * w.cols() + c];
                }
                out[b * w.rows() + r] = s;
            }
        }
        return out;
    }

    /** {@code sum_c |W[r][c] * x[b*cols + c]|}: the scale of the rounding error of each output. */
    static double[] magnitudes(Tensor w, float[] x, int batch) {
        double[] out = new double[batch * w.rows()];
        for (int b = 0; b < batch; b++) {
            for (int r = 0; r < w.rows(); r++) {
                double s = 0;
                for (int c = 0; c < w.cols(); c++) {
                    s += Math.abs(weight(w, r, c) * x[b * w.cols() + c]);
                }
                out[b * w.rows() + r] = s;
            }
        }
        return out;
    }

    /** Element (r, c) decoded by the independent float64 reference. */
    static double weight(Tensor w, int r, int c) {
        return ReferenceDequant.value(w.type(), w.data(), r * w.rowBytes(), c);
    }

    static int[] bits(float[] values) {
        int[] bits = new int[values.length];
        for (int i = 0; i < values.length; i++) {
            bits[i] = Float.floatToRawIntBits(values[i]);
        }
        return bits;
    }
}
