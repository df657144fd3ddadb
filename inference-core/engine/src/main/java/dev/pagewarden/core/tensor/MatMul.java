package dev.pagewarden.core.tensor;

import dev.pagewarden.core.model.DType;
import dev.pagewarden.core.model.Tensor;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;

/**
 * Matrix times a batch of vectors: {@code out[b*rows + r] = dot(W[r], x[b*cols ...])}.
 *
 * <p>Contract (batch invariance): the value of each output is bit-identical whatever the batch size,
 * the position of the vector in the batch, and the thread count. So each output runs with one
 * fixed accumulation order, with no lane reduction whose order the JIT may choose. The order is a
 * property of the matrix's {@link Matrix layout}, fixed when the matrix is loaded:
 * <ul>
 *   <li>{@link Matrix.Panels} (the CPU backend's weights): one fused multiply-add chain per
 *   output in column order ({@link RowKernels#panelPair}). Panels are split over the
 *   {@link Parallel} pool in units of four; a thread reads its panels four at a time as four
 *   sequential streams, at batch 1 and, for F32, for each group of four vectors (the first group
 *   streams them from memory, the others find them in L2); otherwise two at a time for up to
 *   {@link RowKernels#panelBatch()} vectors ({@link RowKernels#panelPair}).</li>
 *   <li>{@link Matrix.RowMajor}: rows are split into contiguous chunks over the pool. A chunk is
 *   walked in tiles of four rows (below batch 4, where memory speed decides, one row from each
 *   quarter of the chunk, for four long sequential streams; otherwise adjacent rows); each tile is
 *   read from memory once for the whole batch: groups of four vectors go to
 *   {@link RowKernels#dot4x4}, each remaining vector to {@link RowKernels#dot4x1} (rows of a partial
 *   tile to {@link RowKernels#dot}), and every kernel performs the same arithmetic per (row,
 *   vector) pair as {@link RowKernels#dot}. Tiles of other types (F16 and Q8_0 with non-finite
 *   halves, BF16, Q4_0, the K-quants) are first decoded (exactly) into a per-thread fp32 buffer
 *   that stays in L1; F32 weights are read straight from the (possibly unaligned) segment. Below
 *   batch 4, full tiles of BF16 and K-quant rows skip the buffer where the kernels can
 *   ({@link RowKernels#fusesBlocks}): {@link RowKernels#blocks4x1} decodes each weight in registers
 *   and feeds it to the same fma chain, so the outputs keep the bits of decoding first.</li>
 * </ul>
 */
public final class MatMul {
    private MatMul() {
    }

    /** Rows per tile. */
    private static final int TILE = 4;

    /** Per-thread buffers: fp32 rows for decoded F16/Q8_0 weights (grown on demand), lane scratch, a partial panel's outputs. */
    private static final class Scratch {
        MemorySegment decoded;
        float[] lanes = new float[0];
        float[] panelOut = new float[0];
    }

    private static final ThreadLocal<Scratch> SCRATCH = ThreadLocal.withInitial(Scratch::new);

    /**
     * The batch rounded to 8 bits for the native kernels, once per call in each format its matrices
     * read, before the rows are split over the threads (which all read it). One per calling thread,
     * grown on demand and reused: a call allocates nothing once the largest batch has been seen.
     */
    private static final class Acts {
        final NativeKernels kernels;
        MemorySegment a32 = MemorySegment.NULL;
        MemorySegment a256 = MemorySegment.NULL;

        Acts(NativeKernels kernels) {
            this.kernels = kernels;
        }

        private static final ThreadLocal<Acts> MINE = new ThreadLocal<>();

