package dev.pagewarden.core.tokenizer;

import java.util.List;

/**
 * A SentencePiece-style vocabulary as llama2.c's {@code tokenizer.bin} and GGUF's
 * {@code tokenizer.ggml.*} metadata carry it. Token pieces use "▁"-free llama2.c spelling:
 * a leading ASCII space marks a word start, and byte-fallback tokens are spelled {@code <0xNN>}.
 *
 * @param tokens     piece per token id
 * @param scores     merge score per token id (higher merges first)
 * @param bosId      beginning-of-sequence token id
 * @param eosId      end-of-sequence token id
 */
public record Vocabulary(List<String> tokens, float[] scores, int bosId, int eosId) {
    public Vocabulary {
        tokens = List.copyOf(tokens);
        if (scores.length != tokens.size()) {
            throw new IllegalArgumentException("scores (" + scores.length + ") and tokens (" + tokens.size() + ") differ in length");
        }
    }

    public int size() {
        return tokens.size();
    }
}
