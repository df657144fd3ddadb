package dev.pagewarden.cuda;

import dev.pagewarden.core.model.Architecture;
import dev.pagewarden.core.model.ModelConfig;
import dev.pagewarden.core.model.RopeScaling;
import org.junit.jupiter.api.Test;

import java.util.Random;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The RoPE kernels' thread-to-pair mapping (common.cuh's {@code pw_rope_pair}) and rotation
 * ({@code pw_rotate}: two rounded products and a rounded sum, no fma), emulated thread by thread as
 * {@code pw_rope}, the fused KV append (K) and the fused attention Q load (one head per block) assign
 * them: every element rotated exactly once, fused and unfused bit-identical, and both equal to RoPE
 * written from its definitions (adjacent pairs as in llama2.c; Hugging Face's rotate_half for NEOX)
 * within float64 rounding.
 */
class RopeKernelEmulationTest {

    /** common.cuh pw_rope_pair: {pair, ia, ib}. */
    static int[] pair(int j, int headSize, boolean neox) {
        int half = headSize / 2;
        int head = j / half;
        int p = j - head * half;
        int ia = head * headSize + (neox ? p : 2 * p);
        return new int[] {p, ia, ia + (neox ? half : 1)};
    }

    /** common.cuh pw_rotate in Java floats (each operation rounded, as __fmul_rn / __fsub_rn / __fadd_rn). */
    static void rotate(float[] v, int ia, int ib, float c, float s) {
        float x = v[ia];
        float y = v[ib];
        v[ia] = x * c - y * s;
        v[ib] = x * s + y * c;
    }

    @Test
    void fusedAndUnfusedRotateEveryElementOnceWithTheSameBitsAndAsTheDefinitionSays() {
        for (Architecture arch : Architecture.values()) {
            for (int[] shape : new int[][] {{256, 8, 2, 32}, {256, 8, 2, 48}, {96, 6, 3, 16}}) {
                int heads = shape[1];
                int kvHeads = shape[2];
                int hs = shape[3];
                ModelConfig cfg = new ModelConfig(shape[0], 64, 1, heads, kvHeads, 10, 40, 1e-5f, 500000f, true)
                        .with(arch, hs, arch == Architecture.LLAMA ? RopeScaling.llama32(hs, 500000) : null);
                check(cfg);
            }
        }
    }

    private static void check(ModelConfig cfg) {
        boolean neox = cfg.architecture().neoxRope();
        int hs = cfg.headSize();
        int half = hs / 2;
        int qDim = cfg.qDim();
        int kvDim = cfg.kvDim();
        float[][] t = DeviceWeights.ropeTables(cfg);
        Random rnd = new Random(qDim * 31L + hs);
        for (int pos : new int[] {0, 1, 17, cfg.seqLen() - 1}) {
            float[] q = randomRow(rnd, qDim);
            float[] k = randomRow(rnd, kvDim);
            // pw_rope: one thread per pair of q, k's pairs below kvDim / 2 ride along
            float[] q1 = q.clone();
            float[] k1 = k.clone();
            int[] qTouched = new int[qDim];
            int[] kTouched = new int[kvDim];
            for (int j = 0; j < qDim / 2; j++) {
                int[] p = pair(j, hs, neox);
                float c = t[0][pos * half + p[0]];
                float s = t[1][pos * half + p[0]];
                rotate(q1, p[1], p[2], c, s);
                qTouched[p[1]]++;
                qTouched[p[2]]++;
                if (j < kvDim / 2) {
                    rotate(k1, p[1], p[2], c, s);
                    kTouched[p[1]]++;
                    kTouched[p[2]]++;
                }
            }
            assertThat(qTouched).as("q elements rotated once").containsOnly(1);
            assertThat(kTouched).as("k elements rotated once").containsOnly(1);
            // fused KV append: one block per row, threads over kvDim / 2 pairs
            float[] k2 = k.clone();
            for (int j = 0; j < kvDim / 2; j++) {
                int[] p = pair(j, hs, neox);
                rotate(k2, p[1], p[2], t[0][pos * half + p[0]], t[1][pos * half + p[0]]);
            }
            // fused attention Q load: one block per (row, head), threads over the head's pairs
            float[] q2 = q.clone();
            for (int head = 0; head < cfg.nHeads(); head++) {
                float[] slice = java.util.Arrays.copyOfRange(q2, head * hs, (head + 1) * hs);
                for (int j = 0; j < half; j++) {
                    int[] p = pair(j, hs, neox);
                    rotate(slice, p[1], p[2], t[0][pos * half + p[0]], t[1][pos * half + p[0]]);
                }
                System.arraycopy(slice, 0, q2, head * hs, hs);
            }
            assertThat(bits(q2)).as("%s pos %d: fused q", cfg.architecture(), pos).isEqualTo(bits(q1));
            assertThat(bits(k2)).as("%s pos %d: fused k", cfg.architecture(), pos).isEqualTo(bits(k1));
            assertClose(q1, reference(q, cfg, pos), cfg, pos);
            assertClose(k1, reference(k, cfg, pos), cfg, pos);
        }
    }

    /**
     * RoPE in float64 from its definitions: adjacent pairs (x[2i], x[2i+1]) turned by angle i, or for
     * NEOX out = x * cos + rotate_half(x) * sin with rotate_half(x) = [-x[half..], x[..half]] and the
     * angles repeated over both halves. The angles: theta^(-2i/headSize) / factor_i times the position.
     */
    static double[] reference(float[] x, ModelConfig cfg, int pos) {
        int hs = cfg.headSize();
        int half = hs / 2;
        double[] out = new double[x.length];
        for (int h = 0; h < x.length; h += hs) {
            for (int d = 0; d < hs; d++) {
                int i = cfg.architecture().neoxRope() ? d % half : d / 2;
                double freq = Math.pow(cfg.ropeTheta(), -2.0 * i / hs)
                        / (cfg.ropeScaling() == null ? 1 : cfg.ropeScaling().factor(i));
                double a = pos * freq;
                double partner;
                if (cfg.architecture().neoxRope()) {
                    partner = d < half ? -x[h + d + half] : x[h + d - half];
                } else {
                    partner = d % 2 == 0 ? -x[h + d + 1] : x[h + d - 1];
                }
                out[h + d] = x[h + d] * Math.cos(a) + partner * Math.sin(a);
            }
        }
        return out;
    }

    private static void assertClose(float[] got, double[] want, ModelConfig cfg, int pos) {
        for (int i = 0; i < got.length; i++) {
            assertThat((double) got[i]).as("%s pos %d element %d", cfg.architecture(), pos, i)
                    .isCloseTo(want[i], org.assertj.core.data.Offset.offset(1e-5 + 1e-6 * pos));
        }
    }

    private static float[] randomRow(Random rnd, int n) {
        float[] v = new float[n];
        for (int i = 0; i < n; i++) {
            v[i] = (float) rnd.nextGaussian();
        }
        return v;
    }

    private static int[] bits(float[] v) {
        int[] b = new int[v.length];
        for (int i = 0; i < v.length; i++) {
            b[i] = Float.floatToRawIntBits(v[i]);
        }
        return b;
    }
}
