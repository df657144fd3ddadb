package dev.pagewarden.core.tensor;

import dev.pagewarden.core.model.DType;
import dev.pagewarden.core.model.Tensor;

import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;

/**
 * A weight matrix in the layout {@link MatMul} reads. Two layouts, chosen once per matrix when a
 * backend loads it (never per call), so every product with a given matrix runs the same arithmetic:
 * <ul>
 *   <li>{@link RowMajor}: the loader's row-major tensor, any {@link DType}; each output is a dot
 *   product of a row with the input vector ({@link RowKernels#dot}).</li>
 *   <li>{@link Panels}: weights repacked into panels of {@code height} rows stored column by
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
     * F32, F16 or Q8_0 weights in panels of {@code height} rows: panel {@code p} holds rows
     * {@code [p*height, (p+1)*height)}, column after column (see {@link #offset}; Q8_0 keeps its
     * 32-column blocks, each led by its rows' scales). The last panel is padded with zero rows,
     * which no output ever reads. F16 values and Q8_0 scales are finite ({@link #packable}), so
     * the kernels widen halves without infinity/NaN handling.
     */
    record Panels(String name, DType type, int rows, int cols, int height, MemorySegment data) implements Matrix {
        public Panels {
            if (type == DType.Q8_0 && cols % 32 != 0) {
                throw new IllegalArgumentException("panels " + name + ": Q8_0 rows of " + cols + " columns, not whole blocks");
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
         * Whether {@code t} can be repacked: F32; F16 without infinities and NaNs; Q8_0 whose block
         * scales are all finite. (A matrix holding those is kept row-major, where the exact
         * conversion handles them; the panel kernels widen halves without that case.)
         */
        public static boolean packable(Tensor t) {
            return switch (t.type()) {
                case F32 -> true;
                case F16 -> finiteHalves(t.data(), 0, 2, (long) t.rows() * t.cols());
                case Q8_0 -> finiteHalves(t.data(), 0, 34, (long) t.rows() * t.cols() / 32);
                default -> false; // computed row-major, decoded a tile at a time
            };
        }

        /** Whether the {@code n} halves at {@code from}, {@code stride} bytes apart, are finite. */
        private static boolean finiteHalves(MemorySegment data, long from, long stride, long n) {
            for (long i = 0; i < n; i++) {
                if ((data.get(Tensor.I16_LE, from + i * stride) & 0x7c00) == 0x7c00) {
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
         * {@code height} rows ({@link MatMul#panelHeight()} for the kernels in use). Q8_0 panels
         * keep the 32-column blocks: per block, the {@code height} scales of its rows, then its
         * 32 columns of {@code height} quants each.
         */
        public static Panels pack(Tensor t, int height, MemorySegment dst) {
            if (!packable(t)) {
                throw new IllegalArgumentException("panels " + t.name() + ": only F32 weights and finite F16/Q8_0 weights"
                        + " are repacked, not this " + t.type() + " tensor");
            }
            if (height <= 0 || dst.byteSize() != bytesFor(t.type(), t.rows(), t.cols(), height)) {
                throw new IllegalArgumentException("panels " + t.name() + ": destination of " + dst.byteSize()
                        + " bytes for height " + height);
            }
            dst.fill((byte) 0); // the padding rows of the last panel
            Panels p = new Panels(t.name(), t.type(), t.rows(), t.cols(), height, dst);
            MemorySegment src = t.data();
            for (int r = 0; r < t.rows(); r++) {
                long from = r * t.rowBytes();
                for (int c = 0; c < t.cols(); c++) {
                    switch (t.type()) {
                        case F32 -> dst.set(Tensor.F32_LE, p.offset(r, c), src.get(Tensor.F32_LE, from + 4L * c));
                        case F16 -> dst.set(Tensor.I16_LE, p.offset(r, c), src.get(Tensor.I16_LE, from + 2L * c));
                        case Q8_0 -> {
                            long block = from + 34L * (c / 32);
                            if (c % 32 == 0) {
                                dst.set(Tensor.I16_LE, p.scaleOffset(r, c), src.get(Tensor.I16_LE, block));
                            }
                            dst.set(ValueLayout.JAVA_BYTE, p.offset(r, c), src.get(ValueLayout.JAVA_BYTE, block + 2 + c % 32));
                        }
                    }
                }
            }
            return p;
        }

        /** Byte offset of element (r, c): its F32 value, F16 value or Q8_0 quant. */
        long offset(int r, int c) {
            long panel = (long) (r / height) * panelBytes();
            int i = r % height;
            return switch (type) {
                case F32 -> panel + 4L * ((long) c * height + i);
                case F16 -> panel + 2L * ((long) c * height + i);
                case Q8_0 -> panel + (long) (c / 32) * 34 * height + 2L * height + (long) (c % 32) * height + i;
                default -> throw new IllegalStateException("no " + type + " panels");
            };
        }

        /** Byte offset of the F16 scale of row {@code r}'s Q8_0 block that holds column {@code c}. */
        long scaleOffset(int r, int c) {
            return (long) (r / height) * panelBytes() + (long) (c / 32) * 34 * height + 2L * (r % height);
        }

        /** Element (r, c), for tests: the value the kernels multiply by. */
        public float get(int r, int c) {
            return switch (type) {
                case F32 -> data.get(Tensor.F32_LE, offset(r, c));
                case F16 -> Float.float16ToFloat(data.get(Tensor.I16_LE, offset(r, c)));
                case Q8_0 -> Float.float16ToFloat(data.get(Tensor.I16_LE, scaleOffset(r, c)))
                        * data.get(ValueLayout.JAVA_BYTE, offset(r, c));
                default -> throw new IllegalStateException("no " + type + " panels");
            };
        }
    }
}
