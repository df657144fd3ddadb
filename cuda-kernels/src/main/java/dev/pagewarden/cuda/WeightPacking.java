package dev.pagewarden.cuda;

import dev.pagewarden.core.model.DType;
import dev.pagewarden.core.model.Tensor;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;

/**
 * How a weight matrix is laid out in device memory. F32, F16 and BF16 go as they are. Q8_0 blocks (fp16
 * scale + 32 int8, 34 bytes) would leave the quants 2-byte aligned, so they are split into all quants
 * (row-major, 16-byte loads) and all scales (one fp16 per 32 values): the same numbers, aligned.
 */
public final class WeightPacking {
    private WeightPacking() {
    }

    /** A Q8_0 matrix split for the device: {@code quants} [rows x cols] int8, {@code scales} [rows x cols/32] fp16 bits. */
    public record Q8Split(MemorySegment quants, MemorySegment scales) {
    }

    public static Q8Split splitQ8(Tensor t, Arena arena) {
        if (t.type() != DType.Q8_0) {
            throw new IllegalArgumentException("tensor " + t.name() + " is " + t.type() + ", not Q8_0");
        }
        long blocks = (long) t.rows() * t.cols() / 32;
        MemorySegment quants = arena.allocate(blocks * 32, 16);
        MemorySegment scales = arena.allocate(blocks * 2, 16);
        MemorySegment src = t.data();
        for (long b = 0; b < blocks; b++) {
            long at = b * 34;
            scales.set(Tensor.I16_LE, b * 2, src.get(Tensor.I16_LE, at));
            MemorySegment.copy(src, at + 2, quants, b * 32, 32);
        }
        return new Q8Split(quants, scales);
    }

    /** Element (row, col) of a split Q8_0 matrix, as the device kernel computes it: scale * quant in fp32. */
    public static float q8Element(Q8Split s, int cols, int row, int col) {
        long i = (long) row * cols + col;
        float scale = Float.float16ToFloat(s.scales().get(Tensor.I16_LE, (i / 32) * 2));
        return scale * s.quants().get(ValueLayout.JAVA_BYTE, i);
    }

    /** A single-row tensor (a norm weight) as fp32, whatever its stored type. */
    public static float[] row(Tensor t) {
        float[] out = new float[t.cols()];
        t.rowInto(0, out, 0);
        return out;
    }

    /**
     * The batch-1 kernel for this type ({@code pw_rows1_*}): one token row, up to three matrices, a
     * store, residual-add or SwiGLU epilogue; the same chain per output as {@link #matvecKernel}'s.
     */
    public static String rows1Kernel(DType type) {
        return matvecKernel(type).replace("pw_matvec_", "pw_rows1_");
    }

    /**
     * Weight types the matvec kernels multiply by (BF16 uploaded as it is, widened by a shift in the
     * kernel); Q4_0 and the K-quants need the tensor-core GEMM ({@link QuantPacking}).
     */
    public static final java.util.Set<DType> TYPES = java.util.EnumSet.of(DType.F32, DType.F16, DType.Q8_0, DType.BF16);

    /** The kernel that multiplies by a matrix of this type. */
    public static String matvecKernel(DType type) {
        return switch (type) {
            case F32 -> "pw_matvec_f32";
            case F16 -> "pw_matvec_f16";
            case Q8_0 -> "pw_matvec_q8_0";
            case BF16 -> "pw_matvec_bf16";
            default -> throw new IllegalArgumentException("no GPU kernel for " + type + " weights (GPU: " + TYPES + ")");
        };
    }
}
