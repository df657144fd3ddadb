package dev.pagewarden.core.tensor;

import dev.pagewarden.core.model.DType;
import dev.pagewarden.core.model.Tensor;

import java.util.List;
import java.util.zip.CRC32;

/**
 * Prints a checksum of the bits of a fixed set of kernel results computed with the kernels this
 * JVM selects. {@link KernelDigestTest} runs it in child JVMs (interpreter only, C1 only, without
 * the Vector API module) and compares with the same results computed here after C2 compilation.
 */
public final class KernelDigest {
    private KernelDigest() {
    }

    public static void main(String[] args) {
        if (args.length > 0 && args[0].equals("selfcheck")) {
            System.out.println(selfCheck() + " " + MatMul.implementation());
            return;
        }
        System.out.println(MatMul.implementation() + " " + digest(Kernels.ROWS, Kernels.VECTOR));
    }

    /**
     * For JVMs with another vector width than the test JVM's: batch 1 against batch 9 (the vector
     * at every position), 1 against 2 threads, and a float64 reference. "ok" or the first failure.
     */
    static String selfCheck() {
        try (Parallel one = new Parallel(1); Parallel two = new Parallel(2)) {
            long seed = 500;
            for (DType type : DType.values()) {
                int[][] shapes = type.blockSize() == 32 ? new int[][] {{5, 32}, {9, 96}, {6, 800}}
                        : type.blockSize() == 256 ? new int[][] {{5, 256}, {9, 512}, {3, 768}}
                        : new int[][] {{5, 3}, {9, 37}, {6, 771}, {7, 64}};
                for (int[] shape : shapes) {
                    Tensor t = TestTensors.random(type, shape[0], shape[1], 28, seed++);
                    List<Matrix> layouts = Matrix.Panels.packable(t)
                            ? List.of(Matrix.rowMajor(t), TestTensors.panels(t, Kernels.ROWS)) : List.of(Matrix.rowMajor(t));
                    for (Matrix w : layouts) {
                        String failure = check(one, two, t, w, seed);
                        seed += 10;
                        if (failure != null) {
                            return failure;
                        }
                    }
                }
            }
        }
        return "ok";
    }

    /** Reference and batch/thread invariance of {@code w} (the layout of {@code t}); the first failure or null. */
    private static String check(Parallel one, Parallel two, Tensor t, Matrix w, long seed) {
        int rows = t.rows();
        int cols = t.cols();
        String what = w.getClass().getSimpleName() + " " + t.type() + " " + rows + "x" + cols;
        float[] v = TestTensors.randomFloats(cols, seed++);
        float[] alone = new float[rows];
        MatMul.matmul(one, w, v, 1, alone);
        double[] ref = TestTensors.referenceMatmul(t, v, 1);
        double[] mag = TestTensors.magnitudes(t, v, 1);
        for (int r = 0; r < rows; r++) {
            if (!(Math.abs(alone[r] - ref[r]) <= 1e-5 * mag[r] + 1e-30)) {
                return "FAIL reference " + what + " row " + r;
            }
        }
        for (int pos = 0; pos < 9; pos++) {
            float[] x = TestTensors.randomFloats(9 * cols, seed++);
            System.arraycopy(v, 0, x, pos * cols, cols);
            for (Parallel pool : new Parallel[] {one, two}) {
                float[] out = new float[9 * rows];
                MatMul.matmul(pool, w, x, 9, out);
                for (int r = 0; r < rows; r++) {
                    if (Float.floatToRawIntBits(out[pos * rows + r]) != Float.floatToRawIntBits(alone[r])) {
                        return "FAIL invariance " + what + " position " + pos + " threads " + pool.threads();
                    }
                }
            }
        }
        return null;
    }

    /** CRC32 of the result bits; {@code vectorOps} selects which {@link Ops#dot} implementation to use. */
    static String digest(RowKernels kernels, boolean vectorOps) {
        CRC32 crc = new CRC32();
        try (Parallel pool = new Parallel(2)) {
            long seed = 1;
            for (DType type : DType.values()) {
                int cols = type.blockSize() == 256 ? 512 : type.blockSize() == 32 ? 160 : 83;
                Tensor w = TestTensors.random(type, 13, cols, 28, seed++);
                float[] x = TestTensors.randomFloats(5 * cols, seed++);
                float[] out = new float[5 * 13];
                MatMul.matmul(pool, Matrix.rowMajor(w), x, 5, out, kernels);
                update(crc, out);
                if (Matrix.Panels.packable(w)) {
                    MatMul.matmul(pool, TestTensors.panels(w, kernels), x, 5, out, kernels);
                    update(crc, out);
                }
                // enough panels for the four-panel kernels (one vector, and four vectors at a time)
                Tensor tall = TestTensors.random(type, 200, cols, 28, seed++);
                if (Matrix.Panels.packable(tall)) {
                    float[] tallOut = new float[5 * 200];
                    for (int batch : new int[] {1, 5}) {
                        MatMul.matmul(pool, TestTensors.panels(tall, kernels), x, batch, tallOut, kernels);
                        update(crc, tallOut);
                    }
                }
            }
        }
        {
            // attention kernels: scores over K panels of 16 slots (three full panels side by side,
            // then a partial one of 13 slots), outputs over equally spaced rows
            Tensor kvRows = TestTensors.random(DType.F32, 80, 67, 12, 900);
            float[] q = TestTensors.randomFloats(70, 901);
            float[] scores = new float[64];
            long panel = 4L * 16 * 66;
            kernels.panelScoresN(kvRows.data(), new long[] {4, 4 + panel, 8 + 2 * panel}, 0, 3, 16, 66, q,
                    new int[] {2, 2, 3}, scores, new int[] {0, 16, 32});
            kernels.panelScores(kvRows.data(), 4 + 3 * panel, 16, 13, 66, q, 2, scores, 48);
            float[] acc = TestTensors.randomFloats(66, 902);
            kernels.axpyRows(acc, 0, scores, 0, kvRows.data(), kvRows.rowBytes() * 20 + 4, kvRows.rowBytes(), 17, 66);
            update(crc, scores);
            update(crc, acc);
        }
        float[] a = TestTensors.randomFloats(301, 77);
        float[] b = TestTensors.randomFloats(301, 78);
        float dot = (vectorOps ? VectorKernels.INSTANCE : ScalarKernels.INSTANCE).dot(a, 3, b, 1, 297);
        update(crc, new float[] {dot});
        Ops.softmax(a, 0, 301);
        Ops.swiglu(b, a, 0, 301);
        update(crc, a);
        update(crc, b);
        return Long.toHexString(crc.getValue());
    }

    private static void update(CRC32 crc, float[] values) {
        for (float v : values) {
            int bits = Float.floatToRawIntBits(v);
            crc.update(bits);
            crc.update(bits >>> 8);
            crc.update(bits >>> 16);
            crc.update(bits >>> 24);
        }
    }
}
