package dev.pagewarden.core.model;

import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.ByteOrder;

/**
 * A read-only weight matrix of {@code rows x cols} in row-major order (a vector is one row), viewed
 * over memory the loader owns (usually a memory-mapped file). A matrix-vector product computes
 * {@code out[r] = sum_c W[r][c] * x[c]}: rows are outputs, as in llama2.c and ggml.
 */
public record Tensor(String name, DType type, int rows, int cols, MemorySegment data) {

    public static final ValueLayout.OfFloat F32_LE = ValueLayout.JAVA_FLOAT_UNALIGNED.withOrder(ByteOrder.LITTLE_ENDIAN);
    public static final ValueLayout.OfShort I16_LE = ValueLayout.JAVA_SHORT_UNALIGNED.withOrder(ByteOrder.LITTLE_ENDIAN);

    public Tensor {
        if (rows <= 0 || cols <= 0) {
            throw new ModelFormatException("tensor " + name + ": bad shape " + rows + "x" + cols);
        }
        long need = type.bytesFor((long) rows * cols);
        if (cols % type.blockSize() != 0) {
            throw new ModelFormatException("tensor " + name + ": row length " + cols + " is not a multiple of the "
                    + type + " block size " + type.blockSize());
        }
        if (data.byteSize() != need) {
            throw new ModelFormatException("tensor " + name + ": expected " + need + " bytes for " + type + " "
                    + rows + "x" + cols + ", have " + data.byteSize());
        }
    }

    /** Bytes of one row. */
    public long rowBytes() {
        return type.bytesFor(cols);
    }

    /** Slow element accessor for tests and reference code. */
    public float get(int row, int col) {
        long rowBase = row * rowBytes();
        return switch (type) {
            case F32 -> data.get(F32_LE, rowBase + 4L * col);
            case F16 -> Float.float16ToFloat(data.get(I16_LE, rowBase + 2L * col));
            default -> Dequantizer.value(type, data, rowBase, col);
        };
    }

    /** Dequantises one row into {@code dst[offset .. offset+cols)} (embedding lookup, tests). */
    public void rowInto(int row, float[] dst, int offset) {
        if (type == DType.F32 || type == DType.F16) {
            for (int c = 0; c < cols; c++) {
                dst[offset + c] = get(row, c);
            }
        } else {
            Dequantizer.row(type, data, row * rowBytes(), cols, dst, offset);
        }
    }
}
