package dev.pagewarden.core.tensor;

import dev.pagewarden.core.model.DType;
import dev.pagewarden.core.model.Dequantizer;
import dev.pagewarden.core.model.Tensor;

import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.ByteOrder;

import jdk.incubator.vector.ByteVector;
import jdk.incubator.vector.DoubleVector;
import jdk.incubator.vector.LongVector;
import jdk.incubator.vector.FloatVector;
import jdk.incubator.vector.IntVector;
import jdk.incubator.vector.ShortVector;
import jdk.incubator.vector.VectorMask;
import jdk.incubator.vector.VectorOperators;
import jdk.incubator.vector.VectorShape;
import jdk.incubator.vector.VectorShuffle;
import jdk.incubator.vector.VectorSpecies;

/**
 * Vector API row kernels (preferred species: 16 float lanes with AVX-512, 8 with AVX2).
 *
 * <p>Order of one dot product, fixed by its length alone: a single accumulator takes
 * {@code acc = fma(w[i..i+L), x[i..i+L), acc)} for i = 0, L, 2L, ... (fma is exact per lane),
 * its lanes are summed by the fixed pairwise tree of {@link #sumLanes}, and if {@code n % L != 0}
 * the scalar tail of those columns (summed left to right) is added last. No {@code reduceLanes}:
 * its order is unspecified and differs between the intrinsic and the Java fallback that runs
 * before C2 compiles.
 *
 * <p>One accumulator per dot product means one chain of dependent fmas; the tiles hide its
 * latency by running several dot products side by side: four rows for one vector (batch 1 is
 * memory-bound: a lean loop over four row streams keeps many loads in flight), four rows for four
 * vectors (the batched case is compute-bound: each weight vector and each x vector loaded feeds
 * four fmas).
 *
 * <p>Panel kernels ({@link Matrix.Panels}, the CPU backend's weights): a panel is {@code L} rows, a
 * column of it one vector (F32, F16 widened, or Q8_0 quants times their block's scales); an
 * accumulator per (panel, vector) takes one fma per column, so each output is a chain in column
 * order and no lanes are ever summed. Batch 1 runs four panels (four streams) per loop (Q8_0: two
 * pairs); batches run two panels for up to eight vectors (16 accumulators). One loop per weight
 * type: see {@link #panelPair}.
 *
 * <p>In-place kernels ({@link #blocks4x1}, 16 lanes): BF16 and K-quant rows times one vector, four
 * rows side by side, each weight decoded in registers with the block decoder's operations and fed
 * to the row's fma chain, so the bits are those of {@link #decode} then {@link #dot4x1}.
 */
final class VectorKernels implements RowKernels {
    static final VectorKernels INSTANCE = new VectorKernels();

    static final VectorSpecies<Float> F = FloatVector.SPECIES_PREFERRED;
    static final int L = F.length();
    private static final VectorSpecies<Integer> I = VectorSpecies.of(int.class, F.vectorShape());
    /** L half floats: half the bits of F. */
    private static final VectorSpecies<Short> H = VectorSpecies.of(short.class, VectorShape.forBitSize(L * 16));
    /** L quantised bytes, only where such a shape exists (64 bits and up) and L divides the Q8_0 block. */
    private static final boolean Q8_VECTOR = L >= 8 && L <= 32;
    private static final VectorSpecies<Byte> B = Q8_VECTOR ? VectorSpecies.of(byte.class, VectorShape.forBitSize(L * 8)) : null;
    private static final ByteOrder LE = ByteOrder.LITTLE_ENDIAN;

    // Lane rotations for the reduction tree (wrap keeps them valid for every L).
    private static final VectorShuffle<Float> ROT8 = VectorShuffle.iota(F, 8, 1, true);
    private static final VectorShuffle<Float> ROT4 = VectorShuffle.iota(F, 4, 1, true);
    private static final VectorShuffle<Float> ROT2 = VectorShuffle.iota(F, 2, 1, true);
    private static final VectorShuffle<Float> ROT1 = VectorShuffle.iota(F, 1, 1, true);

    // Index vectors of merge() for 16 lanes; null where L != 16.
    private static final FloatVector LO8 = mergeIndex(8, false), HI8 = mergeIndex(8, true);
    private static final FloatVector LO4 = mergeIndex(4, false), HI4 = mergeIndex(4, true);
    private static final FloatVector LO2 = mergeIndex(2, false), HI2 = mergeIndex(2, true);
    private static final FloatVector LO1 = mergeIndex(1, false), HI1 = mergeIndex(1, true);

    private VectorKernels() {
    }

    @Override
    public String name() {
        return "vector-" + F.vectorBitSize();
    }

    @Override
    public int lanesScratch() {
        return 16 * L;
    }

    /** One vector per panel column: output row {@code r} of a panel is lane {@code r} of an accumulator. */
    @Override
    public int panelHeight() {
        return L;
    }

    /** Eight vectors of two panels (16 accumulators + 2 weight vectors + 1 broadcast) where there are 32 vector registers. */
    @Override
    public int panelBatch() {
        return L >= 16 ? 8 : 4;
    }

    @Override
    public void panelPair(MemorySegment w, DType type, long offA, long offB, int cols, float[] x, int xo, int xStride,
                          int count, float[] out, int ooA, int ooB, int oStride) {
        if (type == DType.Q8_0 && !Q8_VECTOR) {
            RowKernels.super.panelPair(w, type, offA, offB, cols, x, xo, xStride, count, out, ooA, ooB, oStride);
            return;
        }
        // One loop per weight type, chosen here: with the type tested inside the loop, C2 compiled
        // the case its profile never saw as a trap whose state kept one accumulator boxed on the
        // heap, one allocation per column (F16 batch 1 ran at half speed in the engine).
        int j = 0;
        if (panelBatch() == 8) {
            for (; j + 8 <= count; j += 8) {
                int xj = xo + j * xStride, a = ooA + j * oStride, b = ooB + j * oStride;
                switch (type) {
                    case F32 -> pair8F32(w, offA, offB, cols, x, xj, xStride, out, a, b, oStride);
                    case F16 -> pair8F16(w, offA, offB, cols, x, xj, xStride, out, a, b, oStride);
                    case Q8_0 -> pair8Q8(w, offA, offB, cols, x, xj, xStride, out, a, b, oStride);
                }
            }
        }
        for (; j + 4 <= count; j += 4) {
            int xj = xo + j * xStride, a = ooA + j * oStride, b = ooB + j * oStride;
            switch (type) {
                case F32 -> pair4F32(w, offA, offB, cols, x, xj, xStride, out, a, b, oStride);
                case F16 -> pair4F16(w, offA, offB, cols, x, xj, xStride, out, a, b, oStride);
                case Q8_0 -> pair4Q8(w, offA, offB, cols, x, xj, xStride, out, a, b, oStride);
            }
        }
        for (; j < count; j++) {
            int xj = xo + j * xStride, a = ooA + j * oStride, b = ooB + j * oStride;
            switch (type) {
                case F32 -> pair1F32(w, offA, offB, cols, x, xj, out, a, b);
                case F16 -> pair1F16(w, offA, offB, cols, x, xj, out, a, b);
                case Q8_0 -> pair1Q8(w, offA, offB, cols, x, xj, out, a, b);
            }
        }
    }

    @Override
    public void panelQuad(MemorySegment w, DType type, long off, long stride, int cols, float[] x, int xo, float[] out,
                          int oo, int oStride) {
        switch (type) {
            case F32 -> quadF32(w, off, stride, cols, x, xo, out, oo, oStride);
            case F16 -> quadF16(w, off, stride, cols, x, xo, out, oo, oStride);
            case Q8_0 -> {
                if (Q8_VECTOR) {
                    // two pairs: a four-panel Q8_0 loop (4 scales, 4 accumulators) compiled to code
                    // five times slower than two-panel loops (KernelBench batch 1: 24-33 vs 164-183 tok/s)
                    pair1Q8(w, off, off + stride, cols, x, xo, out, oo, oo + oStride);
                    pair1Q8(w, off + 2 * stride, off + 3 * stride, cols, x, xo, out, oo + 2 * oStride, oo + 3 * oStride);
                } else {
                    RowKernels.super.panelQuad(w, type, off, stride, cols, x, xo, out, oo, oStride);
                }
            }
        }
    }

    @Override
    public void panelQuad4(MemorySegment w, DType type, long off, long stride, int cols, float[] x, int xo, int xStride,
                           float[] out, int oo, int gStride, int oStride) {
        if (type == DType.F32) {
            quad4F32(w, off, stride, cols, x, xo, xStride, out, oo, gStride, oStride);
        } else {
            RowKernels.super.panelQuad4(w, type, off, stride, cols, x, xo, xStride, out, oo, gStride, oStride);
        }
    }

    /** Four panels (a, b, c, d) times four vectors (0..3): four weight loads, four broadcasts, sixteen fmas per column. */
    private static void quad4F32(MemorySegment w, long off, long stride, int cols, float[] x, int xo, int xStride,
                                 float[] out, int oo, int gStride, int oStride) {
        FloatVector z = FloatVector.zero(F);
        FloatVector a0 = z, a1 = z, a2 = z, a3 = z, b0 = z, b1 = z, b2 = z, b3 = z;
        FloatVector c0 = z, c1 = z, c2 = z, c3 = z, d0 = z, d1 = z, d2 = z, d3 = z;
        long o1 = off + stride, o2 = o1 + stride, o3 = o2 + stride;
        for (int i = 0; i < cols; i++) {
            FloatVector wa = colF32(w, off, i);
            FloatVector wb = colF32(w, o1, i);
            FloatVector wc = colF32(w, o2, i);
            FloatVector wd = colF32(w, o3, i);
            FloatVector x0 = FloatVector.broadcast(F, x[xo + i]);
            a0 = wa.fma(x0, a0);
            b0 = wb.fma(x0, b0);
            c0 = wc.fma(x0, c0);
            d0 = wd.fma(x0, d0);
            FloatVector x1 = FloatVector.broadcast(F, x[xo + xStride + i]);
            a1 = wa.fma(x1, a1);
            b1 = wb.fma(x1, b1);
            c1 = wc.fma(x1, c1);
            d1 = wd.fma(x1, d1);
            FloatVector x2 = FloatVector.broadcast(F, x[xo + 2 * xStride + i]);
            a2 = wa.fma(x2, a2);
            b2 = wb.fma(x2, b2);
            c2 = wc.fma(x2, c2);
            d2 = wd.fma(x2, d2);
            FloatVector x3 = FloatVector.broadcast(F, x[xo + 3 * xStride + i]);
            a3 = wa.fma(x3, a3);
            b3 = wb.fma(x3, b3);
            c3 = wc.fma(x3, c3);
            d3 = wd.fma(x3, d3);
        }
        int g1 = gStride, g2 = 2 * gStride, g3 = 3 * gStride;
        a0.intoArray(out, oo);
        b0.intoArray(out, oo + g1);
        c0.intoArray(out, oo + g2);
        d0.intoArray(out, oo + g3);
        int o = oo + oStride;
        a1.intoArray(out, o);
        b1.intoArray(out, o + g1);
        c1.intoArray(out, o + g2);
        d1.intoArray(out, o + g3);
        o += oStride;
        a2.intoArray(out, o);
        b2.intoArray(out, o + g1);
        c2.intoArray(out, o + g2);
        d2.intoArray(out, o + g3);
        o += oStride;
        a3.intoArray(out, o);
        b3.intoArray(out, o + g1);
        c3.intoArray(out, o + g2);
        d3.intoArray(out, o + g3);
    }

    private static void quadF32(MemorySegment w, long off, long stride, int cols, float[] x, int xo, float[] out, int oo,
                                int oStride) {
        FloatVector a = FloatVector.zero(F), b = a, c = a, d = a;
        long o1 = off + stride, o2 = o1 + stride, o3 = o2 + stride;
        for (int i = 0; i < cols; i++) {
            FloatVector xv = FloatVector.broadcast(F, x[xo + i]);
            a = colF32(w, off, i).fma(xv, a);
            b = colF32(w, o1, i).fma(xv, b);
            c = colF32(w, o2, i).fma(xv, c);
            d = colF32(w, o3, i).fma(xv, d);
        }
        a.intoArray(out, oo);
        b.intoArray(out, oo + oStride);
        c.intoArray(out, oo + 2 * oStride);
        d.intoArray(out, oo + 3 * oStride);
    }

