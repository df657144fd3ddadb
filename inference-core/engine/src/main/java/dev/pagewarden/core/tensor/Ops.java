package dev.pagewarden.core.tensor;

import dev.pagewarden.core.model.DType;
import dev.pagewarden.core.model.Tensor;

import java.lang.foreign.MemorySegment;

/**
 * The small per-token kernels of the transformer. All deterministic (StrictMath, fixed summation
 * order), so a token's result never depends on what else is in the batch.
 *
 * <p>Only the reductions ({@link #dot}, the sum of squares of {@link #rmsnorm}) use the Vector API
 * explicitly: C2 never reorders a float sum, so a plain loop would stay scalar. The lanewise loops
 * (scaling, {@link #axpy}, {@link #add}) are plain Java, which C2 vectorises by itself with the same
 * per-element results (Java never fuses a multiply and an add). {@link #exp} is plain double
 * arithmetic in a fixed order, bit-stable in every JIT tier.
 */
public final class Ops {
    private Ops() {
    }

    /** {@code out[o..o+n) = x[xo..xo+n) / rms(x) * weight}. */
    public static void rmsnorm(float[] out, int o, float[] x, int xo, Tensor weight, int n, float eps) {
        float ss = dot(x, xo, x, xo, n);
        ss = ss / n + eps;
        float inv = (float) (1.0 / StrictMath.sqrt(ss));
        if (weight.type() == DType.F32) {
            for (int i = 0; i < n; i++) {
                out[o + i] = weight.data().get(Tensor.F32_LE, 4L * i) * (inv * x[xo + i]);
            }
        } else {
            for (int i = 0; i < n; i++) {
                out[o + i] = weight.get(0, i) * (inv * x[xo + i]);
            }
        }
    }

    /** Dot product of {@code a[ao..ao+n)} and {@code b[bo..bo+n)} with a fixed order. */
    public static float dot(float[] a, int ao, float[] b, int bo, int n) {
        return Kernels.ROWS.dot(a, ao, b, bo, n);
    }

    /** In-place softmax of {@code x[o..o+n)}. */
    public static void softmax(float[] x, int o, int n) {
        float max = x[o];
        for (int i = 1; i < n; i++) {
            max = Math.max(max, x[o + i]);
        }
        Kernels.ROWS.expShifted(x, o, n, max);
        float sum = 0f;
        for (int i = 0; i < n; i++) {
            sum += x[o + i];
        }
        float inv = 1f / sum;
        for (int i = 0; i < n; i++) {
            x[o + i] *= inv;
        }
    }

    static final double LOG2E = 1.4426950408889634;
    static final double LN2 = 0.6931471805599453;

    /**
     * {@code e^x} rounded to float, within one ulp of {@code (float) StrictMath.exp(x)} (nearly always
     * equal): x = k ln2 + r with |r| <= ln2/2, e^r by its degree-8 Taylor polynomial (relative
     * error below 1e-9), times 2^k, in double, rounded once to float. Only +, *, rint and exact
     * conversions, so interpreter, C1 and C2 agree bit for bit; several times cheaper than
     * StrictMath.exp, which softmax and SwiGLU call once per element.
     */
    public static float exp(float x) {
        if (!(x > -150f)) {
            return x != x ? x : 0f; // NaN stays NaN; e^x < 2^-150 rounds to 0
        }
        if (x > 100f) {
            return Float.POSITIVE_INFINITY;
        }
        double k = Math.rint(x * LOG2E);
        double r = x - k * LN2;
        double p = 1.0 + r * (1.0 + r * (1.0 / 2 + r * (1.0 / 6 + r * (1.0 / 24 + r * (1.0 / 120
                + r * (1.0 / 720 + r * (1.0 / 5040 + r * (1.0 / 40320))))))));
        return (float) (p * Double.longBitsToDouble((long) (1023 + (int) k) << 52));
    }

    /** {@code gate[i] = silu(gate[i]) * up[i]} for i in [o, o+n). */
    public static void swiglu(float[] gate, float[] up, int o, int n) {
        Kernels.ROWS.swiglu(gate, up, o, n);
    }

    /** {@code acc[ao..ao+n) += scale * v[vo..vo+n)}. */
    public static void axpy(float[] acc, int ao, float scale, float[] v, int vo, int n) {
        for (int i = 0; i < n; i++) {
            acc[ao + i] += scale * v[vo + i];
        }
    }

    /** {@code x[o..o+n) += y[yo..yo+n)}. */
    public static void add(float[] x, int o, float[] y, int yo, int n) {
        for (int i = 0; i < n; i++) {
            x[o + i] += y[yo + i];
        }
    }

    /**
     * Attention scores of one head over a K panel of a page ({@code KvLayout.Order.HEAD_PANELS},
     * {@code slots} slots per dimension, from byte {@code off}): {@code out[oo + j]} for slots
     * {@code j < count}, each one fma chain over the {@code n} dimensions (same bits in every implementation).
     */
    public static void panelScores(float[] q, int qo, MemorySegment kv, long off, int slots, int count, int n,
                                   float[] out, int oo) {
        Kernels.ROWS.panelScores(kv, off, slots, count, n, q, qo, out, oo);
    }

    /**
     * {@link #panelScores} of the {@code runs} (at most {@link #SCORE_RUNS}) full panels listed at
     * index {@code from} of {@code offs}, {@code qos} and {@code outs}, at once: several K streams
     * in flight; same bits as one call each.
     */
    public static void panelScoresN(float[] q, int[] qos, MemorySegment kv, long[] offs, int from, int runs, int slots,
                                    int n, float[] out, int[] outs) {
        Kernels.ROWS.panelScoresN(kv, offs, from, runs, slots, n, q, qos, out, outs);
    }

    /** Most panels one {@link #panelScoresN} call takes. */
    public static final int SCORE_RUNS = RowKernels.SCORE_RUNS;

    /** {@code count} calls of {@link #axpyKv} in order, with scale {@code scales[so + j]} and byte offset {@code off + j*stride}; same bits. */
    public static void axpyKvRows(float[] acc, int ao, float[] scales, int so, MemorySegment kv, long off, long stride,
                                  int count, int n) {
        Kernels.ROWS.axpyRows(acc, ao, scales, so, kv, off, stride, count, n);
    }

    /** {@link #axpyKvRows} for two heads (their runs and outputs apart) in one loop; same bits as two calls. */
    public static void axpyKvRows2(float[] acc, int aoA, int aoB, float[] scales, int so, int soB, MemorySegment kv,
                                   long offA, long offB, long stride, int count, int n) {
        Kernels.ROWS.axpyRows2(acc, aoA, aoB, scales, so, soB, kv, offA, offB, stride, count, n);
    }

    /** Attention output: {@code acc[ao..ao+n) += scale * kv[off..]} (multiply then add per element). */
    public static void axpyKv(float[] acc, int ao, float scale, MemorySegment kv, long off, int n) {
        Kernels.ROWS.axpy(acc, ao, scale, kv, off, n);
    }
}
