package dev.pagewarden.core.tokenizer;

import java.util.OptionalInt;
import java.util.Set;

/**
 * A model's own tokenizer (byte-level BPE or SentencePiece, from GGUF metadata or a Hugging Face
 * {@code tokenizer.json}).
 *
 * <p>Special tokens are an injection surface: text a user typed must never turn into control
 * tokens. So {@link #encode(String, boolean)} takes the choice explicitly; a chat template encodes
 * the spans it owns with special parsing on and user content with it off. With it off, control
 * tokens such as {@code <|im_end|>} or {@code <|eot_id|>} are read as plain text, as llama.cpp does;
 * user-defined added tokens (a vocabulary's non-special additions, such as Qwen's {@code <think>})
 * are still matched, again as llama.cpp does.
 */
public interface TextTokenizer {
    int vocabSize();

    /** The raw vocabulary string of {@code id} (byte-level or {@code ▁} spelling, as stored). */
    String piece(int id);

    TokenType type(int id);

    /** The UTF-8 bytes {@code id} stands for in text; a control token stands for its own spelling. */
    byte[] bytes(int id);

    /** Beginning-of-sequence id, or -1 when the vocabulary has none. */
    int bos();

    /** End-of-sequence id, or -1 when the vocabulary has none. */
    int eos();

    /** Whether the model expects BOS in front of a prompt ({@code add_bos_token}). */
    boolean addBos();

    /** Ids that end a generated turn: EOS, EOT and the vocabulary's own end-of-turn tokens. */
    Set<Integer> endOfGeneration();

    /** The id whose raw vocabulary string is {@code piece}, if any. */
    OptionalInt id(String piece);

    /** Encodes {@code text} without BOS; added tokens are split out as described above. */
    int[] encode(String text, boolean parseSpecial);

    /**
     * A piece of a rendered prompt: text the template wrote ({@code special}: its control tokens are
     * matched) or text a user wrote (control-token spellings stay text).
     */
    record Span(String text, boolean special) {
        public Span {
            if (text == null) {
                throw new NullPointerException("span text is null");
            }
        }
    }

    /**
     * Encodes a rendered prompt given as spans, without BOS: control tokens are matched only inside
     * template spans, and the text between tokens is encoded as one piece across span boundaries,
     * so a prompt without look-alikes in user spans encodes exactly as {@code encode(whole, true)}.
     */
    int[] encodeSpans(java.util.List<Span> spans);

    /** {@link #encode(String, boolean)} with BOS in front when {@code bos} and the vocabulary has one. */
    default int[] encode(String text, boolean bos, boolean parseSpecial) {
        int[] body = encode(text, parseSpecial);
        if (!bos || bos() < 0) {
            return body;
        }
        int[] out = new int[body.length + 1];
        out[0] = bos();
        System.arraycopy(body, 0, out, 1, body.length);
        return out;
    }

    /** A decoder for one stream of generated tokens; control tokens print nothing. */
    default Utf8StreamDecoder streamDecoder() {
        return new Utf8StreamDecoder(this, false);
    }

    /** The text of a whole token sequence, control tokens left out. */
    default String decode(int[] tokens) {
        Utf8StreamDecoder d = streamDecoder();
        StringBuilder sb = new StringBuilder();
        for (int t : tokens) {
            sb.append(d.accept(t));
        }
        return sb.append(d.finish()).toString();
    }
}
