package dev.pagewarden.core.model.gguf;

import java.nio.ByteBuffer;

/**
 * Quantisers for ggml's K-quant super-blocks of 256 values (layouts in
 * {@link dev.pagewarden.core.model.Dequantizer}), following ggml's reference quantisation: per
 * sub-block a scale (and for Q4_K/Q5_K a min) chosen by a small weighted least-squares search,
 * then the sub-block scales themselves quantised against one fp16 super-block scale, and the
 * values requantised with the scales as stored, so that what is written decodes as close as the
 * format allows.
 */
final class KQuants {
    private KQuants() {
    }

    static final int QK = 256;

    /** ggml's threshold below which a group counts as all zero. */
    private static final float GROUP_MAX_EPS = 1e-15f;

    /** Round to nearest, halves to even (ggml's nearest_int). */
    private static int nearest(float v) {
        return (int) Math.rint(v);
    }

    static void q4k(float[] x, ByteBuffer dst) {
        minScaleBlock(x, dst, 15, -1f, 0.1f, 20);
    }

    static void q5k(float[] x, ByteBuffer dst) {
        minScaleBlock(x, dst, 31, -0.5f, 0.1f, 15);
    }

    /** Q4_K ({@code nmax} 15) or Q5_K (31): fp16 d, fp16 dmin, 12 scale bytes, [32 bytes of fifth bits,] 128 nibble bytes. */
    private static void minScaleBlock(float[] x, ByteBuffer dst, int nmax, float rmin, float rdelta, int nstep) {
        float[] scales = new float[8], mins = new float[8], weights = new float[32], sub = new float[32];
        int[] l = new int[QK];
        int[] lsub = new int[32];
        float maxScale = 0f, maxMin = 0f;
        for (int j = 0; j < 8; j++) {
            float sumX2 = 0f;
            for (int i = 0; i < 32; i++) {
                sumX2 += x[32 * j + i] * x[32 * j + i];
            }
            float av = (float) Math.sqrt(sumX2 / 32);
            for (int i = 0; i < 32; i++) {
                sub[i] = x[32 * j + i];
                weights[i] = av + Math.abs(sub[i]);
            }
            float[] minOut = new float[1];
            scales[j] = scaleAndMin(sub, weights, nmax, lsub, minOut, rmin, rdelta, nstep);
            mins[j] = minOut[0];
            maxScale = Math.max(maxScale, scales[j]);
            maxMin = Math.max(maxMin, mins[j]);
        }
        float invScale = maxScale > 0 ? 63f / maxScale : 0f;
        float invMin = maxMin > 0 ? 63f / maxMin : 0f;
        byte[] packed = new byte[12];
        int[] ls = new int[8], lm = new int[8];
        for (int j = 0; j < 8; j++) {
            ls[j] = Math.min(63, nearest(invScale * scales[j]));
            lm[j] = Math.min(63, nearest(invMin * mins[j]));
            if (j < 4) {
                packed[j] = (byte) ls[j];
                packed[j + 4] = (byte) lm[j];
            } else {
                packed[j + 4] = (byte) ((ls[j] & 0xf) | (lm[j] & 0xf) << 4);
                packed[j - 4] |= (byte) ((ls[j] >>> 4) << 6);
                packed[j] |= (byte) ((lm[j] >>> 4) << 6);
            }
        }
        short dHalf = Float.floatToFloat16(maxScale / 63f);
        short dminHalf = Float.floatToFloat16(maxMin / 63f);
        float d = Float.float16ToFloat(dHalf), dmin = Float.float16ToFloat(dminHalf);
        for (int j = 0; j < 8; j++) {
            float dj = d * ls[j];
            if (dj == 0f) {
                for (int i = 0; i < 32; i++) {
                    l[32 * j + i] = 0;
                }
                continue;
            }
            float mj = dmin * lm[j];
            for (int i = 0; i < 32; i++) {
                l[32 * j + i] = Math.clamp(nearest((x[32 * j + i] + mj) / dj), 0, nmax);
            }
        }
        dst.putShort(dHalf);
        dst.putShort(dminHalf);
        dst.put(packed);
        if (nmax == 31) {
            byte[] qh = new byte[32];
            for (int g = 0; g < 4; g++) {
                for (int i = 0; i < 32; i++) {
                    qh[i] |= (byte) ((l[64 * g + i] >>> 4) << (2 * g) | (l[64 * g + 32 + i] >>> 4) << (2 * g + 1));
                }
            }
            dst.put(qh);
        }
        for (int g = 0; g < 4; g++) {
            for (int i = 0; i < 32; i++) {
                dst.put((byte) ((l[64 * g + i] & 0xf) | (l[64 * g + 32 + i] & 0xf) << 4));
            }
        }
    }

