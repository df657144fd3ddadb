package dev.pagewarden.core.tensor;

import dev.pagewarden.core.model.DType;
import dev.pagewarden.core.model.Dequantizer;
import dev.pagewarden.core.model.Tensor;

import java.lang.foreign.MemorySegment;
import java.util.Arrays;

/**
 * The kernels of {@link MatMul} and {@link Ops}, implemented once with the Vector API ({@link VectorKernels})
 * and once in plain Java ({@link ScalarKernels}) for JVMs without {@code jdk.incubator.vector};
 * {@link Kernels#ROWS} picks one per JVM, the only place that chooses. The default methods are the
 * plain reference each implementation's result is defined by (and that the scalar tier runs).
 *
 * <p>Every implementation fixes the accumulation order of one dot product as a function of its
 * length alone, and the tiled methods perform, for each (row, vector) pair, exactly the operations
 * of {@link #dot}: that is what makes {@code MatMul} batch invariant. Tiles only decide how many
 * independent dot products run side by side (instruction-level parallelism, weight reuse).
 *
 * <p>The {@code panelPair}, {@code panelQuad} and {@code panelQuad4} methods serve {@link Matrix.Panels}, the other layout: there each output is
 * one fused multiply-add chain in column order, the same in every implementation.
 *
 * <p>Weights are fp32 little-endian at any byte alignment, row {@code k} of a tile at byte
 * {@code off + k*rowStride}; F16 and Q8_0 rows are first decoded into an fp32 scratch area by
 * {@link #decodeF16} / {@link #decodeQ8}, so the dot kernels serve all types.
 */
sealed interface RowKernels permits ScalarKernels, VectorKernels {

    /** Short name for logs and benchmarks. */
    String name();

    /** Floats of per-thread scratch {@link #dot4x4} needs in its {@code lanes} argument. */
    int lanesScratch();

    /** {@code sum_i w[i] * x[xo + i]} over {@code n} floats of {@code w} at byte offset {@code off}. */
    float dot(MemorySegment w, long off, int n, float[] x, int xo);

    /**
     * Dot product of {@code a[ao..ao+n)} and {@code b[bo..bo+n)} in an order fixed by {@code n}
     * alone (for {@link Ops#dot}).
     */
    float dot(float[] a, int ao, float[] b, int bo, int n);

    /** Four rows times one vector: {@code out[oo + k*oRow] = dot(row k, x[xo..])}, k = 0..3. */
    default void dot4x1(MemorySegment w, long off, long rowStride, int n, float[] x, int xo, float[] out, int oo,
                        int oRow) {
        for (int k = 0; k < 4; k++) {
            out[oo + k * oRow] = dot(w, off + k * rowStride, n, x, xo);
        }
    }

    /**
     * Four rows times four vectors {@code x[xo + j*xStride ..]}: row k times vector j goes to
     * {@code out[oo + j*oStride + k*oRow]}. An implementation reads the four rows once for all
     * four vectors; this default re-reads them (from L1) for each vector.
     */
    default void dot4x4(MemorySegment w, long off, long rowStride, int n, float[] x, int xo, int xStride,
                        float[] out, int oo, int oRow, int oStride, float[] lanes) {
        for (int j = 0; j < 4; j++) {
            for (int k = 0; k < 4; k++) {
                out[oo + j * oStride + k * oRow] = dot(w, off + k * rowStride, n, x, xo + j * xStride);
            }
        }
    }

    /**
     * Whether {@link #blocks4x1} computes rows of {@code n} values of {@code type} (BF16 or a
     * K-quant) where they lie; otherwise {@link MatMul} decodes each tile into fp32 first.
     */
    default boolean fusesBlocks(DType type, int n) {
        return false;
    }

    /**
     * {@link #dot4x1} on four rows of a block type read where they lie (no fp32 copy), row k's
     * blocks at byte {@code off + k*rowStride}: each weight is decoded in registers with the
     * operations of {@link #decode} and enters the same fma chain, so the outputs have the bits of
     * {@code decode} then {@code dot4x1}. Only where {@link #fusesBlocks}; {@code lanes} is
     * {@link #lanesScratch()} floats of scratch.
     */
    default void blocks4x1(DType type, MemorySegment w, long off, long rowStride, int n, float[] x, int xo, float[] out,
                           int oo, int oRow, float[] lanes) {
        throw new UnsupportedOperationException(name() + " kernels do not compute " + type + " blocks in place");
    }

    /** Rows per panel of {@link Matrix.Panels} that the panel kernels read. */
    int panelHeight();

    /** Most vectors one {@link #panelPair} call takes at once (its accumulators must fit the registers). */
    int panelBatch();

