package dev.pagewarden.cuda;

import org.junit.jupiter.api.Test;

import java.util.Arrays;
import java.util.Random;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * qwen3's per-head Q/K norm as the GPU runs it: {@code pw_rmsnorm} in place, one block of 128 threads
 * per (token row, head) over headSize values, emulated with the kernel's exact reduction order (each
 * thread's fma chain over its strided elements, the xor-shuffle warp tree, warp 0 summing the warp
 * results in the same tree; common.cuh {@code pw_block_sum}). A head's output is bit-identical whatever
 * the batch size (1..64) and the token's place in it, and within float rounding of the float64 norm.
 */
class HeadNormEmulationTest {
    static final int BLOCK = 128;
    static final float EPS = 1e-6f;

    /** pw_warp_sum over 32 lanes: v[lane] += v[lane ^ o] for o = 16, 8, 4, 2, 1, every lane at once. */
    static void warpSum(float[] v, int base) {
        for (int o = 16; o > 0; o >>= 1) {
            float[] before = Arrays.copyOfRange(v, base, base + 32);
            for (int lane = 0; lane < 32; lane++) {
                v[base + lane] = before[lane] + before[lane ^ o];
            }
        }
    }

    /** pw_block_sum for a block of {@link #BLOCK} threads. */
    static float blockSum(float[] perThread) {
        float[] v = perThread.clone();
        int warps = BLOCK / 32;
        for (int w = 0; w < warps; w++) {
            warpSum(v, 32 * w);
        }
        float[] lanes = new float[32];
        for (int w = 0; w < warps; w++) {
            lanes[w] = v[32 * w];
        }
        warpSum(lanes, 0);
        return lanes[0];
    }

    /** One block of pw_rmsnorm: out[i] = w[i] * (inv * x[i]), inv = 1 / sqrt(ss / n + eps) in double. */
    static void rmsnormBlock(float[] x, int off, float[] w, int n) {
        float[] ss = new float[BLOCK];
        for (int t = 0; t < BLOCK; t++) {
            for (int i = t; i < n; i += BLOCK) {
                ss[t] = Math.fma(x[off + i], x[off + i], ss[t]);
            }
        }
        float sum = blockSum(ss);
        float inv = (float) (1.0 / Math.sqrt((double) (sum / n + EPS)));
        for (int i = 0; i < n; i++) {
            x[off + i] = w[i] * (inv * x[off + i]);
        }
    }

    /** The launch: grid rows x heads, block j normalises the j-th headSize slice of the [rows x heads*hs] buffer. */
    static float[] launch(float[] q, int rows, int heads, int hs, float[] w) {
        float[] out = q.clone();
        for (int j = 0; j < rows * heads; j++) {
            rmsnormBlock(out, j * hs, w, hs);
        }
        return out;
    }

    @Test
    void aHeadsNormDoesNotDependOnTheBatchAndMatchesFloat64() {
        Random rnd = new Random(5);
        for (int hs : new int[] {12, 64, 128, 200}) {
            int heads = 4;
            int width = heads * hs;
            float[] w = new float[hs];
            for (int i = 0; i < hs; i++) {
                w[i] = (float) (0.5 + rnd.nextDouble());
            }
            float[] token = new float[width];
            for (int i = 0; i < width; i++) {
                token[i] = (float) (rnd.nextGaussian() * 3);
            }
            float[] alone = launch(token, 1, heads, hs, w);
            for (int batch : new int[] {2, 7, 64}) {
                int at = rnd.nextInt(batch);
                float[] q = new float[batch * width];
                for (int i = 0; i < q.length; i++) {
                    q[i] = (float) rnd.nextGaussian();
                }
                System.arraycopy(token, 0, q, at * width, width);
                float[] out = launch(q, batch, heads, hs, w);
                float[] mine = Arrays.copyOfRange(out, at * width, (at + 1) * width);
                for (int i = 0; i < width; i++) {
                    assertThat(Float.floatToRawIntBits(mine[i])).as("hs %d batch %d element %d", hs, batch, i)
                            .isEqualTo(Float.floatToRawIntBits(alone[i]));
                }
            }
            for (int h = 0; h < heads; h++) {
                double ss = 0;
                for (int i = 0; i < hs; i++) {
                    ss += (double) token[h * hs + i] * token[h * hs + i];
                }
                double inv = 1 / Math.sqrt(ss / hs + EPS);
                for (int i = 0; i < hs; i++) {
                    double ref = w[i] * inv * token[h * hs + i];
                    assertThat((double) alone[h * hs + i]).as("hs %d head %d element %d", hs, h, i)
                            .isCloseTo(ref, org.assertj.core.data.Offset.offset(2e-6 * Math.max(1, Math.abs(ref))));
                }
            }
        }
    }
}
