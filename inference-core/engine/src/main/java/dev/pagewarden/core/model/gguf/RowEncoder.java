package dev.pagewarden.core.model.gguf;

import dev.pagewarden.core.model.DType;

import java.nio.ByteBuffer;

/**
 * Encodes one row of floats into GGUF's tensor encodings (the buffer must be little-endian); F32, F16
 * and BF16 are also safetensors' encodings.
 */
public final class RowEncoder {
    private RowEncoder() {
    }

    public static void encode(DType type, float[] row, ByteBuffer dst) {
        switch (type) {
            case F32 -> {
                dst.asFloatBuffer().put(row);
                dst.position(dst.position() + 4 * row.length);
            }
            case F16 -> {
                for (float v : row) {
                    dst.putShort(Float.floatToFloat16(v));
                }
            }
            case Q8_0 -> {
                for (int b = 0; b < row.length; b += 32) {
                    encodeQ8Block(row, b, dst);
                }
            }
            case BF16 -> {
                for (float v : row) {
                    dst.putShort(toBf16(v));
                }
            }
            case Q4_0 -> {
                for (int b = 0; b < row.length; b += 32) {
                    encodeQ40Block(row, b, dst);
                }
            }
            case Q4_K, Q5_K, Q6_K -> {
                float[] x = new float[KQuants.QK];
                for (int b = 0; b < row.length; b += KQuants.QK) {
                    System.arraycopy(row, b, x, 0, KQuants.QK);
                    switch (type) {
                        case Q4_K -> KQuants.q4k(x, dst);
                        case Q5_K -> KQuants.q5k(x, dst);
                        default -> KQuants.q6k(x, dst);
                    }
                }
            }
        }
    }

    /** fp32 to bfloat16, rounding to nearest even; NaNs stay NaN (quiet). */
    static short toBf16(float v) {
        int u = Float.floatToRawIntBits(v);
        if ((u & 0x7fff_ffff) > 0x7f80_0000) {
            return (short) ((u >>> 16) | 64);
        }
        return (short) ((u + (0x7fff + ((u >>> 16) & 1))) >>> 16);
    }

    /**
     * ggml's Q4_0: d = m / -8 where m is the value of largest magnitude (with its sign), then
     * q = min(15, trunc(x / d + 8.5)); value j in the low nibble of byte j, j + 16 in the high one.
     */
    private static void encodeQ40Block(float[] row, int start, ByteBuffer dst) {
        float amax = 0f, max = 0f;
        for (int i = start; i < start + 32; i++) {
            if (Math.abs(row[i]) > amax) {
                amax = Math.abs(row[i]);
                max = row[i];
            }
        }
        float d = max / -8f;
        float id = d != 0f ? 1f / d : 0f;
        dst.putShort(Float.floatToFloat16(d));
        for (int j = 0; j < 16; j++) {
            int lo = Math.min(15, (byte) (int) (row[start + j] * id + 8.5f));
            int hi = Math.min(15, (byte) (int) (row[start + 16 + j] * id + 8.5f));
            dst.put((byte) (lo | hi << 4));
        }
    }

    /**
     * ggml's Q8_0: scale d = max|x| / 127 stored as fp16, then round(x / d) as int8 with halves rounded
     * away from zero, the way ggml's reference quantiser does it.
     */
    private static void encodeQ8Block(float[] row, int start, ByteBuffer dst) {
        float amax = 0f;
        for (int i = start; i < start + 32; i++) {
            amax = Math.max(amax, Math.abs(row[i]));
        }
        float d = amax / 127f;
        float id = d != 0f ? 1f / d : 0f;
        dst.putShort(Float.floatToFloat16(d));
        for (int i = start; i < start + 32; i++) {
            float v = row[i] * id;
            long q = Math.round(Math.abs(v));
            dst.put((byte) (v < 0 ? -q : q));
        }
    }
}
