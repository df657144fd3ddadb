package dev.pagewarden.cuda;

import org.junit.jupiter.api.Test;

import java.util.Random;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The prefill attention by row groups ({@code pw_attention_rows} in attention.cu) against the attention a
 * decode step runs ({@code pw_attention}), both emulated thread by thread in Java floats as their loops are
 * written: 128 threads, positions assigned p mod 128, the fma chain of each dot product over the head, the
 * warp-butterfly trees of {@code pw_block_max}/{@code pw_block_sum}, the V sum over positions in order. For
 * every grouping (1 to 8 rows a block, runs of two sequences sharing a block) each row's output is
 * bit-identical to the one-row kernel's, and both are softmax attention within float rounding of a float64
 * reference. The host's choice of group size keeps to the kernel's limits.
 */
class AttentionRowsEmulationTest {
    static final int THREADS = 128;

    /** One token row: its sequence's K and V rows (position-major, headSize wide), its query and position. */
    record Row(float[][] k, float[][] v, float[] q, int pos) {
    }

    /** pw_block_sum: each warp's butterfly, then warp 0 over the warp results in lane order (0 beyond). */
    static float blockSum(float[] perThread) {
        float[] warps = new float[32];
        for (int w = 0; w < THREADS / 32; w++) {
            warps[w] = butterflySum(java.util.Arrays.copyOfRange(perThread, 32 * w, 32 * w + 32));
        }
        return butterflySum(warps);
    }

    /** __shfl_xor_sync sums at offsets 16..1: lane 0's value (every lane ends with the same one). */
    static float butterflySum(float[] lanes) {
        float[] v = lanes.clone();
        for (int o = 16; o > 0; o >>= 1) {
            float[] next = new float[32];
            for (int l = 0; l < 32; l++) {
                next[l] = v[l] + v[l ^ o];
            }
            v = next;
        }
        return v[0];
    }

    /** The block max: exact whatever the tree, as max is. */
    static float blockMax(float[] perThread) {
        float m = Float.NEGATIVE_INFINITY;
        for (float x : perThread) {
            m = Math.max(m, x);
        }
        return m;
    }

    static float dot(float[] q, float[] k) {
        float dot = 0f;
        for (int d = 0; d < q.length; d++) {
            dot = Math.fma(q[d], k[d], dot);
        }
        return dot;
    }

    /** pw_attention: one block per row. */
    static float[] oneRow(Row r) {
        int n = r.pos() + 1;
        int hs = r.q().length;
        float scale = (float) (1.0 / Math.sqrt(hs));
        float[] scores = new float[n];
        float[] m = new float[THREADS];
        java.util.Arrays.fill(m, Float.NEGATIVE_INFINITY);
        for (int p = 0; p < n; p++) {
            scores[p] = dot(r.q(), r.k()[p]) * scale;
            m[p % THREADS] = Math.max(m[p % THREADS], scores[p]);
        }
        return softmaxTimesV(scores, blockMax(m), r.v(), n, hs);
    }

    /** Both kernels' softmax and V sum for one row, given its scores and max. */
    static float[] softmaxTimesV(float[] scores, float max, float[][] v, int n, int hs) {
        float[] sum = new float[THREADS];
        for (int p = 0; p < n; p++) { // thread p % 128 visits its positions in ascending order
            float e = (float) Math.exp(scores[p] - max);
            scores[p] = e;
            sum[p % THREADS] += e;
        }
        float inv = 1.0f / blockSum(sum);
        for (int p = 0; p < n; p++) {
            scores[p] *= inv;
        }
        float[] out = new float[hs];
        for (int d = 0; d < hs; d++) {
            float acc = 0f;
            for (int p = 0; p < n; p++) {
                acc = Math.fma(scores[p], v[p][d], acc);
            }
            out[d] = acc;
        }
        return out;
    }

    /**
     * pw_attention_rows: blocks of {@code group} rows, each in runs of one sequence (at most 8 rows); a run's
     * positions up to its longest row, each K row read once and every row's chain extended with it.
     */
    static float[][] grouped(Row[] rows, int[] seqOf, int group) {
        float[][] out = new float[rows.length][];
        for (int first = 0; first < rows.length; first += group) {
            int last = Math.min(rows.length, first + group);
            for (int r0 = first; r0 < last; ) {
                int len = 1;
                while (r0 + len < last && len < 8 && seqOf[r0 + len] == seqOf[r0]) {
                    len++;
                }
                int nmax = 0;
                for (int j = 0; j < len; j++) {
                    nmax = Math.max(nmax, rows[r0 + j].pos() + 1);
                }
                int hs = rows[r0].q().length;
                float scale = (float) (1.0 / Math.sqrt(hs));
                float[][] scores = new float[len][nmax];
                float[][] m = new float[len][THREADS];
                for (float[] mj : m) {
                    java.util.Arrays.fill(mj, Float.NEGATIVE_INFINITY);
                }
                float[][] k = rows[r0].k();
                for (int p = 0; p < nmax; p++) {
                    float[] dots = new float[len];
                    for (int d = 0; d < hs; d++) { // one K value, every row's chain
                        for (int j = 0; j < len; j++) {
                            dots[j] = Math.fma(rows[r0 + j].q()[d], k[p][d], dots[j]);
                        }
                    }
                    for (int j = 0; j < len; j++) {
                        if (p < rows[r0 + j].pos() + 1) {
                            scores[j][p] = dots[j] * scale;
                            m[j][p % THREADS] = Math.max(m[j][p % THREADS], scores[j][p]);
                        }
                    }
                }
                for (int j = 0; j < len; j++) {
                    out[r0 + j] = softmaxTimesV(scores[j], blockMax(m[j]), rows[r0].v(), rows[r0 + j].pos() + 1, hs);
                }
                r0 += len;
            }
        }
        return out;
    }

