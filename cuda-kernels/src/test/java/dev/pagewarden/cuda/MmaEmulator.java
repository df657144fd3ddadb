package dev.pagewarden.cuda;

import dev.pagewarden.core.model.Tensor;

import java.lang.foreign.MemorySegment;

/**
 * A Java model of {@code pw_gemm_*} (gemm.cuh), without a GPU: the packed bytes are read back as each
 * lane's A fragment, each lane builds its B fragment from x (rounded to f16 or bf16, nearest even),
 * every warp (k-slice) of every block (row tile x 64 tokens) runs its k-tiles in the kernel's order, the
 * partial sums go through the shared-memory regions and are added slice 0 first, then the epilogue.
 *
 * <p>Arithmetic model of one {@code mma.m16n8k16} element: d = float(c + sum of the 16 products), the
 * products exact (an f16 x f16 or bf16 x bf16 product fits a double, even a float) and summed in double,
 * one rounding to float at the end. The hardware's internal order within one mma is not documented; it
 * is the same for every column, which is all batch invariance needs, and its rounding is within the
 * tolerance the tests state. What this model pins down is the schedule: which products go into which
 * accumulator, in which order, and how the partial sums meet. The kernels for at most 8 tokens
 * ({@code pw_gemm_*_n8}) keep one n-tile of accumulators instead of eight and unroll further; that
 * changes no accumulator's products or order, so this one model covers both.
 */
final class MmaEmulator {
    static final int STORE = 0;
    static final int ADD = 1;
    static final int SWIGLU = 2;

    private MmaEmulator() {
    }

    /** A packed matrix as the kernel sees it. */
    record Packed(MemorySegment tiles, int rows, int cols, boolean bf16) {
        static Packed of(Tensor t) {
            long tiles = (long) MmaPacking.rowTiles(t.rows()) * MmaPacking.kTiles(t.cols());
            MemorySegment m = MemorySegment.ofArray(new byte[(int) (tiles * MmaPacking.TILE_BYTES)]);
            MmaPacking.pack(t, 0, (int) tiles, m);
            return new Packed(m, t.rows(), t.cols(), t.type() == dev.pagewarden.core.model.DType.BF16);
        }

        /** Lane {@code lane}'s fragment value v (a0..a7) of a tile, as a float. */
        float frag(int rowTile, int kTile, int lane, int v) {
            long at = ((long) rowTile * MmaPacking.kTiles(cols) + kTile) * MmaPacking.TILE_BYTES + lane * 16L + v * 2L;
            short bits = tiles.get(Tensor.I16_LE, at);
            return bf16 ? Float.intBitsToFloat((bits & 0xffff) << 16) : Float.float16ToFloat(bits);
        }
    }

    /** Round to nearest even to bf16, back as a float (what __floats2bfloat162_rn keeps). */
    static float roundBf16(float f) {
        if (Float.isNaN(f)) {
            return f;
        }
        int b = Float.floatToRawIntBits(f);
        b += 0x7fff + ((b >>> 16) & 1);
        return Float.intBitsToFloat(b & 0xffff0000);
    }

    static float round(float f, boolean bf16) {
        return bf16 ? roundBf16(f) : Float.float16ToFloat(Float.floatToFloat16(f));
    }

    /** The activation the B operand gets for (token t, k): pw_gemm_x, then rounded. */
    static float bValue(float[][] x, float[] invRms, float[] g, int t, int k, int inDim, boolean bf16) {
        if (k >= inDim) {
            return 0f;
        }
        float v = x[t][k];
        return round(g != null ? g[k] * (invRms[t] * v) : v, bf16);
    }

    /**
     * One launch. {@code ms}: the matrices (STORE: 1-3 stacked; ADD: 1; SWIGLU: gate, up); {@code outs}
     * [matrix][token][row] (ADD: the residual, updated in place); x [tokens][inDim]; invRms and g both
     * null (no prologue) or both set.
     */
    static void run(GemmPlan plan, Packed[] ms, float[][][] outs, int mode, float[][] x, float[] invRms, float[] g) {
        int inDim = ms[0].cols();
        int tokens = x.length;
        int n = mode == SWIGLU ? 2 : 1;
        int[] tileStart = new int[ms.length + 1];
        for (int i = 0; i < ms.length; i++) {
            tileStart[i + 1] = tileStart[i] + MmaPacking.rowTiles(ms[i].rows());
        }
        int gridX = mode == SWIGLU ? MmaPacking.rowTiles(ms[0].rows()) : tileStart[ms.length];
        if (gridX != plan.gridX()) {
            throw new IllegalArgumentException("plan has " + plan.gridX() + " row tiles, the matrices " + gridX);
        }
        for (int bx = 0; bx < gridX; bx++) {
            for (int by = 0; by < GemmPlan.gridY(tokens); by++) {
                int m = 0;
                while (mode != SWIGLU && bx >= tileStart[m + 1]) {
                    m++;
                }
                Packed[] dec = mode == SWIGLU ? new Packed[] {ms[0], ms[1]} : new Packed[] {ms[m]};
                block(plan, dec, bx - tileStart[m], by, outs[m], mode, x, invRms, g, tokens, inDim, n);
            }
        }
    }

