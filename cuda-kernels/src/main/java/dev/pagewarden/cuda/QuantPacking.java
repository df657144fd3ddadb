package dev.pagewarden.cuda;

import dev.pagewarden.core.model.DType;
import dev.pagewarden.core.model.Dequantizer;
import dev.pagewarden.core.model.Tensor;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.ByteOrder;
import java.util.EnumSet;
import java.util.Locale;
import java.util.Set;
import java.util.stream.IntStream;

/**
 * Quantized GGUF matrices repacked for the tensor-core GEMM's decoders ({@code quant.cuh}): per 16 x 16
 * tile, each lane's eight fragment values stored together (one load per lane, a warp's loads one
 * contiguous run), scales stored per pair of rows (g, g + 8), the two a lane needs. Rows are padded with
 * zero bytes to a multiple of 16. The matrix is row tile after row tile, each {@link Layout#stride()}
 * bytes holding its parts one after another; so a range of row tiles is one contiguous range of bytes,
 * and a matrix is packed and uploaded a few row tiles at a time, straight from the mapped file.
 *
 * <p>Bytes per weight: Q8_0 1.0625, Q4_0 0.5625, Q6_K 0.8203 (as in GGUF); Q4_K 0.5781 (GGUF
 * 0.5625) and Q5_K 0.7031 (GGUF 0.6875), their 6-bit sub-block scales and mins stored as bytes.
 */
public final class QuantPacking {
    private static final ValueLayout.OfInt U32 = ValueLayout.JAVA_INT_UNALIGNED.withOrder(ByteOrder.LITTLE_ENDIAN);
    private static final ValueLayout.OfLong U64 = ValueLayout.JAVA_LONG_UNALIGNED.withOrder(ByteOrder.LITTLE_ENDIAN);

    private QuantPacking() {
    }

    /** Types the decoders of {@code quant.cuh} read. */
    public static final Set<DType> TYPES = EnumSet.of(DType.Q8_0, DType.Q4_0, DType.Q4_K, DType.Q5_K, DType.Q6_K);

    /**
     * A packed {@code rows x cols} matrix: row tile {@code rt} at byte {@code rt * stride}, its part
     * {@code p} at {@code offsets[p]} within it; {@code quant.cuh} computes the same from kTiles.
     */
    public record Layout(DType type, int rows, int cols, long[] offsets, long stride) {
        public int rowTiles() {
            return (rows + 15) / 16;
        }

        public int kTiles() {
            return cols / 16;
        }

        public long bytes() {
            return rowTiles() * stride;
        }

        /** Bytes read per weight (the padding rows of the last row tile left out). */
        public double bytesPerWeight() {
            return stride / (16.0 * cols);
        }
    }

    public static Layout layout(DType type, int rows, int cols) {
        if (!TYPES.contains(type)) {
            throw new IllegalArgumentException("no GPU tile decoder for " + type + " (decoders: " + TYPES + ")");
        }
        int block = type.blockSize();
        if (rows <= 0 || cols <= 0 || cols % block != 0) {
            throw new IllegalArgumentException(type + " matrix " + rows + "x" + cols + ": the row length must be a positive multiple of " + block);
        }
        long k = cols / 16;
        // bytes per row tile of each part, in order (quant.cuh's comments)
        long[] sizes = switch (type) {
            case Q8_0 -> new long[] {256 * k, 16 * k};
            case Q4_0 -> new long[] {128 * k, 16 * k};
            case Q4_K -> new long[] {128 * k, 16 * k, 4 * k};
            case Q5_K -> new long[] {128 * k, 32 * k, 16 * k, 4 * k};
            case Q6_K -> new long[] {128 * k, 64 * k, 16 * k, 2 * k};
            default -> throw new AssertionError(type);
        };
        long[] offsets = new long[sizes.length];
        long at = 0;
        for (int p = 0; p < sizes.length; p++) {
            offsets[p] = at;
            at += sizes[p];
        }
        return new Layout(type, rows, cols, offsets, at);
    }

