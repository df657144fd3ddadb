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
 *   <li>{@link Panels}: F32 weights repacked into panels of {@code height} rows stored column by
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
     * F32 weights in panels of {@code height} rows: panel {@code p} holds rows
     * {@code [p*height, (p+1)*height)}, column after column; element (r, c) is the float at index
     * {@code (r / height) * height * cols + c * height + r % height}. The last panel is padded with
     * zero rows, which no output ever reads.
     */
    record Panels(String name, int rows, int cols, int height, MemorySegment data) implements Matrix {
        public Panels {
            if (rows <= 0 || cols <= 0 || height <= 0) {
                throw new IllegalArgumentException("panels " + name + ": bad shape " + rows + "x" + cols + " / " + height);
            }
            if (data.byteSize() != bytesFor(rows, cols, height)) {
                throw new IllegalArgumentException("panels " + name + ": expected " + bytesFor(rows, cols, height)
                        + " bytes, have " + data.byteSize());
            }
        }

        /** Bytes of a {@code rows x cols} matrix in panels of {@code height} rows. */
        public static long bytesFor(int rows, int cols, int height) {
            return (long) panelsFor(rows, height) * height * cols * Float.BYTES;
        }

        static int panelsFor(int rows, int height) {
            return (rows + height - 1) / height;
        }

        /** Number of panels. */
        public int count() {
            return panelsFor(rows, height);
        }

        /** Bytes of one panel. */
        long panelBytes() {
            return (long) height * cols * Float.BYTES;
        }

        /**
         * Repacks an F32 tensor into {@code dst} ({@link #bytesFor} bytes), panels of {@code height}
         * rows ({@link MatMul#panelHeight()} for the kernels in use).
         */
        public static Panels pack(Tensor t, int height, MemorySegment dst) {
            if (t.type() != DType.F32) {
                throw new IllegalArgumentException("panels " + t.name() + ": only F32 weights are repacked, not " + t.type());
            }
            if (height <= 0 || dst.byteSize() != bytesFor(t.rows(), t.cols(), height)) {
                throw new IllegalArgumentException("panels " + t.name() + ": destination of " + dst.byteSize()
                        + " bytes for height " + height);
            }
            dst.fill((byte) 0); // the padding rows of the last panel
            int cols = t.cols();
            MemorySegment src = t.data();
            for (int r = 0; r < t.rows(); r++) {
                long base = ((long) (r / height) * height * cols + r % height) * Float.BYTES;
                long from = (long) r * cols * Float.BYTES;
                for (int c = 0; c < cols; c++) {
                    dst.set(Tensor.F32_LE, base + (long) c * height * Float.BYTES, src.get(Tensor.F32_LE, from + 4L * c));
                }
            }
            return new Panels(t.name(), t.rows(), cols, height, dst);
        }

        /** Element (r, c), for tests. */
        public float get(int r, int c) {
            return data.get(Tensor.F32_LE, ((long) (r / height) * height * cols + (long) c * height + r % height) * Float.BYTES);
        }
    }
}