        /** The quantized batch when the native kernels compute any of {@code ws}, otherwise null. */
        static Acts prepare(Parallel pool, float[] x, int batch, Matrix... ws) {
            NativeKernels n = NativeKernels.instance();
            if (n == null) {
                return null;
            }
            boolean want32 = false, want256 = false;
            for (Matrix w : ws) {
                if (w instanceof Matrix.RowMajor r && NativeKernels.serves(r.tensor().type())) {
                    boolean is32 = NativeKernels.format(r.tensor().type()) == NativeKernels.A32;
                    want32 |= is32;
                    want256 |= !is32;
                }
            }
            if (!want32 && !want256) {
                return null;
            }
            Acts a = MINE.get();
            if (a == null) {
                a = new Acts(n);
                MINE.set(a);
            }
            int cols = ws[0].cols();
            if (want32) {
                a.a32 = a.fill(pool, NativeKernels.A32, a.a32, x, cols, batch);
            }
            if (want256) {
                a.a256 = a.fill(pool, NativeKernels.A256, a.a256, x, cols, batch);
            }
            return a;
        }

        private MemorySegment fill(Parallel pool, int format, MemorySegment buf, float[] x, int cols, int batch) {
            long bytes = batch * NativeKernels.actRowBytes(format, cols);
            if (buf.byteSize() < bytes) {
                buf = Arena.ofAuto().allocate(Math.max(bytes, 2 * buf.byteSize()), 64);
            }
            MemorySegment dst = buf;
            if (batch == 1) {
                kernels.quantize(format, x, cols, 0, 1, dst);
            } else {
                pool.forRange(batch, (s, e) -> kernels.quantize(format, x, cols, s, e, dst));
            }
            return buf;
        }

        MemorySegment of(int format) {
            return format == NativeKernels.A32 ? a32 : a256;
        }
    }

    public static void matmul(Parallel pool, Tensor w, float[] x, int batch, float[] out) {
        matmul(pool, Matrix.rowMajor(w), x, batch, out);
    }

    public static void matmul(Parallel pool, Matrix w, float[] x, int batch, float[] out) {
        RowKernels k = Kernels.ROWS;
        check(new Matrix[] {w}, x, batch, new float[][] {out}, k);
        Acts acts = Acts.prepare(pool, x, batch, w);
        pool.forRange(units(w), (start, end) -> run(k, w, x, batch, out, start, end, acts));
    }

    /** Name of the kernels in use, e.g. {@code vector-512} or {@code scalar}. */
    public static String implementation() {
        return Kernels.ROWS.name();
    }

    /**
     * One line for the engine's log: which kernels compute the quantized types (the native ones, with
     * their instruction set, or this JVM's Java kernels) and why.
     */
    public static String kernelsInUse() {
        return NativeKernels.instance() != null ? NativeKernels.reason() + "; " + implementation() + " for the rest"
                : implementation() + " for every type; " + NativeKernels.reason();
    }

    /**
     * Whether row-major matrices of {@code type} are computed by the native kernels (so a backend keeps
     * them row-major rather than repacking them into panels).
     */
    public static boolean servesNatively(DType type) {
        return NativeKernels.instance() != null && NativeKernels.serves(type);
    }

    /** Rows per panel that {@link Matrix.Panels} must have for the kernels in use. */
    public static int panelHeight() {
        return Kernels.ROWS.panelHeight();
    }

    /** As {@link #matmul(Parallel, Matrix, float[], int, float[])} with explicit kernels (tests). */
    static void matmul(Parallel pool, Matrix w, float[] x, int batch, float[] out, RowKernels kernels) {
        check(new Matrix[] {w}, x, batch, new float[][] {out}, kernels);
        pool.forRange(units(w), (start, end) -> run(kernels, w, x, batch, out, start, end, null));
    }

    /**
     * Several matrices with the same number of columns times the same batch, in one parallel loop
     * (one hand-off to the workers instead of one per matrix): {@code outs[i]} gets
     * {@code matmul(ws[i], x)}. The work units (rows or panels) of all matrices are split over the
     * threads as one range; each output has the same bits as with
     * {@link #matmul(Parallel, Matrix, float[], int, float[])}.
     */
    public static void matmul(Parallel pool, Matrix[] ws, float[] x, int batch, float[][] outs) {
        RowKernels k = Kernels.ROWS;
        check(ws, x, batch, outs, k);
        Acts acts = Acts.prepare(pool, x, batch, ws);
        int total = 0;
        for (Matrix w : ws) {
            total += units(w);
        }
        pool.forRange(total, (start, end) -> {
            int base = 0;
            for (int i = 0; i < ws.length; i++) {
                int n = units(ws[i]);
                int a = Math.max(start - base, 0);
                int b = Math.min(end - base, n);
                if (a < b) {
                    run(k, ws[i], x, batch, outs[i], a, b, acts);
                }
                base += n;
            }
        });
    }

