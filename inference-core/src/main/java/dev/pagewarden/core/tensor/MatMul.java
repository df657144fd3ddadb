package dev.pagewarden.core.tensor;

import dev.pagewarden.core.model.DType;
import dev.pagewarden.core.model.Tensor;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;

/**
 * Matrix times a batch of vectors: {@code out[b*rows + r] = dot(W[r], x[b*cols ...])}.
 *
 * <p>Contract (batch invariance): the value of each output is bit-identical whatever the batch size,
 * the position of the vector in the batch, and the thread count. So each dot product runs with one
 * fixed accumulation order, with no lane reduction whose order the JIT may choose.
 *
 * <p>How: rows are split into contiguous chunks over the {@link Parallel} pool (each output is
 * computed by one thread). Within a chunk, each weight row is brought in from memory once and used
 * for the whole batch: four vectors at a time by {@link RowKernels#dot4}, the rest one at a time by
 * {@link RowKernels#dot}, and those two perform identical arithmetic per vector. F16 and Q8_0 rows
 * are decoded (exactly) into a per-thread fp32 row that stays in L1, then go through the same dot
 * kernels as F32, which read the weights straight from the (possibly unaligned) segment.
 */
public final class MatMul {
    private MatMul() {
    }

    /** Per-thread fp32 row for decoded F16/Q8_0 weights, grown on demand. */
    private static final ThreadLocal<MemorySegment[]> DECODED = ThreadLocal.withInitial(() -> new MemorySegment[1]);

    public static void matmul(Parallel pool, Tensor w, float[] x, int batch, float[] out) {
        matmul(pool, w, x, batch, out, Kernels.ROWS);
    }

    /** Name of the kernels in use, e.g. {@code vector-512} or {@code scalar}. */
    public static String implementation() {
        return Kernels.ROWS.name();
    }

    /** As {@link #matmul(Parallel, Tensor, float[], int, float[])} with explicit kernels (tests). */
    static void matmul(Parallel pool, Tensor w, float[] x, int batch, float[] out, RowKernels kernels) {
        int rows = w.rows();
        int cols = w.cols();
        if (batch < 1) {
            throw new IllegalArgumentException("batch must be >= 1, got " + batch);
        }
        if (x.length < (long) batch * cols || out.length < (long) batch * rows) {
            throw new IllegalArgumentException("matmul " + w.name() + " " + rows + "x" + cols + " batch " + batch
                    + ": x has " + x.length + " floats, out has " + out.length);
        }
        pool.forRange(rows, (start, end) -> rows(kernels, w, x, batch, out, start, end));
    }

    private static void rows(RowKernels k, Tensor w, float[] x, int batch, float[] out, int start, int end) {
        int rows = w.rows();
        int cols = w.cols();
        MemorySegment data = w.data();
        long rowBytes = w.rowBytes();
        MemorySegment decoded = w.type() == DType.F32 ? null : decodedRow(cols);
        for (int r = start; r < end; r++) {
            MemorySegment src = data;
            long off = r * rowBytes;
            if (decoded != null) {
                if (w.type() == DType.F16) {
                    k.decodeF16(data, off, cols, decoded);
                } else {
                    k.decodeQ8(data, off, cols, decoded);
                }
                src = decoded;
                off = 0;
            }
            int b = 0;
            for (; b + 4 <= batch; b += 4) {
                k.dot4(src, off, cols, x, b * cols, cols, out, b * rows + r, rows);
            }
            for (; b < batch; b++) {
                out[b * rows + r] = k.dot(src, off, cols, x, b * cols);
            }
        }
    }

    private static MemorySegment decodedRow(int cols) {
        MemorySegment[] holder = DECODED.get();
        if (holder[0] == null || holder[0].byteSize() < 4L * cols) {
            holder[0] = Arena.ofAuto().allocate(4L * cols, 64);
        }
        return holder[0];
    }
}
