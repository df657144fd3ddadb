package dev.pagewarden.core.model;

import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;

/**
 * Decodes rows of every {@link DType} to fp32 with ggml's formulas, in fp32 arithmetic with one
 * fixed order of operations per value, so that every caller (embedding lookup, the matmul's
 * per-tile decode, tests) sees the same bits for the same block. Only rows are decoded, never a
 * whole model.
 *
 * <p>Block formulas (QK_K = 256 values per super-block):
 * <ul>
 *   <li>Q4_0: {@code d * (q - 8)}; byte j holds value j (low nibble) and value j + 16 (high).</li>
 *   <li>Q4_K: eight sub-blocks of 32, each with a 6-bit scale {@code sc} and min {@code m}:
 *   {@code (d*sc) * q - (dmin*m)}. Byte l of the quants of a 64-value group holds value l (low
 *   nibble) and value l + 32 (high).</li>
 *   <li>Q5_K: Q4_K's with a fifth bit: group g takes bit {@code 2g} (low half) and {@code 2g+1}
 *   (high half) of byte l of {@code qh}.</li>
 *   <li>Q6_K: sixteen sub-blocks of 16 with int8 scales: {@code (d*sc) * (q - 32)}, q's low four
 *   bits from {@code ql}, its high two from {@code qh}, in 128-value halves.</li>
 * </ul>
 */
public final class Dequantizer {
    private Dequantizer() {
    }

    private static final ValueLayout.OfByte B = ValueLayout.JAVA_BYTE;

    /** Decodes {@code n} values ({@code n} a multiple of the block size) at {@code src[off..]} into fp32 at byte {@code at} of {@code dst}. */
    public static void row(DType type, MemorySegment src, long off, int n, MemorySegment dst, long at) {
        int blocks = n / type.blockSize();
        long bb = type.blockBytes();
        int size = type.blockSize();
        for (int i = 0; i < blocks; i++) {
            long o = off + i * bb;
            long d = at + 4L * i * size;
            switch (type) {
                case F32 -> dst.set(Tensor.F32_LE, d, src.get(Tensor.F32_LE, o));
                case F16 -> dst.set(Tensor.F32_LE, d, halfToFloat(src.get(Tensor.I16_LE, o)));
                case BF16 -> dst.set(Tensor.F32_LE, d, Float.intBitsToFloat((src.get(Tensor.I16_LE, o) & 0xffff) << 16));
                case Q8_0 -> q8(src, o, dst, d);
                case Q4_0 -> q40(src, o, dst, d);
                case Q4_K -> q4k(src, o, dst, d);
                case Q5_K -> q5k(src, o, dst, d);
                case Q6_K -> q6k(src, o, dst, d);
            }
        }
    }

    /** {@link #row} into {@code dst[offset ..]}. */
    public static void row(DType type, MemorySegment src, long off, int n, float[] dst, int offset) {
        row(type, src, off, n, MemorySegment.ofArray(dst), 4L * offset);
    }

    /**
     * Element {@code col} of the row at byte {@code row} of {@code src}: the bits {@link #row} gives
     * it, without decoding its whole block (tests and reference code read weights one by one).
     */
    public static float value(DType type, MemorySegment src, long row, int col) {
        int size = type.blockSize();
        long b = row + (long) (col / size) * type.blockBytes();
        int e = col % size;
        return switch (type) {
            case F32 -> src.get(Tensor.F32_LE, b);
            case F16 -> halfToFloat(src.get(Tensor.I16_LE, b));
            case BF16 -> Float.intBitsToFloat((src.get(Tensor.I16_LE, b) & 0xffff) << 16);
            case Q8_0 -> src.get(B, b + 2 + e) * halfToFloat(src.get(Tensor.I16_LE, b));
            case Q4_0 -> {
                int q = u8(src, b + 2 + e % 16);
                yield ((e < 16 ? q & 0xf : q >>> 4) - 8) * halfToFloat(src.get(Tensor.I16_LE, b));
            }
            case Q4_K, Q5_K -> {
                int g = e / 64, l = e % 32, sub = e / 32;
                boolean high = e % 64 >= 32;
                long qs = b + (type == DType.Q4_K ? 16 : 48);
                int q = u8(src, qs + 32L * g + l);
                q = high ? q >>> 4 : q & 0xf;
                if (type == DType.Q5_K) {
                    q |= ((u8(src, b + 16 + l) >>> sub) & 1) << 4;
                }
                float d = halfToFloat(src.get(Tensor.I16_LE, b));
                float dmin = halfToFloat(src.get(Tensor.I16_LE, b + 2));
                yield d * scaleK4(src, b + 4, sub) * q - dmin * minK4(src, b + 4, sub);
            }
            case Q6_K -> {
                int half = e / 128, r = e % 128, quarter = r / 32, l = r % 32;
                int lowByte = u8(src, b + 64L * half + l + 32L * (quarter & 1));
                int low = quarter < 2 ? lowByte & 0xf : lowByte >>> 4;
                int high = (u8(src, b + 128 + 32L * half + l) >>> (2 * quarter)) & 3;
                float d = halfToFloat(src.get(Tensor.I16_LE, b + 208));
                yield d * src.get(B, b + 192 + 8L * half + 2 * quarter + l / 16) * ((low | high << 4) - 32);
            }
        };
    }

