package dev.pagewarden.core.tensor;

import dev.pagewarden.core.model.Tensor;

/**
 * Matrix times a batch of vectors: {@code out[b*rows + r] = dot(W[r], x[b*cols ...])}.
 *
 * <p>Contract (batch invariance): the value of each output is bit-identical whatever the batch size,
 * the position of the vector in the batch, and the thread count. So each dot product runs with one
 * fixed accumulation order, with no lane reduction whose order the JIT may choose.
 *
 * <p>STUB: scalar version; the kernels work replaces it with Vector API code.
 */
public final class MatMul {
    private MatMul() {
    }

    public static void matmul(Parallel pool, Tensor w, float[] x, int batch, float[] out) {
        int rows = w.rows();
        int cols = w.cols();
        pool.forRange(rows, (start, end) -> {
            for (int r = start; r < end; r++) {
                for (int b = 0; b < batch; b++) {
                    float acc = 0f;
                    for (int c = 0; c < cols; c++) {
                        acc += w.get(r, c) * x[b * cols + c];
                    }
                    out[b * rows + r] = acc;
                }
            }
        });
    }
}