    /**
     * Scale s and min m (returned negated, as stored: value = s*q - m) for {@code x ~ s*q + min}
     * with q in [0, nmax]: start from the range, then try {@code nstep} other grid spacings and keep
     * the weighted least-squares fit with the smallest weighted squared error. The min is never
     * positive (a sub-block of positive values starts at 0).
     */
    private static float scaleAndMin(float[] x, float[] w, int nmax, int[] l, float[] theMin, float rmin, float rdelta,
                                     int nstep) {
        int n = x.length;
        float min = x[0], max = x[0], sumW = w[0], sumX = w[0] * x[0];
        for (int i = 1; i < n; i++) {
            min = Math.min(min, x[i]);
            max = Math.max(max, x[i]);
            sumW += w[i];
            sumX += w[i] * x[i];
        }
        if (min > 0) {
            min = 0;
        }
        if (max == min) {
            java.util.Arrays.fill(l, 0);
            theMin[0] = -min;
            return 0f;
        }
        float iscale = nmax / (max - min);
        float scale = 1f / iscale;
        float bestErr = 0f;
        for (int i = 0; i < n; i++) {
            l[i] = Math.clamp(nearest(iscale * (x[i] - min)), 0, nmax);
            float diff = scale * l[i] + min - x[i];
            bestErr += w[i] * diff * diff;
        }
        int[] aux = new int[n];
        for (int is = 0; is <= nstep; is++) {
            iscale = (rmin + rdelta * is + nmax) / (max - min);
            float sumL = 0, sumL2 = 0, sumXL = 0;
            for (int i = 0; i < n; i++) {
                int li = Math.clamp(nearest(iscale * (x[i] - min)), 0, nmax);
                aux[i] = li;
                sumL += w[i] * li;
                sumL2 += w[i] * li * li;
                sumXL += w[i] * li * x[i];
            }
            float det = sumW * sumL2 - sumL * sumL;
            if (det > 0) {
                float thisScale = (sumW * sumXL - sumX * sumL) / det;
                float thisMin = (sumL2 * sumX - sumL * sumXL) / det;
                if (thisMin > 0) {
                    thisMin = 0;
                    thisScale = sumXL / sumL2;
                }
                float err = 0;
                for (int i = 0; i < n; i++) {
                    float diff = thisScale * aux[i] + thisMin - x[i];
                    err += w[i] * diff * diff;
                }
                if (err < bestErr) {
                    System.arraycopy(aux, 0, l, 0, n);
                    bestErr = err;
                    scale = thisScale;
                    min = thisMin;
                }
            }
        }
        theMin[0] = -min;
        return scale;
    }

