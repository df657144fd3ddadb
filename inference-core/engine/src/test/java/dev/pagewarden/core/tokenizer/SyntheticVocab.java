package dev.pagewarden.core.tokenizer;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * Builds small vocabularies for tests. The standard layout mirrors llama2.c's: {@code <unk> <s> </s>}
 * at 0..2, the 256 byte pieces at 3..258, then the extra pieces from 259 on, in insertion order.
 */
final class SyntheticVocab {
    static final int FIRST_EXTRA = 259;

    private final Map<String, Float> extras = new LinkedHashMap<>();
    private boolean bytesFirst = true;
    private boolean withBytes = true;

    SyntheticVocab piece(String piece, float score) {
        extras.put(piece, score);
        return this;
    }

    /** Puts the byte pieces after the extras instead of before them. */
    SyntheticVocab bytesLast() {
        bytesFirst = false;
        return this;
    }

    SyntheticVocab noBytes() {
        withBytes = false;
        return this;
    }

    Vocabulary build() {
        List<String> tokens = new ArrayList<>(List.of("<unk>", "<s>", "</s>"));
        List<Float> scores = new ArrayList<>(List.of(0f, 0f, 0f));
        if (bytesFirst) {
            addBytes(tokens, scores);
        }
        extras.forEach((p, s) -> {
            tokens.add(p);
            scores.add(s);
        });
        if (!bytesFirst) {
            addBytes(tokens, scores);
        }
        float[] s = new float[scores.size()];
        for (int i = 0; i < s.length; i++) {
            s[i] = scores.get(i);
        }
        return new Vocabulary(tokens, s, 1, 2);
    }

    Tokenizer tokenizer() {
        return new Tokenizer(build());
    }

    private void addBytes(List<String> tokens, List<Float> scores) {
        if (!withBytes) {
            return;
        }
        for (int b = 0; b < 256; b++) {
            tokens.add(String.format("<0x%02X>", b));
            scores.add(0f);
        }
    }
}