    /** The {@code pw_unpack_tiles_*} kernel of a type (quant.cu). */
    static String unpackKernel(DType type) {
        layout(type, 1, 256); // refuses types without a decoder
        return "pw_unpack_tiles_" + type.name().toLowerCase(Locale.ROOT);
    }

    /** A whole matrix packed into one new segment of {@link Layout#bytes()} (tests and small matrices). */
    public static MemorySegment pack(Tensor t, Arena arena) {
        Layout l = layout(t.type(), t.rows(), t.cols());
        MemorySegment out = arena.allocate(l.bytes(), 256);
        pack(t, 0, l.rowTiles(), out);
        return out;
    }

    /**
     * Packs row tiles {@code [from, to)} into the first {@code (to - from) * stride} bytes of {@code dst},
     * overwriting them (zero where rows are padding). Row tiles are packed in parallel, each into its
     * own bytes, so the result does not depend on the threads.
     */
    public static void pack(Tensor t, int from, int to, MemorySegment dst) {
        Layout l = layout(t.type(), t.rows(), t.cols());
        if (from < 0 || to > l.rowTiles() || from > to) {
            throw new IllegalArgumentException("row tiles [" + from + ", " + to + ") of " + l.rowTiles());
        }
        long need = (to - from) * l.stride();
        if (dst.byteSize() < need) {
            throw new IllegalArgumentException("destination holds " + dst.byteSize() + " bytes, row tiles [" + from + ", "
                    + to + ") need " + need);
        }
        IntStream.range(from, to).parallel().forEach(rt -> packRowTile(t, l, rt, dst.asSlice((rt - from) * l.stride(), l.stride())));
    }

    private static void packRowTile(Tensor t, Layout l, int rt, MemorySegment tile) {
        tile.fill((byte) 0);
        long[] o = l.offsets();
        int[][] q = new int[16][t.cols()]; // padding rows stay zero
        for (int r = 0; r < Math.min(16, t.rows() - 16 * rt); r++) {
            quants(t, 16 * rt + r, q[r]);
            scales(t, 16 * rt + r, l.kTiles(), tile, o, r % 8, r / 8);
        }
        int[] v = new int[8];
        for (int kt = 0; kt < l.kTiles(); kt++) {
            for (int lane = 0; lane < 32; lane++) {
                // fragment value i of the lane: register i / 2 (row g, g + 8, g, g + 8), half i % 2
                for (int i = 0; i < 8; i++) {
                    v[i] = q[lane / 4 + 8 * ((i >> 1) & 1)][16 * kt + 2 * (lane % 4) + (i & 1) + 8 * (i >> 2)];
                }
                long frag = (long) kt * 32 + lane;
                int low = 0;
                int high = 0;
                for (int i = 0; i < 8; i++) {
                    low |= (v[i] & 15) << (4 * i);
                    high |= t.type() == DType.Q6_K ? (v[i] >> 4) << (2 * i) : (v[i] >> 4) << i;
                }
                switch (t.type()) {
                    case Q8_0 -> {
                        long bytes = 0;
                        for (int i = 0; i < 8; i++) {
                            bytes |= (v[i] & 0xffL) << (8 * i);
                        }
                        tile.set(U64, frag * 8, bytes);
                    }
                    case Q4_0, Q4_K -> tile.set(U32, frag * 4, low);
                    case Q5_K -> {
                        tile.set(U32, frag * 4, low);
                        tile.set(ValueLayout.JAVA_BYTE, o[1] + frag, (byte) high);
                    }
                    case Q6_K -> {
                        tile.set(U32, frag * 4, low);
                        tile.set(Tensor.I16_LE, o[1] + frag * 2, (short) high);
                    }
                    default -> throw new AssertionError(t.type());
                }
            }
        }
    }

    private static int u8(MemorySegment s, long at) {
        return s.get(ValueLayout.JAVA_BYTE, at) & 0xff;
    }