    /**
     * The SwiGLU feed-forward input in one parallel loop: {@code gate = matmul(w1, x)},
     * {@code up = matmul(w3, x)}, then {@link Ops#swiglu} on each row range once both are done
     * (same bits as the three steps one after the other).
     */
    public static void swiglu(Parallel pool, Matrix w1, Matrix w3, float[] x, int batch, float[] gate, float[] up) {
        RowKernels k = Kernels.ROWS;
        check(new Matrix[] {w1, w3}, x, batch, new float[][] {gate, up}, k);
        if (w1.rows() != w3.rows() || units(w1) != units(w3) || w1.getClass() != w3.getClass()) {
            throw new IllegalArgumentException("swiglu: " + w1.name() + " and " + w3.name() + " differ in rows or layout");
        }
        int rows = w1.rows();
        Acts acts = Acts.prepare(pool, x, batch, w1, w3);
        pool.forRange(units(w1), (start, end) -> {
            run(k, w1, x, batch, gate, start, end, acts);
            run(k, w3, x, batch, up, start, end, acts);
            int r0 = firstRow(w1, start);
            int r1 = firstRow(w1, end);
            for (int b = 0; b < batch; b++) {
                Ops.swiglu(gate, up, b * rows + r0, r1 - r0);
            }
        });
    }

    private static void check(Matrix[] ws, float[] x, int batch, float[][] outs, RowKernels k) {
        if (batch < 1) {
            throw new IllegalArgumentException("batch must be >= 1, got " + batch);
        }
        if (ws.length != outs.length) {
            throw new IllegalArgumentException(ws.length + " matrices, " + outs.length + " outputs");
        }
        for (int i = 0; i < ws.length; i++) {
            Matrix w = ws[i];
            if (w.cols() != ws[0].cols()) {
                throw new IllegalArgumentException("matmul " + w.name() + ": " + w.cols() + " columns, "
                        + ws[0].name() + " has " + ws[0].cols());
            }
            if (x.length < (long) batch * w.cols() || outs[i].length < (long) batch * w.rows()) {
                throw new IllegalArgumentException("matmul " + w.name() + " " + w.rows() + "x" + w.cols() + " batch "
                        + batch + ": x has " + x.length + " floats, out has " + outs[i].length);
            }
            if (w instanceof Matrix.Panels p && p.height() != k.panelHeight()) {
                throw new IllegalArgumentException("matmul " + w.name() + ": panels of " + p.height()
                        + " rows, the " + k.name() + " kernels read panels of " + k.panelHeight());
            }
        }
    }

    /**
     * Panels per unit of parallel work: four ({@link RowKernels#panelQuad} at batch 1,
     * {@link RowKernels#panelQuad4} for groups of four vectors, otherwise two
     * {@link RowKernels#panelPair}s), so that no chunk ends with a panel read as a single stream.
     */
    private static final int UNIT_PANELS = 4;

    /**
     * Units of parallel work: rows of a row-major matrix; groups of panels of a panel matrix. The
     * split never changes what an output computes.
     */
    private static int units(Matrix w) {
        return switch (w) {
            case Matrix.RowMajor r -> r.rows();
            case Matrix.Panels p -> (p.count() + UNIT_PANELS - 1) / UNIT_PANELS;
        };
    }

    /** First output row of work unit {@code u} (or {@code rows()} for {@code u == units(w)}). */
    private static int firstRow(Matrix w, int u) {
        return switch (w) {
            case Matrix.RowMajor r -> u;
            case Matrix.Panels p -> Math.min(u * UNIT_PANELS * p.height(), p.rows());
        };
    }

