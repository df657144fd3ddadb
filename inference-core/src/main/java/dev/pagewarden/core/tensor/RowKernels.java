package dev.pagewarden.core.tensor;

import java.lang.foreign.MemorySegment;

/**
 * The inner loops of {@link MatMul}, implemented once with the Vector API ({@link VectorKernels})
 * and once in plain Java ({@link ScalarKernels}) for JVMs without {@code jdk.incubator.vector}.
 *
 * <p>Every implementation fixes the accumulation order of a dot product as a function of the length
 * alone, and {@link #dot4} performs, for each of its four vectors, exactly the operations of
 * {@link #dot}: that is what makes {@code MatMul} batch invariant.
 *
 * <p>Weights are fp32 little-endian at any byte alignment; F16 and Q8_0 rows are first decoded into
 * an fp32 scratch row by {@link #decodeF16} / {@link #decodeQ8}, so one dot kernel serves all types.
 */
interface RowKernels {

    /** Short name for logs and benchmarks. */
    String name();

    /** {@code sum_i w[i] * x[xo + i]} over {@code n} floats of {@code w} at byte offset {@code off}. */
    float dot(MemorySegment w, long off, int n, float[] x, int xo);

    /**
     * Four dot products of the same weights against {@code x[xo + j*xStride ..]}, stored in
     * {@code out[oo + j*oStride]} for j = 0..3; each bit-identical to {@link #dot}. Reads the
     * weights once for all four.
     */
    void dot4(MemorySegment w, long off, int n, float[] x, int xo, int xStride, float[] out, int oo, int oStride);

    /** Decodes {@code n} fp16 values at {@code src[off..]} into fp32 at {@code dst[0..]}. Exact. */
    void decodeF16(MemorySegment src, long off, int n, MemorySegment dst);

    /** Decodes {@code n} Q8_0 values ({@code n/32} blocks) at {@code src[off..]} into fp32 at {@code dst[0..]}. Exact. */
    void decodeQ8(MemorySegment src, long off, int n, MemorySegment dst);

    /** Reads every float of {@code seg[from..to)} ({@code to - from} a multiple of 4) and returns their sum, for {@link Bandwidth}. */
    float readAll(MemorySegment seg, long from, long to);
}