    private static void quadF16(MemorySegment w, long off, long stride, int cols, float[] x, int xo, float[] out, int oo,
                                int oStride) {
        FloatVector a = FloatVector.zero(F), b = a, c = a, d = a;
        long o1 = off + stride, o2 = o1 + stride, o3 = o2 + stride;
        for (int i = 0; i < cols; i++) {
            FloatVector xv = FloatVector.broadcast(F, x[xo + i]);
            a = colF16(w, off, i).fma(xv, a);
            b = colF16(w, o1, i).fma(xv, b);
            c = colF16(w, o2, i).fma(xv, c);
            d = colF16(w, o3, i).fma(xv, d);
        }
        a.intoArray(out, oo);
        b.intoArray(out, oo + oStride);
        c.intoArray(out, oo + 2 * oStride);
        d.intoArray(out, oo + 3 * oStride);
    }

    private static void pair1F32(MemorySegment w, long offA, long offB, int cols, float[] x, int xo,
                                  float[] out, int ooA, int ooB) {
        FloatVector z = FloatVector.zero(F);
        FloatVector a0 = z;
        FloatVector b0 = z;
        for (int c = 0; c < cols; c++) {
            FloatVector wa = colF32(w, offA, c);
            FloatVector wb = colF32(w, offB, c);
            FloatVector x0 = FloatVector.broadcast(F, x[xo + c]);
            a0 = wa.fma(x0, a0);
            b0 = wb.fma(x0, b0);
        }
        a0.intoArray(out, ooA);
        b0.intoArray(out, ooB);
    }

    private static void pair4F32(MemorySegment w, long offA, long offB, int cols, float[] x, int xo, int xStride,
                                  float[] out, int ooA, int ooB, int oStride) {
        FloatVector z = FloatVector.zero(F);
        FloatVector a0 = z, a1 = z, a2 = z, a3 = z;
        FloatVector b0 = z, b1 = z, b2 = z, b3 = z;
        for (int c = 0; c < cols; c++) {
            FloatVector wa = colF32(w, offA, c);
            FloatVector wb = colF32(w, offB, c);
            FloatVector x0 = FloatVector.broadcast(F, x[xo + c]);
            a0 = wa.fma(x0, a0);
            b0 = wb.fma(x0, b0);
            FloatVector x1 = FloatVector.broadcast(F, x[xo + xStride + c]);
            a1 = wa.fma(x1, a1);
            b1 = wb.fma(x1, b1);
            FloatVector x2 = FloatVector.broadcast(F, x[xo + 2 * xStride + c]);
            a2 = wa.fma(x2, a2);
            b2 = wb.fma(x2, b2);
            FloatVector x3 = FloatVector.broadcast(F, x[xo + 3 * xStride + c]);
            a3 = wa.fma(x3, a3);
            b3 = wb.fma(x3, b3);
        }
        a0.intoArray(out, ooA);
        b0.intoArray(out, ooB);
        a1.intoArray(out, ooA + oStride);
        b1.intoArray(out, ooB + oStride);
        a2.intoArray(out, ooA + 2 * oStride);
        b2.intoArray(out, ooB + 2 * oStride);
        a3.intoArray(out, ooA + 3 * oStride);
        b3.intoArray(out, ooB + 3 * oStride);
    }

    /**
     * Eight vectors of two panels at once: each column's two weight vectors (one per panel, two
     * streams in flight) are loaded once and feed sixteen fmas, and the weights pass by once for
     * the whole group, so the memory stream never pauses for a second pass over cached data.
     */
    private static void pair8F32(MemorySegment w, long offA, long offB, int cols, float[] x, int xo, int xStride,
                                  float[] out, int ooA, int ooB, int oStride) {
        FloatVector z = FloatVector.zero(F);
        FloatVector a0 = z, a1 = z, a2 = z, a3 = z, a4 = z, a5 = z, a6 = z, a7 = z;
        FloatVector b0 = z, b1 = z, b2 = z, b3 = z, b4 = z, b5 = z, b6 = z, b7 = z;
        for (int c = 0; c < cols; c++) {
            FloatVector wa = colF32(w, offA, c);
            FloatVector wb = colF32(w, offB, c);
            FloatVector x0 = FloatVector.broadcast(F, x[xo + c]);
            a0 = wa.fma(x0, a0);
            b0 = wb.fma(x0, b0);
            FloatVector x1 = FloatVector.broadcast(F, x[xo + xStride + c]);
            a1 = wa.fma(x1, a1);
            b1 = wb.fma(x1, b1);
            FloatVector x2 = FloatVector.broadcast(F, x[xo + 2 * xStride + c]);
            a2 = wa.fma(x2, a2);
            b2 = wb.fma(x2, b2);
            FloatVector x3 = FloatVector.broadcast(F, x[xo + 3 * xStride + c]);
            a3 = wa.fma(x3, a3);
            b3 = wb.fma(x3, b3);
            FloatVector x4 = FloatVector.broadcast(F, x[xo + 4 * xStride + c]);
            a4 = wa.fma(x4, a4);
            b4 = wb.fma(x4, b4);
            FloatVector x5 = FloatVector.broadcast(F, x[xo + 5 * xStride + c]);
            a5 = wa.fma(x5, a5);
            b5 = wb.fma(x5, b5);
            FloatVector x6 = FloatVector.broadcast(F, x[xo + 6 * xStride + c]);
            a6 = wa.fma(x6, a6);
            b6 = wb.fma(x6, b6);
            FloatVector x7 = FloatVector.broadcast(F, x[xo + 7 * xStride + c]);
            a7 = wa.fma(x7, a7);
            b7 = wb.fma(x7, b7);
        }
        a0.intoArray(out, ooA);
        b0.intoArray(out, ooB);
        a1.intoArray(out, ooA + oStride);
        b1.intoArray(out, ooB + oStride);
        a2.intoArray(out, ooA + 2 * oStride);
        b2.intoArray(out, ooB + 2 * oStride);
        a3.intoArray(out, ooA + 3 * oStride);
        b3.intoArray(out, ooB + 3 * oStride);
        a4.intoArray(out, ooA + 4 * oStride);
        b4.intoArray(out, ooB + 4 * oStride);
        a5.intoArray(out, ooA + 5 * oStride);
        b5.intoArray(out, ooB + 5 * oStride);
        a6.intoArray(out, ooA + 6 * oStride);
        b6.intoArray(out, ooB + 6 * oStride);
        a7.intoArray(out, ooA + 7 * oStride);
        b7.intoArray(out, ooB + 7 * oStride);
    }

    private static void pair1F16(MemorySegment w, long offA, long offB, int cols, float[] x, int xo,
                                  float[] out, int ooA, int ooB) {
        FloatVector z = FloatVector.zero(F);
        FloatVector a0 = z;
        FloatVector b0 = z;
        for (int c = 0; c < cols; c++) {
            FloatVector wa = colF16(w, offA, c);
            FloatVector wb = colF16(w, offB, c);
            FloatVector x0 = FloatVector.broadcast(F, x[xo + c]);
            a0 = wa.fma(x0, a0);
            b0 = wb.fma(x0, b0);
        }
        a0.intoArray(out, ooA);
        b0.intoArray(out, ooB);
    }

    private static void pair4F16(MemorySegment w, long offA, long offB, int cols, float[] x, int xo, int xStride,
                                  float[] out, int ooA, int ooB, int oStride) {
        FloatVector z = FloatVector.zero(F);
        FloatVector a0 = z, a1 = z, a2 = z, a3 = z;
        FloatVector b0 = z, b1 = z, b2 = z, b3 = z;
        for (int c = 0; c < cols; c++) {
            FloatVector wa = colF16(w, offA, c);
            FloatVector wb = colF16(w, offB, c);
            FloatVector x0 = FloatVector.broadcast(F, x[xo + c]);
            a0 = wa.fma(x0, a0);
            b0 = wb.fma(x0, b0);
            FloatVector x1 = FloatVector.broadcast(F, x[xo + xStride + c]);
            a1 = wa.fma(x1, a1);
            b1 = wb.fma(x1, b1);
            FloatVector x2 = FloatVector.broadcast(F, x[xo + 2 * xStride + c]);
            a2 = wa.fma(x2, a2);
            b2 = wb.fma(x2, b2);
            FloatVector x3 = FloatVector.broadcast(F, x[xo + 3 * xStride + c]);
            a3 = wa.fma(x3, a3);
            b3 = wb.fma(x3, b3);
        }
        a0.intoArray(out, ooA);
        b0.intoArray(out, ooB);
        a1.intoArray(out, ooA + oStride);
        b1.intoArray(out, ooB + oStride);
        a2.intoArray(out, ooA + 2 * oStride);
        b2.intoArray(out, ooB + 2 * oStride);
        a3.intoArray(out, ooA + 3 * oStride);
        b3.intoArray(out, ooB + 3 * oStride);
    }

    /**
     * Eight vectors of two panels at once: each column's two weight vectors (one per panel, two
     * streams in flight) are loaded once and feed sixteen fmas, and the weights pass by once for
     * the whole group, so the memory stream never pauses for a second pass over cached data.
     */
    private static void pair8F16(MemorySegment w, long offA, long offB, int cols, float[] x, int xo, int xStride,
                                  float[] out, int ooA, int ooB, int oStride) {
        FloatVector z = FloatVector.zero(F);
        FloatVector a0 = z, a1 = z, a2 = z, a3 = z, a4 = z, a5 = z, a6 = z, a7 = z;
        FloatVector b0 = z, b1 = z, b2 = z, b3 = z, b4 = z, b5 = z, b6 = z, b7 = z;
        for (int c = 0; c < cols; c++) {
            FloatVector wa = colF16(w, offA, c);
            FloatVector wb = colF16(w, offB, c);
            FloatVector x0 = FloatVector.broadcast(F, x[xo + c]);
            a0 = wa.fma(x0, a0);
            b0 = wb.fma(x0, b0);
            FloatVector x1 = FloatVector.broadcast(F, x[xo + xStride + c]);
            a1 = wa.fma(x1, a1);
            b1 = wb.fma(x1, b1);
            FloatVector x2 = FloatVector.broadcast(F, x[xo + 2 * xStride + c]);
            a2 = wa.fma(x2, a2);
            b2 = wb.fma(x2, b2);
            FloatVector x3 = FloatVector.broadcast(F, x[xo + 3 * xStride + c]);
            a3 = wa.fma(x3, a3);
            b3 = wb.fma(x3, b3);
            FloatVector x4 = FloatVector.broadcast(F, x[xo + 4 * xStride + c]);
            a4 = wa.fma(x4, a4);
            b4 = wb.fma(x4, b4);
            FloatVector x5 = FloatVector.broadcast(F, x[xo + 5 * xStride + c]);
            a5 = wa.fma(x5, a5);
            b5 = wb.fma(x5, b5);
            FloatVector x6 = FloatVector.broadcast(F, x[xo + 6 * xStride + c]);
            a6 = wa.fma(x6, a6);
            b6 = wb.fma(x6, b6);
            FloatVector x7 = FloatVector.broadcast(F, x[xo + 7 * xStride + c]);
            a7 = wa.fma(x7, a7);
            b7 = wb.fma(x7, b7);
        }
        a0.intoArray(out, ooA);
        b0.intoArray(out, ooB);
        a1.intoArray(out, ooA + oStride);
        b1.intoArray(out, ooB + oStride);
        a2.intoArray(out, ooA + 2 * oStride);
        b2.intoArray(out, ooB + 2 * oStride);
        a3.intoArray(out, ooA + 3 * oStride);
        b3.intoArray(out, ooB + 3 * oStride);
        a4.intoArray(out, ooA + 4 * oStride);
        b4.intoArray(out, ooB + 4 * oStride);
        a5.intoArray(out, ooA + 5 * oStride);
        b5.intoArray(out, ooB + 5 * oStride);
        a6.intoArray(out, ooA + 6 * oStride);
        b6.intoArray(out, ooB + 6 * oStride);
        a7.intoArray(out, ooA + 7 * oStride);
        b7.intoArray(out, ooB + 7 * oStride);
    }

