package dev.pagewarden.core.tokenizer;

import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;

/**
 * Test oracle: llama2.c's encode transcribed as plainly as possible (linear piece search, full
 * rescan of all pairs per merge), to check the production tokenizer's faster merge loop against.
 * Assumes the standard layout (byte piece id = byte + 3), as llama2.c does.
 */
final class NaiveEncoder {
    private NaiveEncoder() {
    }

    static int[] encode(Vocabulary v, String text, boolean bos, boolean eos) {
        List<Integer> out = new ArrayList<>();
        if (bos) {
            out.add(v.bosId());
        }
        if (!text.isEmpty()) {
            out.add(lookup(v, " "));
        }
        text.codePoints().forEach(cp -> {
            String ch = Character.toString(cp);
            int id = lookup(v, ch);
            if (id >= 0) {
                out.add(id);
            } else {
                for (byte b : ch.getBytes(StandardCharsets.UTF_8)) {
                    out.add((b & 0xFF) + 3);
                }
            }
        });
        while (true) {
            float best = -1e10f;
            int bestId = -1;
            int bestIdx = -1;
            for (int i = 0; i + 1 < out.size(); i++) {
                int id = lookup(v, v.tokens().get(out.get(i)) + v.tokens().get(out.get(i + 1)));
                if (id >= 0 && v.scores()[id] > best) {
                    best = v.scores()[id];
                    bestId = id;
                    bestIdx = i;
                }
            }
            if (bestIdx < 0) {
                break;
            }
            out.set(bestIdx, bestId);
            out.remove(bestIdx + 1);
        }
        if (eos) {
            out.add(v.eosId());
        }
        return out.stream().mapToInt(Integer::intValue).toArray();
    }

    private static int lookup(Vocabulary v, String piece) {
        return v.tokens().indexOf(piece);
    }
}