    /** Q6_K: 128 low-nibble bytes, 64 bytes of high bit pairs, 16 int8 scales, fp16 d. */
    static void q6k(float[] x, ByteBuffer dst) {
        float[] scales = new float[16];
        int[] l = new int[QK];
        float maxScale = 0f, maxAbsScale = 0f;
        float[] sub = new float[16];
        int[] lsub = new int[16];
        for (int ib = 0; ib < 16; ib++) {
            System.arraycopy(x, 16 * ib, sub, 0, 16);
            float s = symmetricScale(sub, 32, lsub);
            scales[ib] = s;
            if (Math.abs(s) > maxAbsScale) {
                maxAbsScale = Math.abs(s);
                maxScale = s;
            }
        }
        byte[] sc = new byte[16];
        short dHalf = 0;
        if (maxAbsScale >= GROUP_MAX_EPS) {
            float iscale = -128f / maxScale;
            dHalf = Float.floatToFloat16(1f / iscale);
            for (int ib = 0; ib < 16; ib++) {
                sc[ib] = (byte) Math.min(127, nearest(iscale * scales[ib]));
            }
            float d = Float.float16ToFloat(dHalf);
            for (int j = 0; j < 16; j++) {
                float dj = d * sc[j];
                for (int i = 0; i < 16; i++) {
                    l[16 * j + i] = dj == 0f ? 32 : Math.clamp(nearest(x[16 * j + i] / dj), -32, 31) + 32;
                }
            }
        } else {
            java.util.Arrays.fill(l, 32);
        }
        byte[] ql = new byte[128], qh = new byte[64];
        for (int half = 0; half < 2; half++) {
            int b = 128 * half;
            for (int i = 0; i < 32; i++) {
                int q1 = l[b + i], q2 = l[b + i + 32], q3 = l[b + i + 64], q4 = l[b + i + 96];
                ql[64 * half + i] = (byte) ((q1 & 0xf) | (q3 & 0xf) << 4);
                ql[64 * half + i + 32] = (byte) ((q2 & 0xf) | (q4 & 0xf) << 4);
                qh[32 * half + i] = (byte) ((q1 >>> 4) | (q2 >>> 4) << 2 | (q3 >>> 4) << 4 | (q4 >>> 4) << 6);
            }
        }
        dst.put(ql);
        dst.put(qh);
        dst.put(sc);
        dst.putShort(dHalf);
    }

    /**
     * Scale s for {@code x ~ s*q}, q in [-nmax, nmax-1], weighted by x^2: start at the value of
     * largest magnitude mapped to -nmax, then try grid spacings around it and keep the best fit.
     */
    private static float symmetricScale(float[] x, int nmax, int[] l) {
        int n = x.length;
        float max = 0f, amax = 0f;
        for (float v : x) {
            if (Math.abs(v) > amax) {
                amax = Math.abs(v);
                max = v;
            }
        }
        if (amax < GROUP_MAX_EPS) {
            java.util.Arrays.fill(l, 0);
            return 0f;
        }
        float iscale = -nmax / max;
        float sumLX = 0, sumL2 = 0;
        for (int i = 0; i < n; i++) {
            int li = Math.clamp(nearest(iscale * x[i]), -nmax, nmax - 1);
            l[i] = li + nmax;
            float w = x[i] * x[i];
            sumLX += w * x[i] * li;
            sumL2 += w * li * li;
        }
        float scale = sumL2 != 0 ? sumLX / sumL2 : 0f;
        float best = scale * sumLX;
        for (int is = -9; is <= 9; is++) {
            if (is == 0) {
                continue;
            }
            iscale = -(nmax + 0.1f * is) / max;
            sumLX = 0;
            sumL2 = 0;
            for (int i = 0; i < n; i++) {
                int li = Math.clamp(nearest(iscale * x[i]), -nmax, nmax - 1);
                float w = x[i] * x[i];
                sumLX += w * x[i] * li;
                sumL2 += w * li * li;
            }
            if (sumL2 > 0 && sumLX * sumLX > best * sumL2) {
                for (int i = 0; i < n; i++) {
                    l[i] = nmax + Math.clamp(nearest(iscale * x[i]), -nmax, nmax - 1);
                }
                scale = sumLX / sumL2;
                best = scale * sumLX;
            }
        }
        return scale;
    }
}
