package dev.pagewarden.core.tensor;

import dev.pagewarden.core.model.Dequantizer;
import dev.pagewarden.core.model.Tensor;

import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;

/**
 * Plain-Java row kernels for JVMs without the Vector API. Four interleaved accumulators give the CPU
 * independent chains; the order is fixed: {@code ((a0 + a1) + (a2 + a3)) + tail}.
 */
final class ScalarKernels implements RowKernels {
    static final ScalarKernels INSTANCE = new ScalarKernels();

    private ScalarKernels() {
    }

    @Override
    public String name() {
        return "scalar";
    }

    @Override
    public int lanesScratch() {
        return 0;
    }

    @Override
    public int panelHeight() {
        return 8; // any height gives the same bits; not the vector kernels' one, so tests show it
    }

    @Override
    public int panelBatch() {
        return 8; // the default panel loop has no register limit; any count is one call
    }

    @Override
    public float dot(MemorySegment w, long off, int n, float[] x, int xo) {
        float a0 = 0f, a1 = 0f, a2 = 0f, a3 = 0f;
        int i = 0;
        for (; i + 4 <= n; i += 4) {
            long p = off + 4L * i;
            a0 += w.get(Tensor.F32_LE, p) * x[xo + i];
            a1 += w.get(Tensor.F32_LE, p + 4) * x[xo + i + 1];
            a2 += w.get(Tensor.F32_LE, p + 8) * x[xo + i + 2];
            a3 += w.get(Tensor.F32_LE, p + 12) * x[xo + i + 3];
        }
        float tail = 0f;
        for (; i < n; i++) {
            tail += w.get(Tensor.F32_LE, off + 4L * i) * x[xo + i];
        }
        return ((a0 + a1) + (a2 + a3)) + tail;
    }

    @Override
    public void dot4x1(MemorySegment w, long off, long rowStride, int n, float[] x, int xo, float[] out, int oo,
                       int oRow) {
        for (int k = 0; k < 4; k++) {
            out[oo + k * oRow] = dot(w, off + k * rowStride, n, x, xo);
        }
    }

    @Override
    public void dot4x4(MemorySegment w, long off, long rowStride, int n, float[] x, int xo, int xStride,
                       float[] out, int oo, int oRow, int oStride, float[] lanes) {
        // The fallback does not optimise weight reuse: rows are re-read from L1 for each vector.
        for (int j = 0; j < 4; j++) {
            for (int k = 0; k < 4; k++) {
                out[oo + j * oStride + k * oRow] = dot(w, off + k * rowStride, n, x, xo + j * xStride);
            }
        }
    }

    /** fp16 to fp32: {@link Dequantizer#halfToFloat}, the one conversion every tier shares. */
    static float halfToFloat(short h) {
        return Dequantizer.halfToFloat(h);
    }

    @Override
    public void decodeF16(MemorySegment src, long off, int n, MemorySegment dst, long at) {
        for (int i = 0; i < n; i++) {
            dst.set(Tensor.F32_LE, at + 4L * i, halfToFloat(src.get(Tensor.I16_LE, off + 2L * i)));
        }
    }

    @Override
    public void decodeQ8(MemorySegment src, long off, int n, MemorySegment dst, long at) {
        for (int block = 0; block < n / 32; block++) {
            long b = off + 34L * block;
            float scale = halfToFloat(src.get(Tensor.I16_LE, b));
            for (int j = 0; j < 32; j++) {
                // int8 * fp16 fits in 24 bits of mantissa: the product is exact, like the vector version.
                dst.set(Tensor.F32_LE, at + 4L * (32 * block + j), src.get(ValueLayout.JAVA_BYTE, b + 2 + j) * scale);
            }
        }
    }

    @Override
    public void axpy(float[] acc, int ao, float scale, MemorySegment v, long off, int n) {
        for (int i = 0; i < n; i++) {
            acc[ao + i] += scale * v.get(Tensor.F32_LE, off + 4L * i);
        }
    }

    @Override
    public float readAll(MemorySegment seg, long from, long to) {
        float a0 = 0f, a1 = 0f;
        long p = from;
        for (; p + 8 <= to; p += 8) {
            a0 += seg.get(Tensor.F32_LE, p);
            a1 += seg.get(Tensor.F32_LE, p + 4);
        }
        if (p < to) {
            a0 += seg.get(Tensor.F32_LE, p);
        }
        return a0 + a1;
    }
}