    private static void block(GemmPlan plan, Packed[] d, int rowTile, int by, float[][] out, int mode, float[][] x,
                              float[] invRms, float[] g, int tokens, int inDim, int n) {
        boolean bf16 = d[0].bf16();
        int slices = plan.slices();
        int t0 = by * GemmPlan.TOKENS_PER_BLOCK;
        int live = Math.min(8, (tokens - t0 + 7) / 8);
        float[] red = new float[(slices + n - 1) * GemmPlan.REGION_FLOATS];
        // acc[warp][matrix][n-tile][lane][j]
        float[][][][][] acc = new float[slices][n][8][32][4];
        for (int s = 0; s < slices; s++) {
            for (int kt = plan.sliceStart(s); kt < plan.sliceStart(s + 1); kt++) {
                float[][][] a = new float[n][][];
                for (int mi = 0; mi < n; mi++) {
                    a[mi] = aTile(d[mi], rowTile, kt);
                }
                for (int nt = 0; nt < live; nt++) {
                    // B: lane l holds column l/4, k = 2q, 2q+1, 2q+8, 2q+9
                    float[][] b = new float[16][8];
                    for (int lane = 0; lane < 32; lane++) {
                        int t = t0 + nt * 8 + lane / 4;
                        int k = kt * 16 + 2 * (lane % 4);
                        if (t < tokens) {
                            b[2 * (lane % 4)][lane / 4] = bValue(x, invRms, g, t, k, inDim, bf16);
                            b[2 * (lane % 4) + 1][lane / 4] = bValue(x, invRms, g, t, k + 1, inDim, bf16);
                            b[2 * (lane % 4) + 8][lane / 4] = bValue(x, invRms, g, t, k + 8, inDim, bf16);
                            b[2 * (lane % 4) + 9][lane / 4] = bValue(x, invRms, g, t, k + 9, inDim, bf16);
                        }
                    }
                    for (int mi = 0; mi < n; mi++) {
                        mma(acc[s][mi][nt], a[mi], b);
                    }
                }
            }
        }
        for (int mi = 0; mi < n; mi++) {
            for (int s = 0; s < slices; s++) {
                for (int nt = 0; nt < live; nt++) {
                    for (int lane = 0; lane < 32; lane++) {
                        for (int j = 0; j < 4; j++) {
                            red[(mi + s) * GemmPlan.REGION_FLOATS + (nt * 32 + lane) * 4 + j] = acc[s][mi][nt][lane][j];
                        }
                    }
                }
            }
            for (int i = 0; i < live * 128; i++) {
                float sum = red[mi * GemmPlan.REGION_FLOATS + i];
                for (int s = 1; s < slices; s++) {
                    sum += red[(mi + s) * GemmPlan.REGION_FLOATS + i];
                }
                red[mi * GemmPlan.REGION_FLOATS + i] = sum;
            }
        }
        int outRows = d[0].rows();
        for (int i = 0; i < live * 128; i++) {
            int nt = i >> 7;
            int l = (i >> 2) & 31;
            int j = i & 3;
            int o = rowTile * 16 + (l >> 2) + (j >> 1) * 8;
            int t = t0 + nt * 8 + 2 * (l & 3) + (j & 1);
            if (o < outRows && t < tokens) {
                float s = red[i];
                out[t][o] = switch (mode) {
                    case SWIGLU -> s / (1.0f + (float) Math.exp(-s)) * red[GemmPlan.REGION_FLOATS + i];
                    case ADD -> out[t][o] + s;
                    default -> s;
                };
            }
        }
    }

    /** The 16 x 16 A tile assembled from the 32 lanes' fragments (where each lane's values belong). */
    private static float[][] aTile(Packed p, int rowTile, int kTile) {
        float[][] a = new float[16][16];
        for (int lane = 0; lane < 32; lane++) {
            for (int v = 0; v < 8; v++) {
                a[lane / 4 + ((v >> 1) & 1) * 8][2 * (lane % 4) + (v & 1) + (v >> 2) * 8] = p.frag(rowTile, kTile, lane, v);
            }
        }
        return a;
    }

    /** acc[lane][j] (C fragment: row lane/4 + 8*(j/2), column 2*(lane%4) + j%2) += a x b, per the model above. */
    private static void mma(float[][] acc, float[][] a, float[][] b) {
        for (int lane = 0; lane < 32; lane++) {
            for (int j = 0; j < 4; j++) {
                int row = lane / 4 + (j >> 1) * 8;
                int col = 2 * (lane % 4) + (j & 1);
                double s = acc[lane][j];
                double products = 0;
                for (int k = 0; k < 16; k++) {
                    products += (double) a[row][k] * b[k][col];
                }
                acc[lane][j] = (float) (s + products);
            }
        }
    }
}
