package dev.pagewarden.core.tensor;

import dev.pagewarden.core.model.Tensor;

import java.lang.foreign.MemorySegment;

/**
 * Plain-Java kernels for JVMs without the Vector API: the reference defaults of {@link RowKernels},
 * plus the orders of its own reductions. Four interleaved accumulators give the CPU independent
 * chains in a row's dot product; the order is fixed: {@code ((a0 + a1) + (a2 + a3)) + tail}.
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

    /** Left to right, one accumulator. */
    @Override
    public float dot(float[] a, int ao, float[] b, int bo, int n) {
        float acc = 0f;
        for (int i = 0; i < n; i++) {
            acc += a[ao + i] * b[bo + i];
        }
        return acc;
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