    private static void run(RowKernels k, Matrix w, float[] x, int batch, float[] out, int start, int end, Acts acts) {
        switch (w) {
            case Matrix.RowMajor r when acts != null && NativeKernels.serves(r.tensor().type()) ->
                    acts.kernels.matmul(acts.kernels.isa(), r.tensor(), start, end,
                            acts.of(NativeKernels.format(r.tensor().type())), batch, out);
            case Matrix.RowMajor r -> rows(k, r.tensor(), x, batch, out, start, end);
            case Matrix.Panels p -> panels(k, p, x, batch, out, start * UNIT_PANELS,
                    Math.min(end * UNIT_PANELS, p.count()));
        }
    }

    /**
     * Panels {@code [start, end)} times the batch, so that each core keeps as many weight streams
     * in flight as it can use: four panels at a time, for one vector at batch 1 and, for F32 from
     * batch 4 on, for each group of four vectors (the remaining vectors with two
     * {@link RowKernels#panelPair}s); otherwise two at a time for each group of up to
     * {@code panelBatch()} vectors. A lone last panel runs as both halves of a pair (same values
     * written twice); a partial last panel writes through a scratch buffer (its padding rows have
     * no outputs).
     */
    private static void panels(RowKernels k, Matrix.Panels w, float[] x, int batch, float[] out, int start, int end) {
        int rows = w.rows();
        int cols = w.cols();
        int h = w.height();
        long bytes = w.panelBytes();
        MemorySegment data = w.data();
        int full = Math.min(end, rows / h); // panels [start, full) have no padding
        int p = start;
        int vectors = k.panelBatch(); // per panelPair call
        if (batch == 1) {
            for (; p + 4 <= full; p += 4) {
                k.panelQuad(data, w.type(), p * bytes, bytes, cols, x, 0, out, p * h, h);
            }
        } else if (batch >= 4 && w.type() == DType.F32) {
            // F16 and Q8_0 widen every weight they load: a pass per group of four vectors would
            // widen twice as often as a pair for eight, and they are bound by that arithmetic
            for (; p + 4 <= full; p += 4) {
                int b = 0;
                for (; b + 4 <= batch; b += 4) {
                    k.panelQuad4(data, w.type(), p * bytes, bytes, cols, x, b * cols, cols, out, b * rows + p * h, h, rows);
                }
                for (; b < batch; b += vectors) {
                    int count = Math.min(vectors, batch - b);
                    for (int q = p; q < p + 4; q += 2) {
                        k.panelPair(data, w.type(), q * bytes, (q + 1) * bytes, cols, x, b * cols, cols, count, out,
                                b * rows + q * h, b * rows + (q + 1) * h, rows);
                    }
                }
            }
        }
        for (; p < full; p += 2) {
            int q = p + 1 < full ? p + 1 : p;
            for (int b = 0; b < batch; b += vectors) {
                k.panelPair(data, w.type(), p * bytes, q * bytes, cols, x, b * cols, cols, Math.min(vectors, batch - b), out,
                        b * rows + p * h, b * rows + q * h, rows);
            }
        }
        p = Math.max(full, start);
        if (p < end) { // the partial last panel
            Scratch scratch = SCRATCH.get();
            if (scratch.panelOut.length < vectors * h) {
                scratch.panelOut = new float[vectors * h];
            }
            float[] tmp = scratch.panelOut;
            int valid = rows - p * h;
            for (int b = 0; b < batch; b += vectors) {
                int count = Math.min(vectors, batch - b);
                k.panelPair(data, w.type(), p * bytes, p * bytes, cols, x, b * cols, cols, count, tmp, 0, 0, h);
                for (int j = 0; j < count; j++) {
                    System.arraycopy(tmp, j * h, out, (b + j) * rows + p * h, valid);
                }
            }
        }
    }

