package dev.pagewarden.core.tokenizer;

import java.io.ByteArrayOutputStream;
import java.nio.charset.StandardCharsets;

/**
 * GPT-2's byte-to-unicode map: every byte gets a printable character, so byte-level BPE vocabularies
 * are plain strings. Printable Latin-1 bytes map to themselves, the other 68 to U+0100 upwards in
 * byte order (space becomes {@code Ġ}, newline {@code Ċ}).
 */
final class ByteLevel {
    private static final char[] BYTE_TO_CHAR = new char[256];
    private static final int[] CHAR_TO_BYTE = new int[324];

    static {
        java.util.Arrays.fill(CHAR_TO_BYTE, -1);
        int next = 256;
        for (int b = 0; b < 256; b++) {
            boolean printable = (b >= '!' && b <= '~') || (b >= 0xA1 && b <= 0xAC) || (b >= 0xAE && b <= 0xFF);
            char c = printable ? (char) b : (char) next++;
            BYTE_TO_CHAR[b] = c;
            CHAR_TO_BYTE[c] = b;
        }
    }

    private ByteLevel() {
    }

    static String encode(String text) {
        byte[] utf8 = text.getBytes(StandardCharsets.UTF_8);
        char[] out = new char[utf8.length];
        for (int i = 0; i < utf8.length; i++) {
            out[i] = BYTE_TO_CHAR[utf8[i] & 0xFF];
        }
        return new String(out);
    }

    /** The bytes a byte-level string stands for, or null when it holds a character outside the map. */
    static byte[] decode(String piece) {
        ByteArrayOutputStream out = new ByteArrayOutputStream(piece.length());
        for (int i = 0; i < piece.length(); i++) {
            char c = piece.charAt(i);
            int b = c < CHAR_TO_BYTE.length ? CHAR_TO_BYTE[c] : -1;
            if (b < 0) {
                return null;
            }
            out.write(b);
        }
        return out.toByteArray();
    }
}
