package dev.pagewarden.core.tensor;

import dev.pagewarden.core.model.Tensor;

import java.lang.foreign.MemorySegment;
import java.nio.ByteOrder;

import jdk.incubator.vector.ByteVector;
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
 * <p>Dot product order, fixed by the length alone: two accumulators take alternate vectors of
 * {@code L} columns ({@code fma}, exact per lane), an odd trailing vector goes into the first, they
 * are added lanewise, the lanes are summed by the fixed pairwise tree of {@link #sumLanes}, and the
 * scalar tail of {@code n % L} columns (summed left to right) is added last. No {@code reduceLanes}:
 * its order is unspecified and differs between the intrinsic and the Java fallback that runs before
 * C2 compiles the loop.
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

    private VectorKernels() {
    }

    @Override
    public String name() {
        return "vector-" + F.vectorBitSize();
    }

    private static FloatVector w(MemorySegment w, long off, int i) {
        return FloatVector.fromMemorySegment(F, w, off + 4L * i, LE);
    }

    private static FloatVector x(float[] x, int i) {
        return FloatVector.fromArray(F, x, i);
    }

    @Override
    public float dot(MemorySegment w, long off, int n, float[] x, int xo) {
        FloatVector a = FloatVector.zero(F);
        FloatVector b = a;
        int i = 0;
        for (int end = n - 2 * L; i <= end; i += 2 * L) {
            a = w(w, off, i).fma(x(x, xo + i), a);
            b = w(w, off, i + L).fma(x(x, xo + i + L), b);
        }
        if (i <= n - L) {
            a = w(w, off, i).fma(x(x, xo + i), a);
            i += L;
        }
        return sumLanes(a.add(b)) + tail(w, off, i, n, x, xo);
    }

    @Override
    public void dot4(MemorySegment w, long off, int n, float[] x, int xo, int xStride, float[] out, int oo, int oStride) {
        // dot() unrolled over four vectors: each weight vector is loaded once and used four times;
        // per vector the operations and their order are exactly those of dot().
        int x0 = xo, x1 = xo + xStride, x2 = x1 + xStride, x3 = x2 + xStride;
        FloatVector a0 = FloatVector.zero(F), b0 = a0, a1 = a0, b1 = a0, a2 = a0, b2 = a0, a3 = a0, b3 = a0;
        int i = 0;
        for (int end = n - 2 * L; i <= end; i += 2 * L) {
            FloatVector wa = w(w, off, i);
            FloatVector wb = w(w, off, i + L);
            a0 = wa.fma(x(x, x0 + i), a0);
            b0 = wb.fma(x(x, x0 + i + L), b0);
            a1 = wa.fma(x(x, x1 + i), a1);
            b1 = wb.fma(x(x, x1 + i + L), b1);
            a2 = wa.fma(x(x, x2 + i), a2);
            b2 = wb.fma(x(x, x2 + i + L), b2);
            a3 = wa.fma(x(x, x3 + i), a3);
            b3 = wb.fma(x(x, x3 + i + L), b3);
        }
        if (i <= n - L) {
            FloatVector wa = w(w, off, i);
            a0 = wa.fma(x(x, x0 + i), a0);
            a1 = wa.fma(x(x, x1 + i), a1);
            a2 = wa.fma(x(x, x2 + i), a2);
            a3 = wa.fma(x(x, x3 + i), a3);
            i += L;
        }
        out[oo] = sumLanes(a0.add(b0)) + tail(w, off, i, n, x, x0);
        out[oo + oStride] = sumLanes(a1.add(b1)) + tail(w, off, i, n, x, x1);
        out[oo + 2 * oStride] = sumLanes(a2.add(b2)) + tail(w, off, i, n, x, x2);
        out[oo + 3 * oStride] = sumLanes(a3.add(b3)) + tail(w, off, i, n, x, x3);
    }

    /** Dot product of two float arrays, with the order of {@link #dot}; for {@link Ops#dot}. */
    static float dot(float[] a, int ao, float[] b, int bo, int n) {
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

    private static float tail(MemorySegment w, long off, int from, int n, float[] x, int xo) {
        float t = 0f;
        for (int i = from; i < n; i++) {
            t += w.get(Tensor.F32_LE, off + 4L * i) * x[xo + i];
        }
        return t;
    }

    /**
     * Sum of the lanes in a fixed pairwise tree: for h = L/2, L/4, .., 1: lane[i] += lane[i + h].
     * Rotations and lanewise adds only, so interpreter, C1 and C2 agree bit for bit.
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
    public void decodeF16(MemorySegment src, long off, int n, MemorySegment dst) {
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
            bits.intoMemorySegment(dst, 4L * i, LE);
        }
        for (; i < n; i++) {
            dst.set(Tensor.F32_LE, 4L * i, ScalarKernels.halfToFloat(src.get(Tensor.I16_LE, off + 2L * i)));
        }
    }

    @Override
    public void decodeQ8(MemorySegment src, long off, int n, MemorySegment dst) {
        if (!Q8_VECTOR) {
            ScalarKernels.INSTANCE.decodeQ8(src, off, n, dst);
            return;
        }
        for (int block = 0; block < n / 32; block++) {
            long b = off + 34L * block;
            FloatVector scale = FloatVector.broadcast(F, ScalarKernels.halfToFloat(src.get(Tensor.I16_LE, b)));
            for (int j = 0; j < 32; j += L) {
                FloatVector q = (FloatVector) ByteVector.fromMemorySegment(B, src, b + 2 + j, LE)
                        .convertShape(VectorOperators.B2F, F, 0);
                // int8 * fp16 needs at most 19 significant bits: exact in fp32.
                q.mul(scale).intoMemorySegment(dst, 4L * (32 * block + j), LE);
            }
        }
    }

    @Override
    public float readAll(MemorySegment seg, long from, long to) {
        FloatVector a = FloatVector.zero(F), b = a, c = a, d = a;
        long step = 4L * F.vectorByteSize();
        long p = from;
        for (; p + step <= to; p += step) {
            a = a.add(FloatVector.fromMemorySegment(F, seg, p, LE));
            b = b.add(FloatVector.fromMemorySegment(F, seg, p + F.vectorByteSize(), LE));
            c = c.add(FloatVector.fromMemorySegment(F, seg, p + 2L * F.vectorByteSize(), LE));
            d = d.add(FloatVector.fromMemorySegment(F, seg, p + 3L * F.vectorByteSize(), LE));
        }
        float t = 0f;
        for (; p < to; p += 4) {
            t += seg.get(Tensor.F32_LE, p);
        }
        return sumLanes(a.add(b).add(c.add(d))) + t;
    }
}
