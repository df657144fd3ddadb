package dev.pagewarden.cuda;

import dev.pagewarden.core.model.DType;
import dev.pagewarden.core.model.Tensor;

import java.lang.foreign.MemorySegment;

/**
 * F16 and BF16 matrices in the tensor-core kernels' fragment order ({@code gemm.cuh}): the matrix is cut
 * into tiles of 16 rows x 16 columns (zero-padded at the edges), the tiles of one 16-row block stored
 * consecutively along the columns; within a 512-byte tile, lane {@code l} of the warp finds the eight
 * 16-bit values of its mma.m16n8k16 A fragment at {@code l * 16}, so it fetches them in one 128-bit load.
 * Values are copied bit for bit: packing changes the order, never a number.
 */
public final class MmaPacking {
    /** Bytes of one packed 16 x 16 tile: 32 lanes x 8 values x 2 bytes. */
    public static final int TILE_BYTES = 512;

    /** Row and column within its tile of packed value j = lane * 8 + v. */
    private static final int[] GATHER_ROW = new int[256];
    private static final int[] GATHER_COL = new int[256];

    static {
        for (int j = 0; j < 256; j++) {
            GATHER_ROW[j] = fragRow(j / 8, j % 8);
            GATHER_COL[j] = fragCol(j / 8, j % 8);
        }
    }

    private MmaPacking() {
    }

    /** Whether the tensor-core kernels take this weight type packed. */
    public static boolean packs(DType type) {
        return type == DType.F16 || type == DType.BF16;
    }

    public static int rowTiles(int rows) {
        return (rows + 15) / 16;
    }

    public static int kTiles(int cols) {
        return (cols + 15) / 16;
    }

    /** Packed size of a {@code rows x cols} matrix. */
    public static long packedBytes(int rows, int cols) {
        return (long) rowTiles(rows) * kTiles(cols) * TILE_BYTES;
    }

    /** Row within its tile of value {@code v} (0..7, a0..a7) of lane {@code lane}'s A fragment. */
    static int fragRow(int lane, int v) {
        return lane / 4 + ((v >> 1) & 1) * 8;
    }

    /** Column within its tile of value {@code v} of lane {@code lane}'s A fragment. */
    static int fragCol(int lane, int v) {
        return 2 * (lane % 4) + (v & 1) + (v >> 2) * 8;
    }

    /** The kernel that multiplies by a packed matrix of this type. */
    public static String kernel(DType type) {
        return switch (type) {
            case F16 -> "pw_gemm_f16";
            case BF16 -> "pw_gemm_bf16";
            // quantized matrices in QuantPacking's row tiles, decoded by quant.cuh inside the same template
            case Q8_0 -> "pw_gemm_q8_0";
            case Q4_0 -> "pw_gemm_q4_0";
            case Q4_K -> "pw_gemm_q4_k";
            case Q5_K -> "pw_gemm_q5_k";
            case Q6_K -> "pw_gemm_q6_k";
            default -> throw new IllegalArgumentException("no tensor-core kernel for " + type + " weights");
        };
    }

    /**
     * Writes packed tiles {@code [firstTile, firstTile + count)} (tile index = rowTile * kTiles + kTile)
     * of {@code t} to {@code dst} from offset 0, reading only the rows those tiles cover: an upload packs
     * a mapped model chunk by chunk into its staging buffer.
     */
    public static void pack(Tensor t, long firstTile, int count, MemorySegment dst) {
        if (!packs(t.type())) {
            throw new IllegalArgumentException("tensor " + t.name() + " is " + t.type() + "; tensor-core packing takes F16 or BF16");
        }
        int kTiles = kTiles(t.cols());
        long tiles = (long) rowTiles(t.rows()) * kTiles;
        if (firstTile < 0 || count < 0 || firstTile + count > tiles) {
            throw new IllegalArgumentException("tiles [" + firstTile + ", " + (firstTile + count) + ") of " + t.name()
                    + ", which has " + tiles);
        }
        if (dst.byteSize() < (long) count * TILE_BYTES) {
            throw new IllegalArgumentException(count + " tiles need " + (long) count * TILE_BYTES + " bytes, the buffer has "
                    + dst.byteSize());
        }
        // 16-row blocks in parallel (a 2.9B model is 5.8 GB to reorder on upload), each read in bulk into a
        // zero-padded buffer and its tiles gathered by a table
        long lastTile = firstTile + count;
        int firstBlock = (int) (firstTile / kTiles);
        int blocks = count == 0 ? 0 : (int) ((lastTile - 1) / kTiles) - firstBlock + 1;
        java.util.stream.IntStream.range(0, blocks).parallel().forEach(b -> {
            int rowTile = firstBlock + b;
            long from = Math.max(firstTile, (long) rowTile * kTiles);
            long to = Math.min(lastTile, (long) (rowTile + 1) * kTiles);
            packBlock(t, rowTile, from, to, dst, (from - firstTile) * TILE_BYTES);
        });
    }

    /** Tiles [from, to) of 16-row block {@code rowTile}, written from {@code at} in {@code dst}. */
    private static void packBlock(Tensor t, int rowTile, long from, long to, MemorySegment dst, long at) {
        int cols = t.cols();
        int kTiles = kTiles(cols);
        int width = kTiles * 16;
        short[] block = new short[16 * width];
        for (int r = 0; r < 16 && rowTile * 16 + r < t.rows(); r++) {
            MemorySegment.copy(t.data(), Tensor.I16_LE, 2L * (rowTile * 16L + r) * cols, block, r * width, cols);
        }
        short[] tileOut = new short[256];
        for (long tile = from; tile < to; tile++) {
            int col0 = (int) (tile % kTiles) * 16;
            for (int j = 0; j < 256; j++) {
                tileOut[j] = block[GATHER_ROW[j] * width + col0 + GATHER_COL[j]];
            }
            MemorySegment.copy(tileOut, 0, dst, Tensor.I16_LE, at + (tile - from) * TILE_BYTES, 256);
        }
    }
}
