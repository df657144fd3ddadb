package dev.pagewarden.cuda;

import java.util.Arrays;

/**
 * Launch shape of the tensor-core product ({@code gemm.cuh}), from the matrix shape alone: the row
 * tiles (16 rows each, stacked matrices one after another), the k-tiles (16 columns) and the number of
 * k-slices S. One block per row tile, one warp per slice; slice s sums k-tiles
 * {@code [s*kTiles/S, (s+1)*kTiles/S)} in order and the S partial sums are added in shared memory from
 * slice 0 to S-1. The token count only sets grid.y ({@link #gridY}), never S or a slice's range, so an
 * output's reduction order is the same in every batch.
 *
 * <p>The rule for S: the smallest power of two that gives 2048 warps or more over the
 * row tiles (about 16 per multiprocessor of a 132-SM H200: enough loads in flight to stream the weights
 * at batch 1), at most {@value #MAX_SLICES} and at most kTiles / {@value #MIN_TILES_PER_SLICE} (at
 * least 1), so a slice keeps a few unrolled tiles of work.
 */
public record GemmPlan(int rowTiles, int kTiles, int slices) {
    /** -Dpagewarden.gpu.gemm.targetWarps (default 2048): a JVM-wide knob for tuning on a GPU, never per batch. */
    static final int TARGET_WARPS = Integer.getInteger("pagewarden.gpu.gemm.targetWarps", 2048);
    static final int MAX_SLICES = 8;
    static final int MIN_TILES_PER_SLICE = 4;
    /** Tokens of one block: 8 n-tiles of 8 (grid.y covers the rest). */
    public static final int TOKENS_PER_BLOCK = 64;
    /** Floats of one partial-sum region of shared memory: 8 n-tiles x 32 lanes x 4 accumulators. */
    static final int REGION_FLOATS = 1024;

    public GemmPlan {
        if (rowTiles <= 0 || kTiles <= 0 || slices <= 0 || slices > Math.min(MAX_SLICES, kTiles)) {
            throw new IllegalArgumentException("bad gemm plan: " + rowTiles + " row tiles, " + kTiles + " k-tiles, "
                    + slices + " slices");
        }
    }

    /** The plan of one matrix of {@code outRows x inDim}. */
    public static GemmPlan of(int outRows, int inDim) {
        return of(new int[] {outRows}, inDim);
    }

    /** The plan of matrices of {@code outRows[i] x inDim} stacked in one launch (Q, K and V). */
    public static GemmPlan of(int[] outRows, int inDim) {
        if (outRows.length == 0 || outRows.length > 3 || Arrays.stream(outRows).anyMatch(r -> r <= 0) || inDim <= 0) {
            throw new IllegalArgumentException("gemm of " + Arrays.toString(outRows) + " x " + inDim
                    + ": one to three matrices of positive size");
        }
        int rowTiles = 0;
        for (int r : outRows) {
            rowTiles += MmaPacking.rowTiles(r);
        }
        int kTiles = MmaPacking.kTiles(inDim);
        int cap = Math.max(1, Math.min(MAX_SLICES, kTiles / MIN_TILES_PER_SLICE));
        int s = 1;
        while (2 * s <= cap && (long) rowTiles * s < TARGET_WARPS) {
            s *= 2;
        }
        return new GemmPlan(rowTiles, kTiles, s);
    }

    /** First k-tile of slice {@code s} (slice s ends where s + 1 begins). */
    public int sliceStart(int s) {
        return s * kTiles / slices;
    }

    public int threads() {
        return 32 * slices;
    }

    /** Dynamic shared memory: (S + matrices - 1) regions of 4 KiB; matrices = 2 for SwiGLU, else 1. */
    public int sharedBytes(int matrices) {
        return (slices + matrices - 1) * REGION_FLOATS * Float.BYTES;
    }

    public int gridX() {
        return rowTiles;
    }

    public static int gridY(int tokens) {
        if (tokens <= 0) {
            throw new IllegalArgumentException("gemm over " + tokens + " tokens");
        }
        return (tokens + TOKENS_PER_BLOCK - 1) / TOKENS_PER_BLOCK;
    }
}