    /**
     * Column {@code c} of the F32 panel at byte {@code off}. The offset is the long loop index times
     * a constant plus an invariant, a form C2 range-checks once before the loop; computed in int
     * arithmetic first (which might overflow) it got a bounds check per load and no unrolling.
     */
    private static FloatVector colF32(MemorySegment w, long off, int c) {
        return FloatVector.fromMemorySegment(F, w, off + 4L * L * c, LE);
    }

    private static void pair1Q8(MemorySegment w, long offA, long offB, int cols, float[] x, int xo,
                                 float[] out, int ooA, int ooB) {
        FloatVector z = FloatVector.zero(F);
        FloatVector a0 = z;
        FloatVector b0 = z;
        for (int blk = 0; blk < cols / 32; blk++) {
            long baseA = offA + Q8_PANEL_BLOCK * blk, baseB = offB + Q8_PANEL_BLOCK * blk;
            FloatVector sa = halves(w, baseA), sb = halves(w, baseB);
            for (int j = 0; j < 32; j++) {
                int c = 32 * blk + j;
                FloatVector wa = quants(w, baseA, j).mul(sa);
                FloatVector wb = quants(w, baseB, j).mul(sb);
                FloatVector x0 = FloatVector.broadcast(F, x[xo + c]);
                a0 = wa.fma(x0, a0);
                b0 = wb.fma(x0, b0);
            }
        }
        a0.intoArray(out, ooA);
        b0.intoArray(out, ooB);
    }

    private static void pair4Q8(MemorySegment w, long offA, long offB, int cols, float[] x, int xo, int xStride,
                                 float[] out, int ooA, int ooB, int oStride) {
        FloatVector z = FloatVector.zero(F);
        FloatVector a0 = z, a1 = z, a2 = z, a3 = z;
        FloatVector b0 = z, b1 = z, b2 = z, b3 = z;
        for (int blk = 0; blk < cols / 32; blk++) {
            long baseA = offA + Q8_PANEL_BLOCK * blk, baseB = offB + Q8_PANEL_BLOCK * blk;
            FloatVector sa = halves(w, baseA), sb = halves(w, baseB);
            for (int j = 0; j < 32; j++) {
                int c = 32 * blk + j;
                FloatVector wa = quants(w, baseA, j).mul(sa);
                FloatVector wb = quants(w, baseB, j).mul(sb);
                FloatVector x0 = FloatVector.broadcast(F, x[xo + c]);
                a0 = wa.fma(x0, a0);
                b0 = wb.fma(x0, b0);
                FloatVector x1 = FloatVector.broadcast(F, x[xo + xStride + c]);
                a1 = wa.fma(x1, a1);
                b1 = wb.fma(x1, b1);
                FloatVector x2 = FloatVector.broadcast(F, x[xo + 2 * xStride + c]);
                a2 = wa.fma(x2, a2);
                b2 = wb.fma(x2, b2);
                FloatVector x3 = FloatVector.broadcast(F, x[xo + 3 * xStride + c]);
                a3 = wa.fma(x3, a3);
                b3 = wb.fma(x3, b3);
            }
        }
        a0.intoArray(out, ooA);
        b0.intoArray(out, ooB);
        a1.intoArray(out, ooA + oStride);
        b1.intoArray(out, ooB + oStride);
        a2.intoArray(out, ooA + 2 * oStride);
        b2.intoArray(out, ooB + 2 * oStride);
        a3.intoArray(out, ooA + 3 * oStride);
        b3.intoArray(out, ooB + 3 * oStride);
    }

    /** {@link #pair8F32} for Q8_0 panels: each column's quants times their block's scales, then the same sixteen fmas. */
    private static void pair8Q8(MemorySegment w, long offA, long offB, int cols, float[] x, int xo, int xStride,
                                 float[] out, int ooA, int ooB, int oStride) {
        FloatVector z = FloatVector.zero(F);
        FloatVector a0 = z, a1 = z, a2 = z, a3 = z, a4 = z, a5 = z, a6 = z, a7 = z;
        FloatVector b0 = z, b1 = z, b2 = z, b3 = z, b4 = z, b5 = z, b6 = z, b7 = z;
        for (int blk = 0; blk < cols / 32; blk++) {
            long baseA = offA + Q8_PANEL_BLOCK * blk, baseB = offB + Q8_PANEL_BLOCK * blk;
            FloatVector sa = halves(w, baseA), sb = halves(w, baseB);
            for (int j = 0; j < 32; j++) {
                int c = 32 * blk + j;
                FloatVector wa = quants(w, baseA, j).mul(sa);
                FloatVector wb = quants(w, baseB, j).mul(sb);
                FloatVector x0 = FloatVector.broadcast(F, x[xo + c]);
                a0 = wa.fma(x0, a0);
                b0 = wb.fma(x0, b0);
                FloatVector x1 = FloatVector.broadcast(F, x[xo + xStride + c]);
                a1 = wa.fma(x1, a1);
                b1 = wb.fma(x1, b1);
                FloatVector x2 = FloatVector.broadcast(F, x[xo + 2 * xStride + c]);
                a2 = wa.fma(x2, a2);
                b2 = wb.fma(x2, b2);
                FloatVector x3 = FloatVector.broadcast(F, x[xo + 3 * xStride + c]);
                a3 = wa.fma(x3, a3);
                b3 = wb.fma(x3, b3);
                FloatVector x4 = FloatVector.broadcast(F, x[xo + 4 * xStride + c]);
                a4 = wa.fma(x4, a4);
                b4 = wb.fma(x4, b4);
                FloatVector x5 = FloatVector.broadcast(F, x[xo + 5 * xStride + c]);
                a5 = wa.fma(x5, a5);
                b5 = wb.fma(x5, b5);
                FloatVector x6 = FloatVector.broadcast(F, x[xo + 6 * xStride + c]);
                a6 = wa.fma(x6, a6);
                b6 = wb.fma(x6, b6);
                FloatVector x7 = FloatVector.broadcast(F, x[xo + 7 * xStride + c]);
                a7 = wa.fma(x7, a7);
                b7 = wb.fma(x7, b7);
            }
        }
        a0.intoArray(out, ooA);
        b0.intoArray(out, ooB);
        a1.intoArray(out, ooA + oStride);
        b1.intoArray(out, ooB + oStride);
        a2.intoArray(out, ooA + 2 * oStride);
        b2.intoArray(out, ooB + 2 * oStride);
        a3.intoArray(out, ooA + 3 * oStride);
        b3.intoArray(out, ooB + 3 * oStride);
        a4.intoArray(out, ooA + 4 * oStride);
        b4.intoArray(out, ooB + 4 * oStride);
        a5.intoArray(out, ooA + 5 * oStride);
        b5.intoArray(out, ooB + 5 * oStride);
        a6.intoArray(out, ooA + 6 * oStride);
        b6.intoArray(out, ooB + 6 * oStride);
        a7.intoArray(out, ooA + 7 * oStride);
        b7.intoArray(out, ooB + 7 * oStride);
    }

    /** Bytes of one 32-column Q8_0 block of a panel: the L scales, then 32 columns of L quants. */
    private static final long Q8_PANEL_BLOCK = 34L * L;

    /** Quants of column {@code j} of the Q8_0 panel block at byte {@code base}, as floats (exact). */
    private static FloatVector quants(MemorySegment w, long base, int j) {
        return (FloatVector) ByteVector.fromMemorySegment(B, w, base + 2L * L + (long) L * j, LE)
                .convertShape(VectorOperators.B2F, F, 0);
    }

    /** Column {@code c} of the F16 panel at byte {@code off}, widened to floats. */
    private static FloatVector colF16(MemorySegment w, long off, int c) {
        return halves(w, off + 2L * L * c);
    }

    /** L finite halves at byte {@code at}, widened to floats. */
    private static FloatVector halves(MemorySegment w, long at) {
        // Finite halves only (Matrix.Panels.packable): exponent and mantissa moved to fp32
        // positions and rebiased by a multiplication with 2^(127-15), exact for normal and
        // subnormal halves alike; then the sign. The same bits as decodeF16 and halfToFloat.
        IntVector h = (IntVector) ShortVector.fromMemorySegment(H, w, at, LE)
                .convertShape(VectorOperators.S2I, I, 0);
        return h.and(0x7fff).lanewise(VectorOperators.LSHL, 13).reinterpretAsFloats().mul(0x1p112f)
                .reinterpretAsInts().or(h.and(0x8000_0000)).reinterpretAsFloats();
    }

    private static FloatVector w(MemorySegment w, long off, int i) {
        return FloatVector.fromMemorySegment(F, w, off + 4L * i, LE);
    }

    private static FloatVector x(float[] x, int i) {
        return FloatVector.fromArray(F, x, i);
    }

    /** The vector part covers columns [0, vectorEnd(n)); the rest is the scalar tail. */
    private static int vectorEnd(int n) {
        return n - n % L;
    }

    @Override
    public float dot(MemorySegment w, long off, int n, float[] x, int xo) {
        FloatVector acc = FloatVector.zero(F);
        int end = vectorEnd(n);
        for (int i = 0; i < end; i += L) {
            acc = w(w, off, i).fma(x(x, xo + i), acc);
        }
        float sum = sumLanes(acc);
        return end < n ? sum + tail(w, off, end, n, x, xo) : sum;
    }

    @Override
    public void dot4x1(MemorySegment w, long off, long rowStride, int n, float[] x, int xo, float[] out, int oo,
                       int oRow) {
        long o0 = off, o1 = off + rowStride, o2 = o1 + rowStride, o3 = o2 + rowStride;
        FloatVector a0 = FloatVector.zero(F), a1 = a0, a2 = a0, a3 = a0;
        int end = vectorEnd(n);
        for (int i = 0; i < end; i += L) {
            FloatVector xv = x(x, xo + i);
            a0 = w(w, o0, i).fma(xv, a0);
            a1 = w(w, o1, i).fma(xv, a1);
            a2 = w(w, o2, i).fma(xv, a2);
            a3 = w(w, o3, i).fma(xv, a3);
        }
        out[oo] = sumLanes(a0);
        out[oo + oRow] = sumLanes(a1);
        out[oo + 2 * oRow] = sumLanes(a2);
        out[oo + 3 * oRow] = sumLanes(a3);
        if (end < n) {
            for (int k = 0; k < 4; k++) {
                out[oo + k * oRow] += tail(w, off + k * rowStride, end, n, x, xo);
            }
        }
    }

