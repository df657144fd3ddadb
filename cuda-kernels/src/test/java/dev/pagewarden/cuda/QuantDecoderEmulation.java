package dev.pagewarden.cuda;

import dev.pagewarden.core.model.DType;
import dev.pagewarden.core.model.Dequantizer;

import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.ByteOrder;

/**
 * The decoders of {@code quant.cuh} in Java, statement for statement: the row-tile stride and part
 * offsets, the same loads at the same indices, the same fp32 operations in the same order
 * (Java float arithmetic never fuses, as {@code __fmul_rn}/{@code __fsub_rn} do not), rounded to fp16
 * to nearest even as {@code __float2half_rn}. Returns a lane's four fragment registers.
 */
final class QuantDecoderEmulation {
    private static final ValueLayout.OfInt U32 = ValueLayout.JAVA_INT_UNALIGNED.withOrder(ByteOrder.LITTLE_ENDIAN);
    private static final ValueLayout.OfShort U16 = ValueLayout.JAVA_SHORT_UNALIGNED.withOrder(ByteOrder.LITTLE_ENDIAN);

    private QuantDecoderEmulation() {
    }

    /** Bytes of a row tile over kTiles ({@code pw_q_tile}'s stride in each decoder). */
    static long stride(DType type, int kTiles) {
        return (long) kTiles * switch (type) {
            case Q8_0 -> 272;
            case Q4_0 -> 144;
            case Q4_K -> 148;
            case Q5_K -> 180;
            case Q6_K -> 210;
            default -> throw new IllegalArgumentException(type.name());
        };
    }

    private static int u32(MemorySegment w, long at) {
        return w.get(U32, at);
    }

    private static int u16(MemorySegment w, long at) {
        return w.get(U16, at) & 0xffff;
    }

    private static int u8(MemorySegment w, long at) {
        return w.get(ValueLayout.JAVA_BYTE, at) & 0xff;
    }

    private static float f16(int bits) {
        return Dequantizer.halfToFloat((short) bits);
    }

    private static int h(float v) {
        return Float.floatToFloat16(v) & 0xffff;
    }

    private static int pack(float lo, float hi) {
        return h(lo) | h(hi) << 16;
    }

    /** {@code DecXxx{w, kTiles}.frag(rowTile, kTile, lane, a)}. */
    static int[] frag(DType type, MemorySegment w, int kTiles, int rowTile, int kTile, int lane) {
        int g = lane >> 2;
        long p = rowTile * stride(type, kTiles);
        long t = (long) kTile * 32 + lane;
        long k = kTiles;
        int[] a = new int[4];
        switch (type) {
            case Q8_0 -> {
                int ux = u32(w, p + t * 8);
                int uy = u32(w, p + t * 8 + 4);
                int s = u32(w, p + k * 256 + ((kTile >> 1) * 8 + g) * 4L);
                float[] d = {f16(s), f16(s >>> 16)};
                for (int r = 0; r < 4; r++) {
                    int word = r < 2 ? ux : uy;
                    int sh = 16 * (r & 1);
                    float q0 = (byte) (word >>> sh);
                    float q1 = (byte) (word >>> (sh + 8));
                    a[r] = pack(q0 * d[r & 1], q1 * d[r & 1]);
                }
            }
            case Q4_0 -> {
                int u = u32(w, p + t * 4);
                int s = u32(w, p + k * 128 + ((kTile >> 1) * 8 + g) * 4L);
                float[] d = {f16(s), f16(s >>> 16)};
                for (int r = 0; r < 4; r++) {
                    float q0 = ((u >>> (8 * r)) & 15) - 8;
                    float q1 = ((u >>> (8 * r + 4)) & 15) - 8;
                    a[r] = pack(q0 * d[r & 1], q1 * d[r & 1]);
                }
            }
            case Q4_K, Q5_K -> {
                boolean five = type == DType.Q5_K;
                int u = u32(w, p + t * 4);
                int hb = five ? u8(w, p + k * 128 + t) : 0;
                long sm = p + k * (five ? 160 : 128);
                long dm = p + k * (five ? 176 : 144);
                int s = u32(w, sm + ((kTile >> 1) * 8 + g) * 4L);
                long x = dm + ((kTile >> 4) * 8 + g) * 8L;
                int xx = u32(w, x);
                int xy = u32(w, x + 4);
                float[] dd = {f16(xx) * (float) (s & 0xff), f16(xy) * (float) ((s >>> 16) & 0xff)};
                float[] mm = {f16(xx >>> 16) * (float) ((s >>> 8) & 0xff), f16(xy >>> 16) * (float) (s >>> 24)};
                for (int r = 0; r < 4; r++) {
                    int q0 = (u >>> (8 * r)) & 15 | ((hb >>> (2 * r)) & 1) << 4;
                    int q1 = (u >>> (8 * r + 4)) & 15 | ((hb >>> (2 * r + 1)) & 1) << 4;
                    a[r] = pack(dd[r & 1] * (float) q0 - mm[r & 1], dd[r & 1] * (float) q1 - mm[r & 1]);
                }
            }
            case Q6_K -> {
                int u = u32(w, p + t * 4);
                int hb = u16(w, p + k * 128 + t * 2);
                int s = u16(w, p + k * 192 + ((long) kTile * 8 + g) * 2);
                int dd = u32(w, p + k * 208 + ((kTile >> 4) * 8 + g) * 4L);
                float[] ds = {f16(dd) * (float) (byte) s, f16(dd >>> 16) * (float) (byte) (s >>> 8)};
                for (int r = 0; r < 4; r++) {
                    int q0 = (((u >>> (8 * r)) & 15) | ((hb >>> (4 * r)) & 3) << 4) - 32;
                    int q1 = (((u >>> (8 * r + 4)) & 15) | ((hb >>> (4 * r + 2)) & 3) << 4) - 32;
                    a[r] = pack(ds[r & 1] * (float) q0, ds[r & 1] * (float) q1);
                }
            }
            default -> throw new IllegalArgumentException(type.name());
        }
        return a;
    }
}
