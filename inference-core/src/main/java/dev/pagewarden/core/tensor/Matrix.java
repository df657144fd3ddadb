package dev.pagewarden.core.tensor;

import dev.pagewarden.core.model.DType;
import dev.pagewarden.core.model.Tensor;

import java.lang.foreign.MemorySegment;

/**
 * A weight matrix in the layout {@link MatMul} reads. Two layouts, chosen once per matrix when a
 * backend loads it (never per call), so every product with a given matrix runs the same arithmetic:
 * <ul>
 *   <li>{@link RowMajor}: the loader's row-major tensor, any {@link DType}; each output is a dot
 *   product of a row with the input vector ({@link RowKernels#dot}).</li>
 *   <li>{@link Panels}: F32 (and finite F16) weights repacked into panels of {@code height} rows stored column by
 *   column, so that one column of a panel is a short contiguous run of {@code height} floats. An
 *   output row then lives in one vector lane: the kernel multiplies a column by a broadcast input
 *   element and adds it to that lane ({@link RowKernels#panelPair}). Every vector of a batch is served
 *   from one sequential pass over the weights, with no lane reduction at all, which is what makes
 *   batched decode compute while the weights stream in (docs/benchmarks.md).</li>
 * </ul>
 */
public sealed interface Matrix {

    String name();

    /** Output rows. */
    int rows();

    /** Input columns. */
    int cols();

    /** The loader's tensor read as it is. */
    static Matrix rowMajor(Tensor t) {
        return new RowMajor(t);
    }

    /** A row-major tensor. */
    record RowMajor(Tensor tensor) implements Matrix {
        @Override
        public String name() {
            return tensor.name();
        }

        @Override
        public int rows() {
            return tensor.rows();
        }

        @Override
        public int cols() {
            return tensor.cols();
        }
    }

    /**
     * F32 or F16 weights in panels of {@code height} rows: panel {@code p} holds rows
     * {@code [p*height, (p+1)*height)}, column after column; element (r, c) is element
     * {@code (r / height) * height * cols + c * height + r % height}, stored in {@code type}. The
     * last panel is padded with zero rows, which no output ever reads. F16 panels hold finite
     * values only ({@link #packable}), so the kernels widen them without infinity/NaN handling.
     */
    record Panels(String name, DType type, int rows, int cols, int height, MemorySegment data) implements Matrix {
        public Panels {
            if (type != DType.F32 && type != DType.F16) {
                throw new IllegalArgumentException("panels " + name + ": F32 or F16 weights only, not " + type);
            }
            if (rows <= 0 || cols <= 0 || height <= 0) {
                throw new IllegalArgumentException("panels " + name + ": bad shape " + rows + "x" + cols + " / " + height);
            }
            if (data.byteSize() != bytesFor(type, rows, cols, height)) {
                throw new IllegalArgumentException("panels " + name + ": expected " + bytesFor(type, rows, cols, height)
                        + " bytes, have " + data.byteSize());
            }
        }

        /** Bytes of a {@code rows x cols} matrix of {@code type} in panels of {@code height} rows. */
        public static long bytesFor(DType type, int rows, int cols, int height) {
            return type.bytesFor((long) panelsFor(rows, height) * height * cols);
        }

        static int panelsFor(int rows, int height) {
            return (rows + height - 1) / height;
        }

        /**
         * Whether {@code t} can be repacked: F32, or F16 without infinities and NaNs (a weight
         * matrix holding those is kept row-major, where the exact conversion handles them).
         */
        public static boolean packable(Tensor t) {
            if (t.type() == DType.F32) {
                return true;
            }
            if (t.type() != DType.F16) {
                return false;
            }
            for (long i = 0, n = (long) t.rows() * t.cols(); i < n; i++) {
                if ((t.data().get(Tensor.I16_LE, 2 * i) & 0x7c00) == 0x7c00) {
                    return false;
                }
            }
            return true;
        }

        /** Number of panels. */
        public int count() {
            return panelsFor(rows, height);
        }

        /** Bytes of one panel. */
        long panelBytes() {
            return type.bytesFor((long) height * cols);
        }

        /**
         * Repacks a {@link #packable} tensor into {@code dst} ({@link #bytesFor} bytes), panels of
         * {@code height} rows ({@link MatMul#panelHeight()} for the kernels in use).
         */
        public static Panels pack(Tensor t, int height, MemorySegment dst) {
            if (!packable(t)) {
                throw new IllegalArgumentException("panels " + t.name() + ": only F32 weights and finite F16 weights are"
                        + " repacked, not this " + t.type() + " tensor");
            }
            if (height <= 0 || dst.byteSize() != bytesFor(t.type(), t.rows(), t.cols(), height)) {
                throw new IllegalArgumentException("panels " + t.name() + ": destination of " + dst.byteSize()
                        + " bytes for height " + height);
            }
            dst.fill((byte) 0); // the padding rows of the last panel
            int cols = t.cols();
            long size = t.type() == DType.F16 ? 2 : 4;
            MemorySegment src = t.data();
            for (int r = 0; r < t.rows(); r++) {
                long base = ((long) (r / height) * height * cols + r % height) * size;
                long from = (long) r * cols * size;
                for (int c = 0; c < cols; c++) {
                    long to = base + (long) c * height * size;
                    if (size == 2) {
                        dst.set(Tensor.I16_LE, to, src.get(Tensor.I16_LE, from + 2L * c));
                    } else {
                        dst.set(Tensor.F32_LE, to, src.get(Tensor.F32_LE, from + 4L * c));
                    }
                }
            }
            return new Panels(t.name(), t.type(), t.rows(), cols, height, dst);
        }

        /** Element (r, c), for tests. */
        public float get(int r, int c) {
            long i = (long) (r / height) * height * cols + (long) c * height + r % height;
            return type == DType.F16 ? Float.float16ToFloat(data.get(Tensor.I16_LE, 2 * i)) : data.get(Tensor.F32_LE, 4 * i);
        }
    }
}