    @Override
    public void dot4x4(MemorySegment w, long off, long rowStride, int n, float[] x, int xo, int xStride,
                       float[] out, int oo, int oRow, int oStride, float[] lanes) {
        // 16 accumulators + 4 weight vectors + 1 x vector: fits the 32 AVX-512 registers; each
        // weight vector loaded feeds four fmas and each x vector four (a 2x8 tile: two and eight,
        // ten loads per sixteen fmas instead of eight - about 25% slower here).
        long o0 = off, o1 = o0 + rowStride, o2 = o1 + rowStride, o3 = o2 + rowStride;
        int x0 = xo, x1 = x0 + xStride, x2 = x1 + xStride, x3 = x2 + xStride;
        FloatVector z = FloatVector.zero(F);
        FloatVector a00 = z, a01 = z, a02 = z, a03 = z; // vector 0, rows 0..3
        FloatVector a10 = z, a11 = z, a12 = z, a13 = z;
        FloatVector a20 = z, a21 = z, a22 = z, a23 = z;
        FloatVector a30 = z, a31 = z, a32 = z, a33 = z;
        int end = vectorEnd(n);
        for (int i = 0; i < end; i += L) {
            FloatVector w0 = w(w, o0, i);
            FloatVector w1 = w(w, o1, i);
            FloatVector w2 = w(w, o2, i);
            FloatVector w3 = w(w, o3, i);
            FloatVector xv = x(x, x0 + i);
            a00 = w0.fma(xv, a00);
            a01 = w1.fma(xv, a01);
            a02 = w2.fma(xv, a02);
            a03 = w3.fma(xv, a03);
            xv = x(x, x1 + i);
            a10 = w0.fma(xv, a10);
            a11 = w1.fma(xv, a11);
            a12 = w2.fma(xv, a12);
            a13 = w3.fma(xv, a13);
            xv = x(x, x2 + i);
            a20 = w0.fma(xv, a20);
            a21 = w1.fma(xv, a21);
            a22 = w2.fma(xv, a22);
            a23 = w3.fma(xv, a23);
            xv = x(x, x3 + i);
            a30 = w0.fma(xv, a30);
            a31 = w1.fma(xv, a31);
            a32 = w2.fma(xv, a32);
            a33 = w3.fma(xv, a33);
        }
        // Reduced in a separate method through memory: kept here, the reduction's vector code
        // would push this method past C2's inlining budget, and vectors passed to a call that is
        // not inlined get boxed.
        a00.intoArray(lanes, 0);
        a01.intoArray(lanes, L);
        a02.intoArray(lanes, 2 * L);
        a03.intoArray(lanes, 3 * L);
        a10.intoArray(lanes, 4 * L);
        a11.intoArray(lanes, 5 * L);
        a12.intoArray(lanes, 6 * L);
        a13.intoArray(lanes, 7 * L);
        a20.intoArray(lanes, 8 * L);
        a21.intoArray(lanes, 9 * L);
        a22.intoArray(lanes, 10 * L);
        a23.intoArray(lanes, 11 * L);
        a30.intoArray(lanes, 12 * L);
        a31.intoArray(lanes, 13 * L);
        a32.intoArray(lanes, 14 * L);
        a33.intoArray(lanes, 15 * L);
        reduce16(lanes, 0); // lane sums of accumulator 4j+k in lanes[4j+k]: row k, vector j
        for (int j = 0; j < 4; j++) {
            for (int k = 0; k < 4; k++) {
                out[oo + j * oStride + k * oRow] = lanes[4 * j + k];
            }
        }
        if (end < n) {
            for (int j = 0; j < 4; j++) {
                for (int k = 0; k < 4; k++) {
                    out[oo + j * oStride + k * oRow] += tail(w, off + k * rowStride, end, n, x, xo + j * xStride);
                }
            }
        }
    }

    /**
     * Lane sums of 16 accumulators stored at {@code t[b + j*L ..]}, j = 0..15, by the fixed pairwise
     * tree of {@link #sumLanes}, into {@code t[b + j]}. With 16 lanes a merge network does all 16 trees
     * in 15 steps; other widths run the trees on the stored lanes.
     */
    static void reduce16(float[] t, int b) {
        if (L == 16) {
            FloatVector m0 = merge(x(t, b), x(t, b + 16), LO8, HI8), m1 = merge(x(t, b + 32), x(t, b + 48), LO8, HI8);
            FloatVector m2 = merge(x(t, b + 64), x(t, b + 80), LO8, HI8), m3 = merge(x(t, b + 96), x(t, b + 112), LO8, HI8);
            FloatVector m4 = merge(x(t, b + 128), x(t, b + 144), LO8, HI8), m5 = merge(x(t, b + 160), x(t, b + 176), LO8, HI8);
            FloatVector m6 = merge(x(t, b + 192), x(t, b + 208), LO8, HI8), m7 = merge(x(t, b + 224), x(t, b + 240), LO8, HI8);
            m0 = merge(m0, m1, LO4, HI4);
            m2 = merge(m2, m3, LO4, HI4);
            m4 = merge(m4, m5, LO4, HI4);
            m6 = merge(m6, m7, LO4, HI4);
            m0 = merge(m0, m2, LO2, HI2);
            m4 = merge(m4, m6, LO2, HI2);
            merge(m0, m4, LO1, HI1).intoArray(t, b);
            return;
        }
        for (int h = L / 2; h > 0; h /= 2) {
            for (int j = b; j < b + 16 * L; j += L) {
                for (int i = 0; i < h; i++) {
                    t[j + i] += t[j + i + h];
                }
            }
        }
        for (int j = 0; j < 16; j++) {
            t[b + j] = t[b + j * L];
        }
    }

    /**
     * One level of the lane trees of many accumulators at once. {@code x} and {@code y} each hold
     * segments of {@code 2h} partial sums (one segment per accumulator); the result holds the
     * segments of x, then those of y, each halved: {@code seg[i] + seg[i + h]} for i < h, the same
     * additions in the same operand order as one level of {@link #sumLanes} on each accumulator.
     * Two-vector selections move lanes only, so the result is exact data movement plus those adds.
     */
    private static FloatVector merge(FloatVector x, FloatVector y, FloatVector lo, FloatVector hi) {
        return lo.selectFrom(x, y).add(hi.selectFrom(x, y));
    }

    /** Lane m of merge's index vector for output segments of h lanes (indexes >= L select y). */
    private static FloatVector mergeIndex(int h, boolean high) {
        if (L != 16) {
            return null;
        }
        float[] idx = new float[L];
        for (int m = 0; m < L; m++) {
            int src = m < L / 2 ? 0 : L;
            int mm = m % (L / 2);
            idx[m] = src + (mm / h) * 2 * h + (high ? h : 0) + mm % h;
        }
        return FloatVector.fromArray(F, idx, 0);
    }

    /**
     * Left-to-right sum of the products in columns [from, n). Added to the lane sum only where
     * there is a tail (a value plus 0 would turn -0 into +0), by every kernel alike. Kept out of
     * the vector code paths so as not to add to the kernels' compiled size.
     */
    private static float tail(MemorySegment w, long off, int from, int n, float[] x, int xo) {
        float t = 0f;
        for (int i = from; i < n; i++) {
            t += w.get(Tensor.F32_LE, off + 4L * i) * x[xo + i];
        }
        return t;
    }

    /** Two accumulators, added lanewise, then the lane tree of {@link #sumLanes} and the scalar tail last. */
    @Override
    public float dot(float[] a, int ao, float[] b, int bo, int n) {
        FloatVector s = FloatVector.zero(F);
        FloatVector t = s;
        int i = 0;
        for (int end = n - 2 * L; i <= end; i += 2 * L) {
            s = x(a, ao + i).fma(x(b, bo + i), s);
            t = x(a, ao + i + L).fma(x(b, bo + i + L), t);
        }
        if (i <= n - L) {
            s = x(a, ao + i).fma(x(b, bo + i), s);
            i += L;
        }
        float tail = 0f;
        for (; i < n; i++) {
            tail += a[ao + i] * b[bo + i];
        }
        return sumLanes(s.add(t)) + tail;
    }

    /**
     * Sum of the lanes in a fixed pairwise tree: for h = L/2, L/4, .., 1: lane[i] += lane[i + h].
     * Rotations and lanewise adds only, so interpreter, C1 and C2 agree bit for bit. For the
     * single-accumulator reductions; {@link #reduce16} does the same for 16 at once.
     */
    static float sumLanes(FloatVector v) {
        if (L > 16) {
            float[] t = v.toArray(); // wider than any x86 vector: same tree, in scalar code
            for (int h = L / 2; h > 0; h /= 2) {
                for (int i = 0; i < h; i++) {
                    t[i] += t[i + h];
                }
            }
            return t[0];
        }
        if (L == 16) {
            v = v.add(v.rearrange(ROT8));
        }
        if (L >= 8) {
            v = v.add(v.rearrange(ROT4));
        }
        if (L >= 4) {
            v = v.add(v.rearrange(ROT2));
        }
        return v.add(v.rearrange(ROT1)).lane(0);
    }

    @Override
    public void decodeF16(MemorySegment src, long off, int n, MemorySegment dst, long at) {
        int i = 0;
        for (; i <= n - L; i += L) {
            // Sign-extending widening puts the fp16 sign bit at bit 31 as well.
            IntVector h = (IntVector) ShortVector.fromMemorySegment(H, src, off + 2L * i, LE)
                    .convertShape(VectorOperators.S2I, I, 0);
            IntVector magnitude = h.and(0x7fff);
            // Exponent and mantissa moved to fp32 positions, rebiased by a multiplication with
            // 2^(127-15): exact, and it also normalises fp16 subnormals.
            IntVector bits = magnitude.lanewise(VectorOperators.LSHL, 13).reinterpretAsFloats()
                    .mul(0x1p112f).reinterpretAsInts();
            // Infinity and NaN: maximal exponent; NaNs also get the quiet bit (see halfToFloat).
            VectorMask<Integer> inf = magnitude.compare(VectorOperators.EQ, 0x7c00);
            VectorMask<Integer> nan = magnitude.compare(VectorOperators.GT, 0x7c00);
            bits = bits.blend(bits.or(0x7f80_0000), inf).blend(bits.or(0x7fc0_0000), nan).or(h.and(0x8000_0000));
            bits.intoMemorySegment(dst, at + 4L * i, LE);
        }
        for (; i < n; i++) {
            dst.set(Tensor.F32_LE, at + 4L * i, Dequantizer.halfToFloat(src.get(Tensor.I16_LE, off + 2L * i)));
        }
    }

    @Override
    public void decodeQ8(MemorySegment src, long off, int n, MemorySegment dst, long at) {
        if (!Q8_VECTOR) {
            RowKernels.super.decodeQ8(src, off, n, dst, at);
            return;
        }
        for (int block = 0; block < n / 32; block++) {
            long b = off + 34L * block;
            FloatVector scale = FloatVector.broadcast(F, Dequantizer.halfToFloat(src.get(Tensor.I16_LE, b)));
            for (int j = 0; j < 32; j += L) {
                FloatVector q = (FloatVector) ByteVector.fromMemorySegment(B, src, b + 2 + j, LE)
                        .convertShape(VectorOperators.B2F, F, 0);
                // int8 * fp16 needs at most 19 significant bits: exact in fp32.
                q.mul(scale).intoMemorySegment(dst, at + 4L * (32 * block + j), LE);
            }
        }
    }

    /** Vector decoders for the block types need L bytes per load and L dividing a 16-value group. */
    private static final boolean BLOCK_VECTOR = Q8_VECTOR && L <= 16;

    /**
     * BF16, Q4_0 and the K-quants decoded L values at a time, with the operations of
     * {@link dev.pagewarden.core.model.Dequantizer} in the same order per value (a product, then a
     * difference; no fma), so the bits are the scalar decoder's.
     */
    @Override
    public void decode(DType type, MemorySegment src, long off, int n, MemorySegment dst, long at) {
        if (!BLOCK_VECTOR) {
            RowKernels.super.decode(type, src, off, n, dst, at);
            return;
        }
        // one method per type, and no vector crosses a call C2 might not inline: a vector passed
        // to or returned from a call left out of line is boxed on the heap
        switch (type) {
            case BF16 -> decodeBf16(src, off, n, dst, at);
            case Q4_0 -> decodeQ40(src, off, n, dst, at);
            case Q4_K -> decodeQ45K(false, src, off, n, dst, at);
            case Q5_K -> decodeQ45K(true, src, off, n, dst, at);
            case Q6_K -> decodeQ6K(src, off, n, dst, at);
            default -> RowKernels.super.decode(type, src, off, n, dst, at);
        }
    }

    @Override
    public boolean fusesBlocks(DType type, int n) {
        return BLOCK_VECTOR && L == 16 && switch (type) {
            case BF16 -> n % L == 0;
            case Q4_K, Q5_K, Q6_K -> n % 256 == 0;
            default -> false;
        };
    }

