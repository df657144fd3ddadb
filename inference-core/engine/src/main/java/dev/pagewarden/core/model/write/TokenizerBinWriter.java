package dev.pagewarden.core.model.write;

import dev.pagewarden.core.tokenizer.Vocabulary;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;

/** Writes a vocabulary as llama2.c's tokenizer.bin (the format {@code TokenizerBin} reads). */
public final class TokenizerBinWriter {
    private TokenizerBinWriter() {
    }

    public static void write(Vocabulary vocab, Path out) throws IOException {
        List<byte[]> pieces = new ArrayList<>(vocab.size());
        int maxLen = 1;
        long size = 4;
        for (String t : vocab.tokens()) {
            byte[] b = t.getBytes(StandardCharsets.UTF_8);
            pieces.add(b);
            maxLen = Math.max(maxLen, b.length);
            size += 8 + b.length;
        }
        ByteBuffer buf = ByteBuffer.allocate(Math.toIntExact(size)).order(ByteOrder.LITTLE_ENDIAN);
        buf.putInt(maxLen);
        for (int i = 0; i < pieces.size(); i++) {
            buf.putFloat(vocab.scores()[i]).putInt(pieces.get(i).length).put(pieces.get(i));
        }
        Files.write(out, buf.array());
    }
}