    /** Softmax attention in float64, from its definition. */
    static double[] reference(Row r) {
        int n = r.pos() + 1;
        int hs = r.q().length;
        double[] s = new double[n];
        double max = Double.NEGATIVE_INFINITY;
        for (int p = 0; p < n; p++) {
            double dot = 0;
            for (int d = 0; d < hs; d++) {
                dot += (double) r.q()[d] * r.k()[p][d];
            }
            s[p] = dot / Math.sqrt(hs);
            max = Math.max(max, s[p]);
        }
        double total = 0;
        for (int p = 0; p < n; p++) {
            s[p] = Math.exp(s[p] - max);
            total += s[p];
        }
        double[] out = new double[hs];
        for (int p = 0; p < n; p++) {
            for (int d = 0; d < hs; d++) {
                out[d] += s[p] / total * r.v()[p][d];
            }
        }
        return out;
    }

    static float[][] random(Random rnd, int n, int hs) {
        float[][] a = new float[n][hs];
        for (float[] row : a) {
            for (int d = 0; d < hs; d++) {
                row[d] = (float) rnd.nextGaussian();
            }
        }
        return a;
    }

    @Test
    void everyGroupingGivesEachRowTheOneRowKernelsBitsAndTheAttentionOfTheDefinition() {
        Random rnd = new Random(20261204);
        int hs = 64;
        // a step of two prompts: 37 rows of one from position 150 (a later chunk), 300 rows of another from 0
        float[][] k1 = random(rnd, 187, hs);
        float[][] v1 = random(rnd, 187, hs);
        float[][] k2 = random(rnd, 300, hs);
        float[][] v2 = random(rnd, 300, hs);
        int n = 37 + 300;
        Row[] rows = new Row[n];
        int[] seqOf = new int[n];
        for (int i = 0; i < n; i++) {
            boolean firstSeq = i < 37;
            seqOf[i] = firstSeq ? 0 : 1;
            rows[i] = firstSeq ? new Row(k1, v1, random(rnd, 1, hs)[0], 150 + i)
                    : new Row(k2, v2, random(rnd, 1, hs)[0], i - 37);
        }
        float[][] alone = new float[n][];
        double worst = 0;
        for (int i = 0; i < n; i++) {
            alone[i] = oneRow(rows[i]);
            double[] ref = reference(rows[i]);
            double scale = 0;
            for (double x : ref) {
                scale = Math.max(scale, Math.abs(x));
            }
            for (int d = 0; d < hs; d++) {
                worst = Math.max(worst, Math.abs(alone[i][d] - ref[d]) / scale);
            }
        }
        assertThat(worst).as("the kernels' attention vs float64, relative to each row's largest output").isLessThan(1e-5);
        for (int group = 1; group <= 8; group++) {
            float[][] g = grouped(rows, seqOf, group);
            for (int i = 0; i < n; i++) {
                for (int d = 0; d < hs; d++) {
                    assertThat(Float.floatToRawIntBits(g[i][d])).as("group " + group + " row " + i + " element " + d)
                            .isEqualTo(Float.floatToRawIntBits(alone[i][d]));
                }
            }
        }
    }

    @Test
    void theHostGroupsOnlyPromptRowsAndWithinTheKernelsLimits() {
        long perRow = (2048 + 128) * 4L;
        assertThat(GpuBackend.attentionGroup(false, 256, 1, perRow, 227 * 1024)).as("off").isEqualTo(1);
        assertThat(GpuBackend.attentionGroup(true, 32, 32, perRow, 227 * 1024)).as("a decode step").isEqualTo(1);
        int g = GpuBackend.attentionGroup(true, 256, 1, perRow, 227 * 1024);
        assertThat(g).isBetween(2, 8);
        assertThat(g * perRow).isLessThanOrEqualTo(48 * 1024);
        assertThat(GpuBackend.attentionGroup(true, 256, 1, (64 + 64) * 4L, 227 * 1024)).as("short prompts: the kernel's 8")
                .isEqualTo(8);
        assertThat(GpuBackend.attentionGroup(true, 256, 1, 60 * 1024, 227 * 1024)).as("one row over the budget").isEqualTo(1);
        assertThat(GpuBackend.attentionGroup(true, 256, 1, 2 * 1024, 4 * 1024)).as("a small device").isEqualTo(2);
    }
}