    /**
     * Four rows, one 256-value block of each per call (BF16: the whole rows in one call), the four
     * accumulators kept in {@code lanes} between blocks: only scalars and arrays cross the calls,
     * so a block method that C2 leaves out of line boxes nothing (see {@link #q6Pair}). Per row the
     * weights enter one fma chain in column order, as in {@link #dot4x1} on decoded rows.
     */
    @Override
    public void blocks4x1(DType type, MemorySegment w, long off, long rowStride, int n, float[] x, int xo, float[] out,
                          int oo, int oRow, float[] lanes) {
        java.util.Arrays.fill(lanes, 0, 4 * L, 0f);
        switch (type) {
            case BF16 -> bf16Rows4(w, off, rowStride, n, x, xo, lanes);
            case Q4_K -> {
                for (int blk = 0; blk < n / 256; blk++) {
                    q4kBlock4(w, off + 144L * blk, rowStride, x, xo + 256 * blk, lanes);
                }
            }
            case Q5_K -> {
                for (int blk = 0; blk < n / 256; blk++) {
                    q5kBlock4(w, off + 176L * blk, rowStride, x, xo + 256 * blk, lanes);
                }
            }
            case Q6_K -> {
                for (int blk = 0; blk < n / 256; blk++) {
                    q6kBlock4(w, off + 210L * blk, rowStride, x, xo + 256 * blk, lanes);
                }
            }
            default -> throw new IllegalArgumentException("no in-place kernel for " + type);
        }
        out[oo] = sumLanes(x(lanes, 0));
        out[oo + oRow] = sumLanes(x(lanes, L));
        out[oo + 2 * oRow] = sumLanes(x(lanes, 2 * L));
        out[oo + 3 * oRow] = sumLanes(x(lanes, 3 * L));
    }

    /** BF16 rows: a weight is its 16 bits shifted to the top of an fp32 (decodeBf16). */
    private static void bf16Rows4(MemorySegment w, long off, long rowStride, int n, float[] x, int xo, float[] acc) {
        long o1 = off + rowStride, o2 = o1 + rowStride, o3 = o2 + rowStride;
        FloatVector a0 = x(acc, 0), a1 = x(acc, L), a2 = x(acc, 2 * L), a3 = x(acc, 3 * L);
        for (int i = 0; i < n; i += L) {
            FloatVector xv = x(x, xo + i);
            a0 = bf16(w, off + 2L * i).lanewise(VectorOperators.FMA, xv, a0);
            a1 = bf16(w, o1 + 2L * i).lanewise(VectorOperators.FMA, xv, a1);
            a2 = bf16(w, o2 + 2L * i).lanewise(VectorOperators.FMA, xv, a2);
            a3 = bf16(w, o3 + 2L * i).lanewise(VectorOperators.FMA, xv, a3);
        }
        a0.intoArray(acc, 0);
        a1.intoArray(acc, L);
        a2.intoArray(acc, 2 * L);
        a3.intoArray(acc, 3 * L);
    }

    private static FloatVector bf16(MemorySegment w, long at) {
        return ((IntVector) ShortVector.fromMemorySegment(H, w, at, LE).convertShape(VectorOperators.S2I, I, 0))
                .lanewise(VectorOperators.LSHL, SIXTEEN_I).reinterpretAsFloats();
    }

    /**
     * One Q5_K block (256 values) of four rows, {@code rowStride} bytes apart from {@code b0},
     * times {@code x[xc..xc+256)}, added to the accumulators in {@code acc[0..4L)}: one call per
     * row, independent chains the core overlaps.
     */
    private static void q5kBlock4(MemorySegment w, long b0, long rowStride, float[] x, int xc, float[] acc) {
        long b = b0;
        for (int k = 0; k < 4; k++, b += rowStride) {
            q5kRow(w, b, x, xc, acc, k * L);
        }
    }

    /**
     * Q4_K, four rows side by side (four independent fma chains, one per row). A 4-bit weight
     * {@code q} of a sub-block can take only 16 values, {@code q * scale - min}: they are computed
     * once per sub-block (the products and differences of the decoder, so the same bits) into one
     * vector, and each nibble picks its weight from it with a lane permute instead of a conversion,
     * a multiplication and a subtraction. The 32 bytes of a group hold two sub-blocks (low and
     * high nibbles) and are loaded once. The Vector API is called directly, not through helpers
     * of this class: C2 always inlines its force-inline methods, but stops inlining ordinary ones
     * once a method is this large, and a vector returned by a call left out of line is boxed.
     * Every operation is {@code lanewise} with vector operands (constants, broadcasts of the
     * species), called from here: the shorthands ({@code mul}, {@code sub}, {@code fma},
     * {@code and}, scalar operands) dispatch inside the Vector API on the vector's class, with a
     * call-site profile shared by all callers; once other code (the 256-bit {@link #exp}) has run
     * there, C2 compiling in the background no longer knows the class and falls back to the Java
     * implementation (a 1B-shape model decoded up to six times slower).
     */
    private static void q4kBlock4(MemorySegment w, long b0, long rowStride, float[] x, int xc, float[] acc) {
        long b1 = b0 + rowStride, b2 = b1 + rowStride, b3 = b2 + rowStride;
        float[] sm = acc; // from lane 64, per row: the eight sub-block scales, then the eight mins
        kScales(w, b0, sm, 64);
        kScales(w, b1, sm, 80);
        kScales(w, b2, sm, 96);
        kScales(w, b3, sm, 112);
        FloatVector iota = IOTA_F;
        IntVector nib = NIBBLE, four = FOUR_I;
        FloatVector a0 = FloatVector.fromArray(F, acc, 0), a1 = FloatVector.fromArray(F, acc, L);
        FloatVector a2 = FloatVector.fromArray(F, acc, 2 * L), a3 = FloatVector.fromArray(F, acc, 3 * L);
        for (int g = 0; g < 4; g++) {
            long q = 16 + 32L * g;
            int xg = xc + 64 * g;
            FloatVector x0 = FloatVector.fromArray(F, x, xg), x1 = FloatVector.fromArray(F, x, xg + 16);
            FloatVector x2 = FloatVector.fromArray(F, x, xg + 32), x3 = FloatVector.fromArray(F, x, xg + 48);
            IntVector v0, v1, lo, hi;
            v0 = (IntVector) ByteVector.fromMemorySegment(B, w, b0 + q, LE).convertShape(VectorOperators.B2I, I, 0);
            v1 = (IntVector) ByteVector.fromMemorySegment(B, w, b0 + q + 16, LE).convertShape(VectorOperators.B2I, I, 0);
            lo = iota.lanewise(VectorOperators.MUL, FloatVector.broadcast(F, sm[64 + 2 * g]))
                    .lanewise(VectorOperators.SUB, FloatVector.broadcast(F, sm[72 + 2 * g])).reinterpretAsInts();
            hi = iota.lanewise(VectorOperators.MUL, FloatVector.broadcast(F, sm[65 + 2 * g]))
                    .lanewise(VectorOperators.SUB, FloatVector.broadcast(F, sm[73 + 2 * g])).reinterpretAsInts();
            a0 = v0.lanewise(VectorOperators.AND, nib).selectFrom(lo).reinterpretAsFloats().lanewise(VectorOperators.FMA, x0, a0);
            a0 = v1.lanewise(VectorOperators.AND, nib).selectFrom(lo).reinterpretAsFloats().lanewise(VectorOperators.FMA, x1, a0);
            a0 = v0.lanewise(VectorOperators.LSHR, four).lanewise(VectorOperators.AND, nib).selectFrom(hi).reinterpretAsFloats()
                    .lanewise(VectorOperators.FMA, x2, a0);
            a0 = v1.lanewise(VectorOperators.LSHR, four).lanewise(VectorOperators.AND, nib).selectFrom(hi).reinterpretAsFloats()
                    .lanewise(VectorOperators.FMA, x3, a0);
            v0 = (IntVector) ByteVector.fromMemorySegment(B, w, b1 + q, LE).convertShape(VectorOperators.B2I, I, 0);
            v1 = (IntVector) ByteVector.fromMemorySegment(B, w, b1 + q + 16, LE).convertShape(VectorOperators.B2I, I, 0);
            lo = iota.lanewise(VectorOperators.MUL, FloatVector.broadcast(F, sm[80 + 2 * g]))
                    .lanewise(VectorOperators.SUB, FloatVector.broadcast(F, sm[88 + 2 * g])).reinterpretAsInts();
            hi = iota.lanewise(VectorOperators.MUL, FloatVector.broadcast(F, sm[81 + 2 * g]))
                    .lanewise(VectorOperators.SUB, FloatVector.broadcast(F, sm[89 + 2 * g])).reinterpretAsInts();
            a1 = v0.lanewise(VectorOperators.AND, nib).selectFrom(lo).reinterpretAsFloats().lanewise(VectorOperators.FMA, x0, a1);
            a1 = v1.lanewise(VectorOperators.AND, nib).selectFrom(lo).reinterpretAsFloats().lanewise(VectorOperators.FMA, x1, a1);
            a1 = v0.lanewise(VectorOperators.LSHR, four).lanewise(VectorOperators.AND, nib).selectFrom(hi).reinterpretAsFloats()
                    .lanewise(VectorOperators.FMA, x2, a1);
            a1 = v1.lanewise(VectorOperators.LSHR, four).lanewise(VectorOperators.AND, nib).selectFrom(hi).reinterpretAsFloats()
                    .lanewise(VectorOperators.FMA, x3, a1);
            v0 = (IntVector) ByteVector.fromMemorySegment(B, w, b2 + q, LE).convertShape(VectorOperators.B2I, I, 0);
            v1 = (IntVector) ByteVector.fromMemorySegment(B, w, b2 + q + 16, LE).convertShape(VectorOperators.B2I, I, 0);
            lo = iota.lanewise(VectorOperators.MUL, FloatVector.broadcast(F, sm[96 + 2 * g]))
                    .lanewise(VectorOperators.SUB, FloatVector.broadcast(F, sm[104 + 2 * g])).reinterpretAsInts();
            hi = iota.lanewise(VectorOperators.MUL, FloatVector.broadcast(F, sm[97 + 2 * g]))
                    .lanewise(VectorOperators.SUB, FloatVector.broadcast(F, sm[105 + 2 * g])).reinterpretAsInts();
            a2 = v0.lanewise(VectorOperators.AND, nib).selectFrom(lo).reinterpretAsFloats().lanewise(VectorOperators.FMA, x0, a2);
            a2 = v1.lanewise(VectorOperators.AND, nib).selectFrom(lo).reinterpretAsFloats().lanewise(VectorOperators.FMA, x1, a2);
            a2 = v0.lanewise(VectorOperators.LSHR, four).lanewise(VectorOperators.AND, nib).selectFrom(hi).reinterpretAsFloats()
                    .lanewise(VectorOperators.FMA, x2, a2);
            a2 = v1.lanewise(VectorOperators.LSHR, four).lanewise(VectorOperators.AND, nib).selectFrom(hi).reinterpretAsFloats()
                    .lanewise(VectorOperators.FMA, x3, a2);
            v0 = (IntVector) ByteVector.fromMemorySegment(B, w, b3 + q, LE).convertShape(VectorOperators.B2I, I, 0);
            v1 = (IntVector) ByteVector.fromMemorySegment(B, w, b3 + q + 16, LE).convertShape(VectorOperators.B2I, I, 0);
            lo = iota.lanewise(VectorOperators.MUL, FloatVector.broadcast(F, sm[112 + 2 * g]))
                    .lanewise(VectorOperators.SUB, FloatVector.broadcast(F, sm[120 + 2 * g])).reinterpretAsInts();
            hi = iota.lanewise(VectorOperators.MUL, FloatVector.broadcast(F, sm[113 + 2 * g]))
                    .lanewise(VectorOperators.SUB, FloatVector.broadcast(F, sm[121 + 2 * g])).reinterpretAsInts();
            a3 = v0.lanewise(VectorOperators.AND, nib).selectFrom(lo).reinterpretAsFloats().lanewise(VectorOperators.FMA, x0, a3);
            a3 = v1.lanewise(VectorOperators.AND, nib).selectFrom(lo).reinterpretAsFloats().lanewise(VectorOperators.FMA, x1, a3);
            a3 = v0.lanewise(VectorOperators.LSHR, four).lanewise(VectorOperators.AND, nib).selectFrom(hi).reinterpretAsFloats()
                    .lanewise(VectorOperators.FMA, x2, a3);
            a3 = v1.lanewise(VectorOperators.LSHR, four).lanewise(VectorOperators.AND, nib).selectFrom(hi).reinterpretAsFloats()
                    .lanewise(VectorOperators.FMA, x3, a3);
        }
        a0.intoArray(acc, 0);
        a1.intoArray(acc, L);
        a2.intoArray(acc, 2 * L);
        a3.intoArray(acc, 3 * L);
    }

