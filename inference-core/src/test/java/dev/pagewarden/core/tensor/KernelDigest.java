package dev.pagewarden.core.tensor;

import dev.pagewarden.core.model.DType;
import dev.pagewarden.core.model.Tensor;

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
        System.out.println(MatMul.implementation() + " " + digest(Kernels.ROWS, Kernels.VECTOR));
    }

    /** CRC32 of the result bits; {@code vectorOps} selects which {@link Ops#dot} implementation to use. */
    static String digest(RowKernels kernels, boolean vectorOps) {
        CRC32 crc = new CRC32();
        try (Parallel pool = new Parallel(2)) {
            long seed = 1;
            for (DType type : DType.values()) {
                int cols = type == DType.Q8_0 ? 160 : 83;
                Tensor w = TestTensors.random(type, 13, cols, 28, seed++);
                float[] x = TestTensors.randomFloats(5 * cols, seed++);
                float[] out = new float[5 * 13];
                MatMul.matmul(pool, w, x, 5, out, kernels);
                update(crc, out);
            }
        }
        float[] a = TestTensors.randomFloats(301, 77);
        float[] b = TestTensors.randomFloats(301, 78);
        float dot = vectorOps ? VectorKernels.dot(a, 3, b, 1, 297) : Ops.scalarDot(a, 3, b, 1, 297);
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