    /** The stored (unsigned, before any offset) quant of every value of a row; Q8_0's as the signed byte. */
    private static void quants(Tensor t, int row, int[] q) {
        MemorySegment s = t.data();
        long base = row * t.rowBytes();
        long bb = t.type().blockBytes();
        for (int col = 0; col < t.cols(); col++) {
            long b = base + (long) (col / t.type().blockSize()) * bb;
            int e = col % t.type().blockSize();
            q[col] = switch (t.type()) {
                case Q8_0 -> s.get(ValueLayout.JAVA_BYTE, b + 2 + e);
                case Q4_0 -> e < 16 ? u8(s, b + 2 + e) & 15 : u8(s, b + 2 + e - 16) >>> 4;
                case Q4_K, Q5_K -> {
                    int g = e / 64;
                    int l = e % 32;
                    long qs = b + (t.type() == DType.Q4_K ? 16 : 48);
                    int v = u8(s, qs + 32L * g + l);
                    v = e % 64 >= 32 ? v >>> 4 : v & 15;
                    yield t.type() == DType.Q5_K ? v | ((u8(s, b + 16 + l) >>> (e / 32)) & 1) << 4 : v;
                }
                case Q6_K -> {
                    int half = e / 128;
                    int quarter = e % 128 / 32;
                    int l = e % 32;
                    int low = u8(s, b + 64L * half + l + 32L * (quarter & 1));
                    low = quarter < 2 ? low & 15 : low >>> 4;
                    yield low | ((u8(s, b + 128 + 32L * half + l) >>> (2 * quarter)) & 3) << 4;
                }
                default -> throw new AssertionError(t.type());
            };
        }
    }

    /** One row's scales, at the row's slot of its pair (g, g + 8) in the scale parts of its row tile. */
    private static void scales(Tensor t, int row, int kTiles, MemorySegment dst, long[] o, int g, int upper) {
        MemorySegment s = t.data();
        long base = row * t.rowBytes();
        long bb = t.type().blockBytes();
        switch (t.type()) {
            case Q8_0, Q4_0 -> {
                for (int blk = 0; blk < kTiles / 2; blk++) {
                    dst.set(Tensor.I16_LE, o[1] + ((long) blk * 8 + g) * 4 + 2 * upper, s.get(Tensor.I16_LE, base + blk * bb));
                }
            }
            case Q4_K, Q5_K -> {
                long sm = o[o.length - 2];
                long dm = o[o.length - 1];
                for (int sb = 0; sb < kTiles / 16; sb++) {
                    long at = base + sb * bb;
                    long x = dm + ((long) sb * 8 + g) * 8 + 4 * upper;
                    dst.set(Tensor.I16_LE, x, s.get(Tensor.I16_LE, at));
                    dst.set(Tensor.I16_LE, x + 2, s.get(Tensor.I16_LE, at + 2));
                    for (int j = 0; j < 8; j++) {
                        long sub = sm + ((long) (8 * sb + j) * 8 + g) * 4 + 2 * upper;
                        dst.set(ValueLayout.JAVA_BYTE, sub, (byte) Dequantizer.scaleK4(s, at + 4, j));
                        dst.set(ValueLayout.JAVA_BYTE, sub + 1, (byte) Dequantizer.minK4(s, at + 4, j));
                    }
                }
            }
            case Q6_K -> {
                for (int sb = 0; sb < kTiles / 16; sb++) {
                    long at = base + sb * bb;
                    dst.set(Tensor.I16_LE, o[3] + ((long) sb * 8 + g) * 4 + 2 * upper, s.get(Tensor.I16_LE, at + 208));
                    for (int j = 0; j < 16; j++) {
                        dst.set(ValueLayout.JAVA_BYTE, o[2] + ((long) (16 * sb + j) * 8 + g) * 2 + upper,
                                s.get(ValueLayout.JAVA_BYTE, at + 192 + j));
                    }
                }
            }
            default -> throw new AssertionError(t.type());
        }
    }
}