    /**
     * The eight sub-block scales {@code d * sc} and mins {@code dmin * m} of the Q4_K / Q5_K
     * block at {@code b} into {@code out[o..o+16)}: the 6-bit fields unpacked eight at a time
     * with word masks, then converted and multiplied in one vector (the decoder's products).
     */
    private static void kScales(MemorySegment w, long b, float[] out, int o) {
        long u01 = w.get(I64_LE, b + 4);
        long u0 = u01 & 0xffff_ffffL, u1 = u01 >>> 32, u2 = w.get(I32_LE, b + 12) & 0xffff_ffffL;
        // bytes 0-3 hold the low 6 bits of scales 0-3, bytes 4-7 those of mins 0-3, bytes 8-11 the
        // low 4 bits of scales 4-7 (low nibbles) and mins 4-7 (high nibbles), whose top two bits
        // are the top bits of bytes 0-3 (scales) and 4-7 (mins)
        long scales = u0 & 0x3f3f_3f3fL | (u2 & 0x0f0f_0f0fL | (u0 >>> 6 & 0x0303_0303L) << 4) << 32;
        long mins = u1 & 0x3f3f_3f3fL | (u2 >>> 4 & 0x0f0f_0f0fL | (u1 >>> 6 & 0x0303_0303L) << 4) << 32;
        FloatVector dd = FloatVector.broadcast(F, half(w, b)).blend(FloatVector.broadcast(F, half(w, b + 2)), HIGH8);
        ((FloatVector) LongVector.zero(L128).withLane(0, scales).withLane(1, mins).reinterpretAsBytes()
                .convertShape(VectorOperators.B2F, F, 0)).lanewise(VectorOperators.MUL, dd).intoArray(out, o);
    }

    private static final VectorSpecies<Long> L128 = LongVector.SPECIES_128;
    private static final VectorMask<Float> HIGH8 = L == 16 ? VectorMask.fromLong(F, 0xff00L) : null;
    private static final FloatVector IOTA_F = L == 16
            ? (FloatVector) IntVector.zero(I).addIndex(1).convertShape(VectorOperators.I2F, F, 0) : null;

    // vector operands of the in-place kernels (see q4kBlock4); null where the kernels are not used
    private static final IntVector ZERO_I = L == 16 ? IntVector.broadcast(I, 0) : null;
    private static final IntVector ONE_I = L == 16 ? IntVector.broadcast(I, 1) : null;
    private static final IntVector FOUR_I = L == 16 ? IntVector.broadcast(I, 4) : null;
    private static final IntVector SIXTEEN_I = L == 16 ? IntVector.broadcast(I, 16) : null;
    private static final IntVector THIRTY_TWO_I = L == 16 ? IntVector.broadcast(I, 32) : null;
    private static final IntVector NIBBLE = L == 16 ? IntVector.broadcast(I, 0xf) : null;
    private static final IntVector TWO_BITS = L == 16 ? IntVector.broadcast(I, 3) : null;

    /**
     * Scale (low byte) and min (high byte) of sub-block {@code s} of a Q4_K / Q5_K block, from its
     * 12 scale bytes read as {@code lo} (bytes 0..7) and {@code hi} (bytes 8..11): the bits of
     * {@link Dequantizer#scaleK4} and {@link Dequantizer#minK4}.
     */
    private static int scaleMin(long lo, int hi, int s) {
        if (s < 4) {
            return (int) (lo >>> (8 * s)) & 63 | ((int) (lo >>> (8 * s + 32)) & 63) << 8;
        }
        int q = hi >>> (8 * (s - 4)); // byte s + 4
        int sc = q & 0xf | ((int) (lo >>> (8 * (s - 4) + 6)) & 3) << 4; // top bits of byte s - 4
        int m = (q >>> 4) & 0xf | ((int) (lo >>> (8 * s + 6)) & 3) << 4; // top bits of byte s
        return sc | m << 8;
    }

    /**
     * A Q5_K row block: sub-block s (values 32s..) is the low (even s) or high nibbles of the 32
     * bytes of group s/2, with bit s of the 32 bytes at 16.. as the fifth bit. The scales are read
     * once per block; one call per sub-block keeps each method within C2's inlining budget (see
     * {@link #q4kBlock4}).
     */
    private static void q5kRow(MemorySegment w, long b, float[] x, int xc, float[] acc, int a) {
        float d = half(w, b), dmin = half(w, b + 2);
        long lo = w.get(I64_LE, b + 4);
        int hi = w.get(I32_LE, b + 12);
        for (int s = 0; s < 8; s++) {
            int sm = scaleMin(lo, hi, s);
            q5Sub(w, b + 48 + 32L * (s / 2), b + 16, s, d * (sm & 0xff), dmin * (sm >>> 8), x, xc + 32 * s, acc, a);
        }
    }

    /** 32 Q5_K weights {@code sc * q - m} of sub-block {@code s}, onto acc[a..a+L): nibbles of the bytes at {@code q}, bit s of those at {@code h} on top. */
    private static void q5Sub(MemorySegment w, long q, long h, int s, float sc, float m, float[] x, int xi, float[] acc,
                              int a) {
        IntVector shift = (s & 1) == 0 ? ZERO_I : FOUR_I, bit = IntVector.broadcast(I, s); // see q6kHalf
        FloatVector scale = FloatVector.broadcast(F, sc), min = FloatVector.broadcast(F, m);
        IntVector v0 = bytes(w, q).lanewise(VectorOperators.LSHR, shift).lanewise(VectorOperators.AND, NIBBLE)
                .lanewise(VectorOperators.OR, bytes(w, h).lanewise(VectorOperators.LSHR, bit).lanewise(VectorOperators.AND, ONE_I).lanewise(VectorOperators.LSHL, FOUR_I));
        IntVector v1 = bytes(w, q + 16).lanewise(VectorOperators.LSHR, shift).lanewise(VectorOperators.AND, NIBBLE)
                .lanewise(VectorOperators.OR, bytes(w, h + 16).lanewise(VectorOperators.LSHR, bit).lanewise(VectorOperators.AND, ONE_I).lanewise(VectorOperators.LSHL, FOUR_I));
        FloatVector t = toFloats(v0).lanewise(VectorOperators.MUL, scale).lanewise(VectorOperators.SUB, min).lanewise(VectorOperators.FMA, x(x, xi), x(acc, a));
        toFloats(v1).lanewise(VectorOperators.MUL, scale).lanewise(VectorOperators.SUB, min).lanewise(VectorOperators.FMA, x(x, xi + 16), t).intoArray(acc, a);
    }

    /** 16 bytes at {@code at}, sign-extended to ints. */
    private static IntVector bytes(MemorySegment w, long at) {
        return (IntVector) ByteVector.fromMemorySegment(B, w, at, LE).convertShape(VectorOperators.B2I, I, 0);
    }

    /**
     * One Q6_K block of four rows, as {@link #q4kBlock4} (the decoder's operations per value, in
     * column order). Half hf (values 128hf..) has its low bits at {@code 64hf}, its high bits at
     * {@code 128 + 32hf} and eight int8 scales at {@code 192 + 8hf}; quarter j of a half (32
     * values) takes the low (j < 2) or high nibbles of the bytes at {@code 32*(j&1)}, bits 2j and
     * 2j+1 of the high bytes, and scales 2j (first 16 values) and 2j+1. Each byte is loaded once
     * per half for all four quarters.
     */
    private static void q6kBlock4(MemorySegment w, long b0, long rowStride, float[] x, int xc, float[] acc) {
        float[] sm = acc; // from lane 64, per row: the sixteen sub-block scales d * sc
        long b1 = b0 + rowStride, b2 = b1 + rowStride, b3 = b2 + rowStride;
        q6Scales(w, b0, sm, 64);
        q6Scales(w, b1, sm, 80);
        q6Scales(w, b2, sm, 96);
        q6Scales(w, b3, sm, 112);
        // one row and one half per call: C2 inlines the Vector API calls of a larger method only
        // until its node budget runs out, and leaves the rest (bounds checks, fma) as slow calls
        for (int hf = 0; hf < 2; hf++) {
            q6kHalf(w, b0, hf, x, xc, acc, 0, 64);
            q6kHalf(w, b1, hf, x, xc, acc, L, 80);
            q6kHalf(w, b2, hf, x, xc, acc, 2 * L, 96);
            q6kHalf(w, b3, hf, x, xc, acc, 3 * L, 112);
        }
    }

    /**
     * Half {@code hf} of the Q6_K block at {@code b} (see {@link #q6kBlock4}), onto the accumulator
     * at {@code acc[a..a+L)}, its scales at {@code acc[so..so+16)}.
     */
    private static void q6kHalf(MemorySegment w, long b, int hf, float[] x, int xc, float[] acc, int a, int so) {
        float[] sm = acc;
        IntVector nib = NIBBLE, two = TWO_BITS, four = FOUR_I, minus = THIRTY_TWO_I;
        // broadcasts of the species, not elements of an array: C2 knows a constant's or a
        // broadcast's class, but takes an array element's from the shared profile of the Vector API
        // call that masks shift counts, and leaves that call out of line once another shape has run there
        IntVector s2 = IntVector.broadcast(I, 2), s4 = IntVector.broadcast(I, 4), s6 = IntVector.broadcast(I, 6);
        FloatVector acc0 = FloatVector.fromArray(F, acc, a);
        long ql = 64L * hf, qh = 128 + 32L * hf;
        int xh = xc + 128 * hf, s = 8 * hf;
        FloatVector x0 = FloatVector.fromArray(F, x, xh), x1 = FloatVector.fromArray(F, x, xh + 16);
        FloatVector x2 = FloatVector.fromArray(F, x, xh + 32), x3 = FloatVector.fromArray(F, x, xh + 48);
        FloatVector x4 = FloatVector.fromArray(F, x, xh + 64), x5 = FloatVector.fromArray(F, x, xh + 80);
        FloatVector x6 = FloatVector.fromArray(F, x, xh + 96), x7 = FloatVector.fromArray(F, x, xh + 112);
        IntVector l0, l1, l2, l3, h0, h1;
        l0 = (IntVector) ByteVector.fromMemorySegment(B, w, b + ql, LE).convertShape(VectorOperators.B2I, I, 0);
        l1 = (IntVector) ByteVector.fromMemorySegment(B, w, b + ql + 16, LE).convertShape(VectorOperators.B2I, I, 0);
        l2 = (IntVector) ByteVector.fromMemorySegment(B, w, b + ql + 32, LE).convertShape(VectorOperators.B2I, I, 0);
        l3 = (IntVector) ByteVector.fromMemorySegment(B, w, b + ql + 48, LE).convertShape(VectorOperators.B2I, I, 0);
        h0 = (IntVector) ByteVector.fromMemorySegment(B, w, b + qh, LE).convertShape(VectorOperators.B2I, I, 0);
        h1 = (IntVector) ByteVector.fromMemorySegment(B, w, b + qh + 16, LE).convertShape(VectorOperators.B2I, I, 0);
        acc0 = ((FloatVector) l0.lanewise(VectorOperators.AND, nib).lanewise(VectorOperators.OR, h0.lanewise(VectorOperators.AND, two).lanewise(VectorOperators.LSHL, four))
                .lanewise(VectorOperators.SUB, minus).convertShape(VectorOperators.I2F, F, 0))
                .lanewise(VectorOperators.MUL, FloatVector.broadcast(F, sm[so + s])).lanewise(VectorOperators.FMA, x0, acc0);
        acc0 = ((FloatVector) l1.lanewise(VectorOperators.AND, nib).lanewise(VectorOperators.OR, h1.lanewise(VectorOperators.AND, two).lanewise(VectorOperators.LSHL, four))
                .lanewise(VectorOperators.SUB, minus).convertShape(VectorOperators.I2F, F, 0))
                .lanewise(VectorOperators.MUL, FloatVector.broadcast(F, sm[so + 1 + s])).lanewise(VectorOperators.FMA, x1, acc0);
        acc0 = ((FloatVector) l2.lanewise(VectorOperators.AND, nib).lanewise(VectorOperators.OR, h0.lanewise(VectorOperators.LSHR, s2).lanewise(VectorOperators.AND, two).lanewise(VectorOperators.LSHL, four))
                .lanewise(VectorOperators.SUB, minus).convertShape(VectorOperators.I2F, F, 0))
                .lanewise(VectorOperators.MUL, FloatVector.broadcast(F, sm[so + 2 + s])).lanewise(VectorOperators.FMA, x2, acc0);
        acc0 = ((FloatVector) l3.lanewise(VectorOperators.AND, nib).lanewise(VectorOperators.OR, h1.lanewise(VectorOperators.LSHR, s2).lanewise(VectorOperators.AND, two).lanewise(VectorOperators.LSHL, four))
                .lanewise(VectorOperators.SUB, minus).convertShape(VectorOperators.I2F, F, 0))
                .lanewise(VectorOperators.MUL, FloatVector.broadcast(F, sm[so + 3 + s])).lanewise(VectorOperators.FMA, x3, acc0);
        acc0 = ((FloatVector) l0.lanewise(VectorOperators.LSHR, four).lanewise(VectorOperators.AND, nib).lanewise(VectorOperators.OR, h0.lanewise(VectorOperators.LSHR, s4).lanewise(VectorOperators.AND, two).lanewise(VectorOperators.LSHL, four))
                .lanewise(VectorOperators.SUB, minus).convertShape(VectorOperators.I2F, F, 0))
                .lanewise(VectorOperators.MUL, FloatVector.broadcast(F, sm[so + 4 + s])).lanewise(VectorOperators.FMA, x4, acc0);
        acc0 = ((FloatVector) l1.lanewise(VectorOperators.LSHR, four).lanewise(VectorOperators.AND, nib).lanewise(VectorOperators.OR, h1.lanewise(VectorOperators.LSHR, s4).lanewise(VectorOperators.AND, two).lanewise(VectorOperators.LSHL, four))
                .lanewise(VectorOperators.SUB, minus).convertShape(VectorOperators.I2F, F, 0))
                .lanewise(VectorOperators.MUL, FloatVector.broadcast(F, sm[so + 5 + s])).lanewise(VectorOperators.FMA, x5, acc0);
        acc0 = ((FloatVector) l2.lanewise(VectorOperators.LSHR, four).lanewise(VectorOperators.AND, nib).lanewise(VectorOperators.OR, h0.lanewise(VectorOperators.LSHR, s6).lanewise(VectorOperators.AND, two).lanewise(VectorOperators.LSHL, four))
                .lanewise(VectorOperators.SUB, minus).convertShape(VectorOperators.I2F, F, 0))
                .lanewise(VectorOperators.MUL, FloatVector.broadcast(F, sm[so + 6 + s])).lanewise(VectorOperators.FMA, x6, acc0);
        acc0 = ((FloatVector) l3.lanewise(VectorOperators.LSHR, four).lanewise(VectorOperators.AND, nib).lanewise(VectorOperators.OR, h1.lanewise(VectorOperators.LSHR, s6).lanewise(VectorOperators.AND, two).lanewise(VectorOperators.LSHL, four))
                .lanewise(VectorOperators.SUB, minus).convertShape(VectorOperators.I2F, F, 0))
                .lanewise(VectorOperators.MUL, FloatVector.broadcast(F, sm[so + 7 + s])).lanewise(VectorOperators.FMA, x7, acc0);
        acc0.intoArray(acc, a);
    }