    private static void rows(RowKernels k, Tensor w, float[] x, int batch, float[] out, int start, int end) {
        int cols = w.cols();
        Scratch scratch = SCRATCH.get();
        if (scratch.lanes.length < k.lanesScratch()) {
            scratch.lanes = new float[k.lanesScratch()];
        }
        float[] lanes = scratch.lanes;
        MemorySegment src = w.data();
        long rowStride = w.rowBytes();
        MemorySegment decoded = null;
        if (w.type() != DType.F32) {
            if (scratch.decoded == null || scratch.decoded.byteSize() < 4L * TILE * cols) {
                scratch.decoded = Arena.ofAuto().allocate(4L * TILE * cols, 64);
            }
            decoded = scratch.decoded;
            src = decoded;
            rowStride = 4L * cols;
        }
        // Full tiles, then the last (end - start) % 4 rows as one partial tile of adjacent rows.
        // Below batch 4 (memory-bound) tile i takes row i of each quarter of the range (rows
        // r + t*q, t = 0..3), so that memory is read as four long sequential streams, which the
        // hardware prefetchers follow better than many short ones (+15% read rate here). From
        // batch 4 on (compute-bound) a tile is four adjacent rows, one sequential stream: about
        // 12% faster at batch 8 here than the four streams.
        int q = (end - start) / TILE;
        boolean adjacent = batch >= TILE;
        if (!adjacent && k.fusesBlocks(w.type(), cols)) {
            // below batch 4 full tiles of BF16 and K-quant rows are computed on the blocks where
            // they lie: decoding a tile costs more than its dot products when only one to three
            // vectors use it (same bits: see RowKernels#blocks4x1)
            long stride = (long) q * w.rowBytes();
            for (int i = 0; i < q; i++) {
                int r = start + i;
                for (int b = 0; b < batch; b++) {
                    k.blocks4x1(w.type(), w.data(), r * w.rowBytes(), stride, cols, x, b * cols, out, b * w.rows() + r, q,
                            lanes);
                }
            }
        }
        for (int i = 0; i < q && (adjacent || !k.fusesBlocks(w.type(), cols)); i++) {
            tile(k, w, x, batch, out, start + (adjacent ? TILE * i : i), TILE, adjacent ? 1 : q, src, rowStride,
                    decoded, lanes);
        }
        int rest = start + TILE * q;
        if (rest < end) {
            tile(k, w, x, batch, out, rest, end - rest, 1, src, rowStride, decoded, lanes);
        }
    }

    /** Rows {@code r + t*rowStep}, t < n, times the whole batch. */
    private static void tile(RowKernels k, Tensor w, float[] x, int batch, float[] out, int r, int n, int rowStep,
                             MemorySegment src, long rowStride, MemorySegment decoded, float[] lanes) {
        int rows = w.rows();
        int cols = w.cols();
        long off = r * rowStride;
        long tileStride = rowStep * rowStride;
        if (decoded != null) {
            decode(k, w, r, n, rowStep, decoded);
            off = 0;
            tileStride = rowStride;
        }
        int b = 0;
        for (; b + 4 <= batch; b += 4) {
            if (n == TILE) {
                k.dot4x4(src, off, tileStride, cols, x, b * cols, cols, out, b * rows + r, rowStep, rows, lanes);
            } else {
                for (int t = 0; t < n; t++) {
                    for (int j = b; j < b + 4; j++) {
                        out[j * rows + r + t * rowStep] = k.dot(src, off + t * tileStride, cols, x, j * cols);
                    }
                }
            }
        }
        for (; b < batch; b++) {
            if (n == TILE) {
                k.dot4x1(src, off, tileStride, cols, x, b * cols, out, b * rows + r, rowStep);
            } else {
                for (int t = 0; t < n; t++) {
                    out[b * rows + r + t * rowStep] = k.dot(src, off + t * tileStride, cols, x, b * cols);
                }
            }
        }
    }

    /** Decodes F16 or Q8_0 rows {@code r + t*rowStep}, t < n, into consecutive fp32 rows of {@code dst}. */
    private static void decode(RowKernels k, Tensor w, int r, int n, int rowStep, MemorySegment dst) {
        int cols = w.cols();
        for (int t = 0; t < n; t++) {
            long off = (long) (r + t * rowStep) * w.rowBytes();
            switch (w.type()) {
                case F16 -> k.decodeF16(w.data(), off, cols, dst, 4L * cols * t);
                case Q8_0 -> k.decodeQ8(w.data(), off, cols, dst, 4L * cols * t);
                default -> k.decode(w.type(), w.data(), off, cols, dst, 4L * cols * t);
            }
        }
    }
}