    /**
     * fp16 to fp32, exact, NaNs quieted. {@link Float#float16ToFloat} is one F16C instruction once
     * compiled (cheap to inline into a kernel, and no subnormal float operand, which x86 cores
     * handle in a microcode assist of a hundred cycles or more: K-quant scales are often subnormal
     * halves); but it sets a NaN's quiet bit only when compiled, so NaNs are built here, the same
     * bits in every tier.
     */
    public static float halfToFloat(short h) {
        float f = Float.float16ToFloat(h);
        return f == f ? f : Float.intBitsToFloat((h & 0x8000) << 16 | 0x7fc0_0000 | (h & 0x3ff) << 13);
    }

    private static int u8(MemorySegment s, long o) {
        return s.get(B, o) & 0xff;
    }

    private static void q8(MemorySegment s, long o, MemorySegment dst, long at) {
        float d = halfToFloat(s.get(Tensor.I16_LE, o));
        for (int j = 0; j < 32; j++) {
            dst.set(Tensor.F32_LE, at + 4L * j, s.get(B, o + 2 + j) * d);
        }
    }

    private static void q40(MemorySegment s, long o, MemorySegment dst, long at) {
        float d = halfToFloat(s.get(Tensor.I16_LE, o));
        for (int j = 0; j < 16; j++) {
            int q = u8(s, o + 2 + j);
            dst.set(Tensor.F32_LE, at + 4L * j, ((q & 0xf) - 8) * d);
            dst.set(Tensor.F32_LE, at + 4L * (j + 16), ((q >>> 4) - 8) * d);
        }
    }

    /** Scale of sub-block {@code j} (0..7) of the 12 packed 6-bit scale/min bytes at {@code o}. */
    public static int scaleK4(MemorySegment s, long o, int j) {
        return j < 4 ? u8(s, o + j) & 63 : (u8(s, o + j + 4) & 0xf) | (u8(s, o + j - 4) >>> 6) << 4;
    }

    /** Min of sub-block {@code j} (0..7), packed beside the scales. */
    public static int minK4(MemorySegment s, long o, int j) {
        return j < 4 ? u8(s, o + j + 4) & 63 : (u8(s, o + j + 4) >>> 4) | (u8(s, o + j) >>> 6) << 4;
    }

    private static void q4k(MemorySegment s, long o, MemorySegment dst, long at) {
        float d = halfToFloat(s.get(Tensor.I16_LE, o));
        float dmin = halfToFloat(s.get(Tensor.I16_LE, o + 2));
        long sc = o + 4, qs = o + 16;
        for (int g = 0; g < 4; g++) {
            float d1 = d * scaleK4(s, sc, 2 * g), m1 = dmin * minK4(s, sc, 2 * g);
            float d2 = d * scaleK4(s, sc, 2 * g + 1), m2 = dmin * minK4(s, sc, 2 * g + 1);
            for (int l = 0; l < 32; l++) {
                int q = u8(s, qs + 32L * g + l);
                dst.set(Tensor.F32_LE, at + 4L * (64 * g + l), d1 * (q & 0xf) - m1);
                dst.set(Tensor.F32_LE, at + 4L * (64 * g + 32 + l), d2 * (q >>> 4) - m2);
            }
        }
    }

    private static void q5k(MemorySegment s, long o, MemorySegment dst, long at) {
        float d = halfToFloat(s.get(Tensor.I16_LE, o));
        float dmin = halfToFloat(s.get(Tensor.I16_LE, o + 2));
        long sc = o + 4, qh = o + 16, qs = o + 48;
        for (int g = 0; g < 4; g++) {
            float d1 = d * scaleK4(s, sc, 2 * g), m1 = dmin * minK4(s, sc, 2 * g);
            float d2 = d * scaleK4(s, sc, 2 * g + 1), m2 = dmin * minK4(s, sc, 2 * g + 1);
            for (int l = 0; l < 32; l++) {
                int q = u8(s, qs + 32L * g + l);
                int h = u8(s, qh + l);
                int lo = (q & 0xf) | ((h >>> (2 * g)) & 1) << 4;
                int hi = (q >>> 4) | ((h >>> (2 * g + 1)) & 1) << 4;
                dst.set(Tensor.F32_LE, at + 4L * (64 * g + l), d1 * lo - m1);
                dst.set(Tensor.F32_LE, at + 4L * (64 * g + 32 + l), d2 * hi - m2);
            }
        }
    }

    private static void q6k(MemorySegment s, long o, MemorySegment dst, long at) {
        long ql = o, qh = o + 128, sc = o + 192;
        float d = halfToFloat(s.get(Tensor.I16_LE, o + 208));
        for (int half = 0; half < 2; half++) {
            long l0 = ql + 64L * half, h0 = qh + 32L * half, s0 = sc + 8L * half;
            int base = 128 * half;
            for (int l = 0; l < 32; l++) {
                int is = l / 16;
                int a = u8(s, l0 + l), b = u8(s, l0 + l + 32), h = u8(s, h0 + l);
                int q1 = ((a & 0xf) | (h & 3) << 4) - 32;
                int q2 = ((b & 0xf) | ((h >>> 2) & 3) << 4) - 32;
                int q3 = ((a >>> 4) | ((h >>> 4) & 3) << 4) - 32;
                int q4 = ((b >>> 4) | ((h >>> 6) & 3) << 4) - 32;
                dst.set(Tensor.F32_LE, at + 4L * (base + l), d * s.get(B, s0 + is) * q1);
                dst.set(Tensor.F32_LE, at + 4L * (base + l + 32), d * s.get(B, s0 + is + 2) * q2);
                dst.set(Tensor.F32_LE, at + 4L * (base + l + 64), d * s.get(B, s0 + is + 4) * q3);
                dst.set(Tensor.F32_LE, at + 4L * (base + l + 96), d * s.get(B, s0 + is + 6) * q4);
            }
        }
    }
}