    /** The sixteen sub-block scales {@code d * sc} of the Q6_K block at {@code b} into {@code out[o..o+16)}. */
    private static void q6Scales(MemorySegment w, long b, float[] out, int o) {
        ((FloatVector) ByteVector.fromMemorySegment(B, w, b + 192, LE).convertShape(VectorOperators.B2F, F, 0))
                .lanewise(VectorOperators.MUL, FloatVector.broadcast(F, half(w, b + 208))).intoArray(out, o);
    }

    private static final ValueLayout.OfLong I64_LE = ValueLayout.JAVA_LONG_UNALIGNED.withOrder(LE);
    private static final ValueLayout.OfInt I32_LE = ValueLayout.JAVA_INT_UNALIGNED.withOrder(LE);

    private static float half(MemorySegment w, long at) {
        return Dequantizer.halfToFloat(w.get(Tensor.I16_LE, at));
    }

    private void decodeBf16(MemorySegment src, long off, int n, MemorySegment dst, long at) {
        int i = 0;
        for (; i <= n - L; i += L) {
            ((IntVector) ShortVector.fromMemorySegment(H, src, off + 2L * i, LE).convertShape(VectorOperators.S2I, I, 0))
                    .lanewise(VectorOperators.LSHL, 16).reinterpretAsFloats().intoMemorySegment(dst, at + 4L * i, LE);
        }
        if (i < n) {
            RowKernels.super.decode(DType.BF16, src, off + 2L * i, n - i, dst, at + 4L * i);
        }
    }

    private static void decodeQ40(MemorySegment src, long off, int n, MemorySegment dst, long at) {
        for (int blk = 0; blk < n / 32; blk++) {
            long b = off + 18L * blk;
            long o = at + 4L * 32 * blk;
            float d = Dequantizer.halfToFloat(src.get(Tensor.I16_LE, b));
            for (int j = 0; j < 16; j += L) {
                IntVector q = ((IntVector) ByteVector.fromMemorySegment(B, src, b + 2 + j, LE)
                        .convertShape(VectorOperators.B2I, I, 0)).and(0xff);
                toFloats(q.and(0xf).sub(8)).mul(d).intoMemorySegment(dst, o + 4L * j, LE);
                toFloats(q.lanewise(VectorOperators.LSHR, 4).sub(8)).mul(d).intoMemorySegment(dst, o + 4L * (16 + j), LE);
            }
        }
    }

    private static void decodeQ45K(boolean five, MemorySegment src, long off, int n, MemorySegment dst, long at) {
        long bb = five ? 176 : 144;
        for (int blk = 0; blk < n / 256; blk++) {
            long b = off + bb * blk;
            long o = at + 4L * 256 * blk;
            float d = Dequantizer.halfToFloat(src.get(Tensor.I16_LE, b));
            float dmin = Dequantizer.halfToFloat(src.get(Tensor.I16_LE, b + 2));
            long qs = b + (five ? 48 : 16);
            for (int g = 0; g < 4; g++) {
                float d1 = d * Dequantizer.scaleK4(src, b + 4, 2 * g), m1 = dmin * Dequantizer.minK4(src, b + 4, 2 * g);
                float d2 = d * Dequantizer.scaleK4(src, b + 4, 2 * g + 1), m2 = dmin * Dequantizer.minK4(src, b + 4, 2 * g + 1);
                for (int l = 0; l < 32; l += L) {
                    k45Pair(src, qs + 32L * g + l, five ? b + 16 + l : -1, 2 * g, d1, m1, d2, m2, dst,
                            o + 4L * (64 * g + l), o + 4L * (64 * g + 32 + l));
                }
            }
        }
    }

    /**
     * L values from the low nibbles of {@code qs[..]} (sub-block scale d1, min m1) and L from the
     * high nibbles (d2, m2); for Q5_K ({@code qh >= 0}) their fifth bits are bits {@code bit} and
     * {@code bit + 1} of {@code qh[..]}. Only scalars cross the call (see {@link #q6Pair}).
     */
    private static void k45Pair(MemorySegment src, long qs, long qh, int bit, float d1, float m1, float d2, float m2,
                                MemorySegment dst, long oLow, long oHigh) {
        IntVector q = ((IntVector) ByteVector.fromMemorySegment(B, src, qs, LE).convertShape(VectorOperators.B2I, I, 0)).and(0xff);
        IntVector lo = q.and(0xf);
        IntVector hi = q.lanewise(VectorOperators.LSHR, 4);
        if (qh >= 0) {
            IntVector h = ((IntVector) ByteVector.fromMemorySegment(B, src, qh, LE).convertShape(VectorOperators.B2I, I, 0)).and(0xff);
            lo = lo.or(h.lanewise(VectorOperators.LSHR, bit).and(1).lanewise(VectorOperators.LSHL, 4));
            hi = hi.or(h.lanewise(VectorOperators.LSHR, bit + 1).and(1).lanewise(VectorOperators.LSHL, 4));
        }
        ((FloatVector) lo.convertShape(VectorOperators.I2F, F, 0)).mul(d1).sub(m1).intoMemorySegment(dst, oLow, LE);
        ((FloatVector) hi.convertShape(VectorOperators.I2F, F, 0)).mul(d2).sub(m2).intoMemorySegment(dst, oHigh, LE);
    }

    private static void decodeQ6K(MemorySegment src, long off, int n, MemorySegment dst, long at) {
        for (int blk = 0; blk < n / 256; blk++) {
            long b = off + 210L * blk;
            long o = at + 4L * 256 * blk;
            float d = Dequantizer.halfToFloat(src.get(Tensor.I16_LE, b + 208));
            for (int half = 0; half < 2; half++) {
                long ql = b + 64L * half, qh = b + 128 + 32L * half, sc = b + 192 + 8L * half;
                long oh = o + 4L * 128 * half;
                for (int l = 0; l < 32; l += L) {
                    int is = l / 16;
                    // values l and l + 64 share the low-bit bytes ql[l..], values l + 32 and l + 96 ql[32 + l..]
                    q6Pair(src, ql + l, qh + l, 0, d * src.get(ValueLayout.JAVA_BYTE, sc + is),
                            d * src.get(ValueLayout.JAVA_BYTE, sc + is + 4), dst, oh + 4L * l, oh + 4L * (l + 64));
                    q6Pair(src, ql + 32 + l, qh + l, 2, d * src.get(ValueLayout.JAVA_BYTE, sc + is + 2),
                            d * src.get(ValueLayout.JAVA_BYTE, sc + is + 6), dst, oh + 4L * (l + 32), oh + 4L * (l + 96));
                }
            }
        }
    }

    /**
     * L values from the low nibbles of {@code ql[..]} and L from the high nibbles, their high bits
     * at {@code shift} and {@code shift + 4} of {@code qh[..]}, times their sub-block scales. Only
     * scalars cross the call: with all four quarters in one method C2 stopped inlining at its node
     * limit and boxed the vectors of the calls it left (Q6_K decoded at a quarter of Q4_K's speed).
     */
    private static void q6Pair(MemorySegment src, long ql, long qh, int shift, float sLow, float sHigh, MemorySegment dst,
                               long oLow, long oHigh) {
        IntVector a = ((IntVector) ByteVector.fromMemorySegment(B, src, ql, LE).convertShape(VectorOperators.B2I, I, 0)).and(0xff);
        IntVector h = ((IntVector) ByteVector.fromMemorySegment(B, src, qh, LE).convertShape(VectorOperators.B2I, I, 0)).and(0xff);
        IntVector lo = a.and(0xf).or(h.lanewise(VectorOperators.LSHR, shift).and(3).lanewise(VectorOperators.LSHL, 4)).sub(32);
        IntVector hi = a.lanewise(VectorOperators.LSHR, 4).or(h.lanewise(VectorOperators.LSHR, shift + 4).and(3)
                .lanewise(VectorOperators.LSHL, 4)).sub(32);
        ((FloatVector) lo.convertShape(VectorOperators.I2F, F, 0)).mul(sLow).intoMemorySegment(dst, oLow, LE);
        ((FloatVector) hi.convertShape(VectorOperators.I2F, F, 0)).mul(sHigh).intoMemorySegment(dst, oHigh, LE);
    }

    private static FloatVector toFloats(IntVector v) {
        return (FloatVector) v.convertShape(VectorOperators.I2F, F, 0);
    }

    @Override
    public void axpy(float[] acc, int ao, float scale, MemorySegment v, long off, int n) {
        int end = vectorEnd(n);
        for (int i = 0; i < end; i += L) {
            w(v, off, i).mul(scale).add(x(acc, ao + i)).intoArray(acc, ao + i);
        }
        for (int i = end; i < n; i++) {
            acc[ao + i] += scale * v.get(Tensor.F32_LE, off + 4L * i);
        }
    }