    /**
     * Two panels of {@link #panelHeight()} rows of {@code type} (F32, or F16 / Q8_0 with finite
     * halves; layout in {@link Matrix.Panels}), at byte offsets {@code offA} and
     * {@code offB}, times {@code count} vectors {@code x[xo + j*xStride ..]} of {@code cols} floats:
     * row {@code i} of panel A times vector {@code j} goes to {@code out[ooA + j*oStride + i]}, of
     * panel B to {@code out[ooB + j*oStride + i]}. The two panels are two weight streams in flight;
     * {@code offA == offB} (with {@code ooA == ooB}) serves a lone panel.
     *
     * <p>Each output is the single chain {@code acc = fma(w[i][c], x_j[c], acc)} over
     * {@code c = 0, 1, .., cols-1} from {@code acc = 0}: no lane reduction, so every implementation
     * (vector widths, the scalar fallback, interpreted or compiled) and every count gives the same
     * bits. This default is that chain in plain Java.
     */
    default void panelPair(MemorySegment w, DType type, long offA, long offB, int cols, float[] x, int xo, int xStride,
                           int count, float[] out, int ooA, int ooB, int oStride) {
        for (int j = 0; j < count; j++) {
            panelChain(w, type, offA, panelHeight(), cols, x, xo + j * xStride, out, ooA + j * oStride);
            panelChain(w, type, offB, panelHeight(), cols, x, xo + j * xStride, out, ooB + j * oStride);
        }
    }

    /**
     * Four panels, {@code stride} bytes apart from byte {@code off} on, times one vector
     * {@code x[xo ..]}: panel {@code g}'s rows go to {@code out[oo + g*oStride ..]}. The batch-1
     * case, with four weight streams in flight (fewer leave memory idle between misses: the batch-1
     * matmuls read 15-20% slower here with one or two). Same bits as {@link #panelPair}.
     */
    default void panelQuad(MemorySegment w, DType type, long off, long stride, int cols, float[] x, int xo, float[] out,
                           int oo, int oStride) {
        for (int g = 0; g < 4; g++) {
            panelChain(w, type, off + g * stride, panelHeight(), cols, x, xo, out, oo + g * oStride);
        }
    }

    /**
     * Four panels, {@code stride} bytes apart from byte {@code off} on, times four vectors
     * {@code x[xo + j*xStride ..]}: row {@code i} of panel {@code g} times vector {@code j} goes to
     * {@code out[oo + j*oStride + g*gStride + i]}. Four weight streams in flight for a batch where
     * a {@link #panelPair} of eight vectors has two (2-11% off a batch-8 decode step here, see
     * docs/benchmarks.md); the other groups of four vectors read the same panels again, from L2.
     * Same bits as {@link #panelPair}, whose two calls are this default.
     */
    default void panelQuad4(MemorySegment w, DType type, long off, long stride, int cols, float[] x, int xo, int xStride,
                            float[] out, int oo, int gStride, int oStride) {
        panelPair(w, type, off, off + stride, cols, x, xo, xStride, 4, out, oo, oo + gStride, oStride);
        panelPair(w, type, off + 2 * stride, off + 3 * stride, cols, x, xo, xStride, 4, out, oo + 2 * gStride,
                oo + 3 * gStride, oStride);
    }

    /** The fma chains of one panel of {@code h} rows times one vector, with {@code out} as the accumulators. */
    private static void panelChain(MemorySegment w, DType type, long off, int h, int cols, float[] x, int xo, float[] out,
                                   int oo) {
        Arrays.fill(out, oo, oo + h, 0f);
        for (int c = 0; c < cols; c++) {
            float xc = x[xo + c];
            for (int i = 0; i < h; i++) {
                long e = (long) h * c + i;
                float wv = switch (type) {
                    case F32 -> w.get(Tensor.F32_LE, off + 4 * e);
                    case F16 -> Dequantizer.halfToFloat(w.get(Tensor.I16_LE, off + 2 * e));
                    case Q8_0 -> { // block of 32 columns: the h scales, then 32 columns of h quants
                        long block = off + (long) (c / 32) * 34 * h;
                        yield Dequantizer.halfToFloat(w.get(Tensor.I16_LE, block + 2L * i))
                                * w.get(java.lang.foreign.ValueLayout.JAVA_BYTE, block + 2L * h + (long) (c % 32) * h + i);
                    }
                    default -> throw new IllegalStateException("no " + type + " panels");
                };
                out[oo + i] = Math.fma(wv, xc, out[oo + i]);
            }
        }
    }

    /**
     * Decodes {@code n} values of {@code type} (BF16, Q4_0 and the K-quants: whole blocks) at
     * {@code src[off..]} into fp32 at {@code dst[at..]}, with the bits of {@link Dequantizer#row}.
     */
    default void decode(DType type, MemorySegment src, long off, int n, MemorySegment dst, long at) {
        Dequantizer.row(type, src, off, n, dst, at);
    }

    /** Decodes {@code n} fp16 values at {@code src[off..]} into fp32 at {@code dst[at..]}. Exact. */
    default void decodeF16(MemorySegment src, long off, int n, MemorySegment dst, long at) {
        Dequantizer.row(DType.F16, src, off, n, dst, at);
    }

