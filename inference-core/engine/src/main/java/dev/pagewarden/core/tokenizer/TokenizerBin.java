package dev.pagewarden.core.tokenizer;

import dev.pagewarden.core.model.ModelFormatException;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;

/** Reads llama2.c's {@code tokenizer.bin}: int32 max_token_length, then per token float score, int32 length, bytes. */
public final class TokenizerBin {
    /** llama2.c's fixed special ids. */
    public static final int BOS = 1;
    public static final int EOS = 2;

    private TokenizerBin() {
    }

    public static Vocabulary read(Path file) {
        byte[] bytes;
        try {
            bytes = Files.readAllBytes(file);
        } catch (IOException e) {
            throw new ModelFormatException(file + ": cannot read tokenizer file: " + e.getMessage(), e);
        }
        ByteBuffer buf = ByteBuffer.wrap(bytes).order(ByteOrder.LITTLE_ENDIAN);
        if (buf.remaining() < 4) {
            throw new ModelFormatException(file + ": truncated tokenizer file (" + bytes.length + " bytes)");
        }
        int maxLen = buf.getInt();
        if (maxLen <= 0 || maxLen > 1 << 16) {
            throw new ModelFormatException(file + ": not a llama2.c tokenizer: max_token_length " + maxLen);
        }
        List<String> tokens = new ArrayList<>();
        List<Float> scores = new ArrayList<>();
        while (buf.hasRemaining()) {
            if (buf.remaining() < 8) {
                throw new ModelFormatException(file + ": truncated at token " + tokens.size());
            }
            float score = buf.getFloat();
            int len = buf.getInt();
            if (len < 0 || len > maxLen || len > buf.remaining()) {
                throw new ModelFormatException(file + ": token " + tokens.size() + " has bad length " + len);
            }
            byte[] piece = new byte[len];
            buf.get(piece);
            tokens.add(new String(piece, StandardCharsets.UTF_8));
            scores.add(score);
        }
        float[] s = new float[scores.size()];
        for (int i = 0; i < s.length; i++) {
            s[i] = scores.get(i);
        }
        return new Vocabulary(tokens, s, BOS, EOS);
    }
}