    @Override
    public void axpyRows(float[] acc, int ao, float[] scales, int so, MemorySegment v, long off, long rowStride,
                         int count, int n) {
        // Row by row, four vectors of the output kept in registers: each row's values are read in
        // address order (one ascending sweep over the head's run of V), and every
        // output element still gets a multiply, then an add, per row in row order - the bits of
        // count calls of axpy.
        int end = vectorEnd(n);
        int i = 0;
        for (; i + 4 * L <= end; i += 4 * L) {
            FloatVector a0 = x(acc, ao + i), a1 = x(acc, ao + i + L), a2 = x(acc, ao + i + 2 * L), a3 = x(acc, ao + i + 3 * L);
            long at = off;
            for (int j = 0; j < count; j++, at += rowStride) {
                float s = scales[so + j];
                a0 = w(v, at, i).mul(s).add(a0);
                a1 = w(v, at, i + L).mul(s).add(a1);
                a2 = w(v, at, i + 2 * L).mul(s).add(a2);
                a3 = w(v, at, i + 3 * L).mul(s).add(a3);
            }
            a0.intoArray(acc, ao + i);
            a1.intoArray(acc, ao + i + L);
            a2.intoArray(acc, ao + i + 2 * L);
            a3.intoArray(acc, ao + i + 3 * L);
        }
        for (; i < end; i += L) {
            FloatVector a = x(acc, ao + i);
            long at = off;
            for (int j = 0; j < count; j++, at += rowStride) {
                a = w(v, at, i).mul(scales[so + j]).add(a);
            }
            a.intoArray(acc, ao + i);
        }
        for (i = end; i < n; i++) {
            float a = acc[ao + i];
            for (int j = 0; j < count; j++) {
                a += scales[so + j] * v.get(Tensor.F32_LE, off + j * rowStride + 4L * i);
            }
            acc[ao + i] = a;
        }
    }

    @Override
    public void panelScores(MemorySegment k, long off, int slots, int count, int n, float[] x, int xo, float[] out,
                            int oo) {
        for (int j = 0; j < count; j += L) {
            VectorMask<Float> m = F.indexInRange(j, count); // masked loads: slots >= count are not read
            long at = off + 4L * j;
            FloatVector acc = FloatVector.zero(F);
            for (int e = 0; e < n; e++) {
                acc = FloatVector.fromMemorySegment(F, k, at + 4L * e * slots, LE, m).fma(FloatVector.broadcast(F, x[xo + e]), acc);
            }
            acc.intoArray(out, oo + j, m);
        }
    }

    @Override
    public void panelScoresN(MemorySegment k, long[] offs, int from, int runs, int slots, int n, float[] x, int[] xos,
                             float[] out, int[] outs) {
        if (slots % L != 0 || runs < 1 || runs > SCORE_RUNS) {
            RowKernels.super.panelScoresN(k, offs, from, runs, slots, n, x, xos, out, outs);
            return;
        }
        // eight chains side by side, one per panel (fewer panels repeat the last one: the same
        // values computed and stored twice): each step loads one line of every panel, and the
        // loads do not wait for the fmas, so eight sequential streams stay in flight
        int last = from + runs - 1;
        int i0 = from, i1 = Math.min(from + 1, last), i2 = Math.min(from + 2, last), i3 = Math.min(from + 3, last);
        int i4 = Math.min(from + 4, last), i5 = Math.min(from + 5, last), i6 = Math.min(from + 6, last), i7 = last;
        int x0 = xos[i0], x1 = xos[i1], x2 = xos[i2], x3 = xos[i3], x4 = xos[i4], x5 = xos[i5], x6 = xos[i6], x7 = xos[i7];
        long stride = 4L * slots;
        for (int j = 0; j < slots; j += L) {
            long a0 = offs[i0] + 4L * j, a1 = offs[i1] + 4L * j, a2 = offs[i2] + 4L * j, a3 = offs[i3] + 4L * j;
            long a4 = offs[i4] + 4L * j, a5 = offs[i5] + 4L * j, a6 = offs[i6] + 4L * j, a7 = offs[i7] + 4L * j;
            FloatVector s0 = FloatVector.zero(F), s1 = s0, s2 = s0, s3 = s0, s4 = s0, s5 = s0, s6 = s0, s7 = s0;
            for (int e = 0; e < n; e++) {
                long d = e * stride;
                s0 = w(k, a0 + d, 0).fma(FloatVector.broadcast(F, x[x0 + e]), s0);
                s1 = w(k, a1 + d, 0).fma(FloatVector.broadcast(F, x[x1 + e]), s1);
                s2 = w(k, a2 + d, 0).fma(FloatVector.broadcast(F, x[x2 + e]), s2);
                s3 = w(k, a3 + d, 0).fma(FloatVector.broadcast(F, x[x3 + e]), s3);
                s4 = w(k, a4 + d, 0).fma(FloatVector.broadcast(F, x[x4 + e]), s4);
                s5 = w(k, a5 + d, 0).fma(FloatVector.broadcast(F, x[x5 + e]), s5);
                s6 = w(k, a6 + d, 0).fma(FloatVector.broadcast(F, x[x6 + e]), s6);
                s7 = w(k, a7 + d, 0).fma(FloatVector.broadcast(F, x[x7 + e]), s7);
            }
            s0.intoArray(out, outs[i0] + j);
            s1.intoArray(out, outs[i1] + j);
            s2.intoArray(out, outs[i2] + j);
            s3.intoArray(out, outs[i3] + j);
            s4.intoArray(out, outs[i4] + j);
            s5.intoArray(out, outs[i5] + j);
            s6.intoArray(out, outs[i6] + j);
            s7.intoArray(out, outs[i7] + j);
        }
    }

    @Override
    public void axpyRows2(float[] acc, int aoA, int aoB, float[] scales, int so, int soB, MemorySegment v, long offA,
                          long offB, long rowStride, int count, int n) {
        if (n % (4 * L) != 0) {
            RowKernels.super.axpyRows2(acc, aoA, aoB, scales, so, soB, v, offA, offB, rowStride, count, n);
            return;
        }
        // axpyRows' loop for two heads side by side: two runs of V in flight instead of one (on V
        // that the weights have pushed out of the caches about 25% faster per head and page in a
        // microbenchmark here; four heads with half a row each were no faster than one head).
        for (int i = 0; i < n; i += 4 * L) {
            FloatVector a0 = x(acc, aoA + i), a1 = x(acc, aoA + i + L), a2 = x(acc, aoA + i + 2 * L), a3 = x(acc, aoA + i + 3 * L);
            FloatVector b0 = x(acc, aoB + i), b1 = x(acc, aoB + i + L), b2 = x(acc, aoB + i + 2 * L), b3 = x(acc, aoB + i + 3 * L);
            long pa = offA;
            long pb = offB;
            for (int j = 0; j < count; j++, pa += rowStride, pb += rowStride) {
                float s = scales[so + j];
                float t = scales[soB + j];
                a0 = w(v, pa, i).mul(s).add(a0);
                a1 = w(v, pa, i + L).mul(s).add(a1);
                a2 = w(v, pa, i + 2 * L).mul(s).add(a2);
                a3 = w(v, pa, i + 3 * L).mul(s).add(a3);
                b0 = w(v, pb, i).mul(t).add(b0);
                b1 = w(v, pb, i + L).mul(t).add(b1);
                b2 = w(v, pb, i + 2 * L).mul(t).add(b2);
                b3 = w(v, pb, i + 3 * L).mul(t).add(b3);
            }
            a0.intoArray(acc, aoA + i);
            a1.intoArray(acc, aoA + i + L);
            a2.intoArray(acc, aoA + i + 2 * L);
            a3.intoArray(acc, aoA + i + 3 * L);
            b0.intoArray(acc, aoB + i);
            b1.intoArray(acc, aoB + i + L);
            b2.intoArray(acc, aoB + i + 2 * L);
            b3.intoArray(acc, aoB + i + 3 * L);
        }
    }

    // exp in double lanes: as many doubles as fit the preferred shape, and as many floats beside them
    private static final VectorSpecies<Double> D = DoubleVector.SPECIES_PREFERRED;
    private static final VectorSpecies<Float> FD = VectorSpecies.of(float.class, VectorShape.forBitSize(D.length() * 32));
    private static final VectorSpecies<Long> LD = VectorSpecies.of(long.class, D.vectorShape());
    /** Adding and subtracting 1.5 * 2^52 rounds a double below 2^51 in magnitude to an integer, ties to even: Math.rint. */
    private static final double RINT = 0x1.8p52;

    /**
     * {@link Ops#exp} on {@code FD.length()} floats at once, the same double operations in the same
     * order per lane (rint by the 1.5 * 2^52 trick, which equals Math.rint in this range), so each
     * lane has the bits of the scalar call.
     */
    private static FloatVector exp(FloatVector x) {
        DoubleVector d = (DoubleVector) x.convertShape(VectorOperators.F2D, D, 0);
        DoubleVector k = d.mul(Ops.LOG2E).add(RINT).sub(RINT);
        DoubleVector r = d.sub(k.mul(Ops.LN2));
        DoubleVector p = r.mul(1.0 / 40320).add(1.0 / 5040);
        p = r.mul(p).add(1.0 / 720);
        p = r.mul(p).add(1.0 / 120);
        p = r.mul(p).add(1.0 / 24);
        p = r.mul(p).add(1.0 / 6);
        p = r.mul(p).add(1.0 / 2);
        p = r.mul(p).add(1.0);
        p = r.mul(p).add(1.0);
        // 2^k from its exponent bits; k is in [-216, 145] wherever the result is used
        LongVector bits = ((LongVector) k.convertShape(VectorOperators.D2L, LD, 0)).add(1023).lanewise(VectorOperators.LSHL, 52);
        FloatVector e = (FloatVector) p.mul(bits.reinterpretAsDoubles()).convertShape(VectorOperators.D2F, FD, 0);
        // the scalar's early returns: NaN stays itself, below -150 rounds to 0, above 100 is infinity
        e = e.blend(0f, x.compare(VectorOperators.GT, -150f).not());
        e = e.blend(Float.POSITIVE_INFINITY, x.compare(VectorOperators.GT, 100f));
        return e.blend(x, x.test(VectorOperators.IS_NAN));
    }

    @Override
    public void expShifted(float[] x, int o, int n, float shift) {
        int i = o;
        for (int end = o + n - FD.length(); i <= end; i += FD.length()) {
            exp(FloatVector.fromArray(FD, x, i).sub(shift)).intoArray(x, i);
        }
        RowKernels.super.expShifted(x, i, o + n - i, shift); // the scalar tail
    }

    @Override
    public void swiglu(float[] gate, float[] up, int o, int n) {
        int i = o;
        for (int end = o + n - FD.length(); i <= end; i += FD.length()) {
            FloatVector g = FloatVector.fromArray(FD, gate, i);
            g.div(exp(g.neg()).add(1f)).mul(FloatVector.fromArray(FD, up, i)).intoArray(gate, i);
        }
        RowKernels.super.swiglu(gate, up, i, o + n - i); // the scalar tail
    }

    @Override
    public float readAll(MemorySegment seg, long from, long to) {
        // Four sequential streams at once (the quarters of the range), like the rows of a tile:
        // more streams keep more cache-line fills in flight than one.
        long vector = F.vectorByteSize();
        long quarter = (to - from) / 4 / vector * vector;
        FloatVector a = FloatVector.zero(F), b = a, c = a, d = a;
        long p = from;
        for (long end = from + quarter; p < end; p += vector) {
            a = a.add(FloatVector.fromMemorySegment(F, seg, p, LE));
            b = b.add(FloatVector.fromMemorySegment(F, seg, p + quarter, LE));
            c = c.add(FloatVector.fromMemorySegment(F, seg, p + 2 * quarter, LE));
            d = d.add(FloatVector.fromMemorySegment(F, seg, p + 3 * quarter, LE));
        }
        float t = 0f;
        for (p = from + 4 * quarter; p < to; p += 4) {
            t += seg.get(Tensor.F32_LE, p);
        }
        return sumLanes(a.add(b).add(c.add(d))) + t;
    }
}
