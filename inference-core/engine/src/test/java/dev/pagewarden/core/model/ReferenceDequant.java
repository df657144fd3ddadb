package dev.pagewarden.core.model;

import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.ByteOrder;

/**
 * Naive float64 decoding of one element of a ggml-encoded row, written element by element from the
 * block layouts (which byte, which bits, which scale), independently of the engine's block-at-a-time
 * decoder: the oracle for {@link Dequantizer} and the kernels.
 */
public final class ReferenceDequant {
    private ReferenceDequant() {
    }

    private static final ValueLayout.OfShort I16 = ValueLayout.JAVA_SHORT_UNALIGNED.withOrder(ByteOrder.LITTLE_ENDIAN);
    private static final ValueLayout.OfFloat F32 = ValueLayout.JAVA_FLOAT_UNALIGNED.withOrder(ByteOrder.LITTLE_ENDIAN);

    /** Element {@code k} of the row of {@code type} that starts at byte {@code row} of {@code s}. */
    public static double value(DType type, MemorySegment s, long row, int k) {
        int size = type.blockSize();
        long b = row + (long) (k / size) * type.blockBytes();
        int e = k % size;
        return switch (type) {
            case F32 -> s.get(F32, b);
            case F16 -> half(s, b);
            case BF16 -> Float.intBitsToFloat((s.get(I16, b) & 0xffff) << 16);
            case Q8_0 -> half(s, b) * s.get(ValueLayout.JAVA_BYTE, b + 2 + e);
            case Q4_0 -> {
                int q = e < 16 ? u8(s, b + 2 + e) & 15 : u8(s, b + 2 + e - 16) >> 4;
                yield half(s, b) * (q - 8);
            }
            case Q4_K, Q5_K -> {
                int group = e / 64, within = e % 64, l = within % 32;
                int sub = 2 * group + within / 32;
                long qs = b + (type == DType.Q4_K ? 16 : 48);
                int q = within < 32 ? u8(s, qs + 32L * group + l) & 15 : u8(s, qs + 32L * group + l) >> 4;
                if (type == DType.Q5_K) {
                    q += ((u8(s, b + 16 + l) >> sub) & 1) * 16;
                }
                long sc = b + 4;
                int scale, min;
                if (sub < 4) {
                    scale = u8(s, sc + sub) & 63;
                    min = u8(s, sc + sub + 4) & 63;
                } else {
                    scale = (u8(s, sc + sub + 4) & 15) | (u8(s, sc + sub - 4) >> 6) << 4;
                    min = (u8(s, sc + sub + 4) >> 4) | (u8(s, sc + sub) >> 6) << 4;
                }
                yield half(s, b) * scale * q - half(s, b + 2) * min;
            }
            case Q6_K -> {
                int half = e / 128, r = e % 128, quarter = r / 32, l = r % 32;
                int low = u8(s, b + 64L * half + l + (quarter % 2) * 32);
                low = quarter < 2 ? low & 15 : low >> 4;
                int high = (u8(s, b + 128 + 32L * half + l) >> (2 * quarter)) & 3;
                int scale = s.get(ValueLayout.JAVA_BYTE, b + 192 + 8L * half + 2 * quarter + l / 16);
                yield half(s, b + 208) * scale * ((low | high << 4) - 32);
            }
        };
    }

    /** A whole row of {@code n} elements. */
    public static double[] row(DType type, MemorySegment s, long row, int n) {
        double[] out = new double[n];
        for (int k = 0; k < n; k++) {
            out[k] = value(type, s, row, k);
        }
        return out;
    }

    private static int u8(MemorySegment s, long at) {
        return s.get(ValueLayout.JAVA_BYTE, at) & 0xff;
    }

    private static double half(MemorySegment s, long at) {
        return Float.float16ToFloat(s.get(I16, at));
    }
}
