package dev.pagewarden.core.model.gguf;

import dev.pagewarden.core.model.DType;

import java.nio.ByteBuffer;

/** Encodes one row of floats into GGUF's tensor encodings (the buffer must be little-endian). */
final class RowEncoder {
    private RowEncoder() {
    }

    static void encode(DType type, float[] row, ByteBuffer dst) {
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