    /** Decodes {@code n} Q8_0 values ({@code n/32} blocks) at {@code src[off..]} into fp32 at {@code dst[at..]}. Exact. */
    default void decodeQ8(MemorySegment src, long off, int n, MemorySegment dst, long at) {
        // int8 * fp16 fits in 24 bits of mantissa: the product is exact, like the vector version
        Dequantizer.row(DType.Q8_0, src, off, n, dst, at);
    }

    /**
     * {@code acc[ao + i] += scale * v[i]} over {@code n} floats of {@code v} at byte offset {@code off}:
     * a multiply then an add per element (two roundings, no fma), so every implementation gives the
     * same bits.
     */
    default void axpy(float[] acc, int ao, float scale, MemorySegment v, long off, int n) {
        for (int i = 0; i < n; i++) {
            acc[ao + i] += scale * v.get(Tensor.F32_LE, off + 4L * i);
        }
    }

    /**
     * Attention scores over a K panel ({@code KvLayout.Order.HEAD_PANELS}): a head's K of one page
     * stored dimension by dimension, element {@code e} of slot {@code j} at byte
     * {@code off + 4*(e*slots + j)}. For each slot {@code j < count}, {@code out[oo + j]} is the
     * chain {@code acc = fma(k[e][j], x[xo + e], acc)} over {@code e = 0, 1, .., n-1} from
     * {@code acc = 0}: no lane reduction, so every implementation gives the same bits. Slots from
     * {@code count} on are never read (a page's unwritten slots may hold a former owner's data).
     */
    default void panelScores(MemorySegment k, long off, int slots, int count, int n, float[] x, int xo, float[] out,
                             int oo) {
        for (int j = 0; j < count; j++) {
            float acc = 0f;
            for (int e = 0; e < n; e++) {
                acc = Math.fma(k.get(Tensor.F32_LE, off + 4L * ((long) e * slots + j)), x[xo + e], acc);
            }
            out[oo + j] = acc;
        }
    }

    /**
     * {@link #panelScores} of {@code runs} full panels ({@code count == slots}; 1 to
     * {@link #SCORE_RUNS} of them), panel {@code g} (from {@code g = from} on) at byte offset
     * {@code offs[g]} with its query {@code x[xos[g]..]} and scores to {@code out[outs[g]..]}:
     * pages and heads side by side, so that several K streams are in flight. Same bits as one
     * call per panel.
     */
    default void panelScoresN(MemorySegment k, long[] offs, int from, int runs, int slots, int n, float[] x, int[] xos,
                              float[] out, int[] outs) {
        for (int g = from; g < from + runs; g++) {
            panelScores(k, offs[g], slots, slots, n, x, xos[g], out, outs[g]);
        }
    }

    /** Most panels one {@link #panelScoresN} call takes. */
    int SCORE_RUNS = 8;

    /**
     * Attention output: for j = 0, 1, .., count-1 in that order, {@code acc[ao..ao+n) += scales[so + j] * v}
     * with {@code v} the {@code n} floats at byte offset {@code off + j*rowStride}: bit-identical to
     * {@code count} calls of {@link #axpy}.
     */
    default void axpyRows(float[] acc, int ao, float[] scales, int so, MemorySegment v, long off, long rowStride,
                          int count, int n) {
        for (int j = 0; j < count; j++) {
            axpy(acc, ao, scales[so + j], v, off + j * rowStride, n);
        }
    }

    /**
     * {@link #axpyRows} for two heads in one loop: head A accumulates into {@code acc[aoA..]} with
     * scales from {@code so} and rows at {@code offA}, head B into {@code acc[aoB..]} with scales
     * from {@code soB} and rows at {@code offB}; the two output ranges must not overlap. Same bits
     * as the two calls (each element's operations and their order are those of one head alone).
     */
    default void axpyRows2(float[] acc, int aoA, int aoB, float[] scales, int so, int soB, MemorySegment v, long offA,
                           long offB, long rowStride, int count, int n) {
        axpyRows(acc, aoA, scales, so, v, offA, rowStride, count, n);
        axpyRows(acc, aoB, scales, soB, v, offB, rowStride, count, n);
    }

    /** {@code x[i] = Ops.exp(x[i] - shift)} for i in [o, o+n): softmax's exponentials, bit-identical to the scalar {@link Ops#exp}. */
    default void expShifted(float[] x, int o, int n, float shift) {
        for (int i = o; i < o + n; i++) {
            x[i] = Ops.exp(x[i] - shift);
        }
    }

    /** {@code gate[i] = gate[i] / (1 + Ops.exp(-gate[i])) * up[i]} for i in [o, o+n) (SiLU times the up projection); same bits in every implementation. */
    default void swiglu(float[] gate, float[] up, int o, int n) {
        for (int i = o; i < o + n; i++) {
            float g = gate[i];
            gate[i] = g / (1f + Ops.exp(-g)) * up[i];
        }
    }

    /** Reads every float of {@code seg[from..to)} ({@code to - from} a multiple of 4) and returns their sum, for {@link Bandwidth}. */
    float readAll(MemorySegment seg, long from, long to);
}
