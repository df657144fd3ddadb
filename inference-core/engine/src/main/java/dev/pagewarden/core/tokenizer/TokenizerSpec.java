package dev.pagewarden.core.tokenizer;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * Everything a model file says about its tokenizer, in GGUF's terms: {@code tokenizer.ggml.model}
 * ({@code gpt2} for byte-level BPE, {@code llama} for SentencePiece), the pieces as stored, their
 * types, SentencePiece scores, BPE merges ({@code "left right"}), the pre-tokenizer and the special
 * ids. Both the GGUF reader and the {@code tokenizer.json} loader produce one.
 *
 * @param model          {@code gpt2} or {@code llama}
 * @param pieces         raw vocabulary string per id
 * @param types          token type per id
 * @param scores         SentencePiece merge score per id, higher first (null for BPE)
 * @param merges         BPE merges in rank order, each {@code "left right"}; SentencePiece from
 *                       {@code tokenizer.json} merges by them too, from GGUF (none) by the scores
 * @param preTokenizer   BPE split regexes in {@code tokenizer.json} syntax (empty for SentencePiece)
 * @param bos            BOS id or -1
 * @param eos            EOS id or -1
 * @param eot            end-of-turn id or -1
 * @param addBos         whether prompts start with BOS
 * @param addSpacePrefix SentencePiece: a space in front of text at the start and after a special token
 * @param ignoreMerges   BPE: a whole pre-token found in the vocabulary is taken as is (Llama 3)
 * @param nfc            normalise text to NFC first (Qwen's {@code tokenizer.json} says so)
 * @param metaspace      SentencePiece from {@code tokenizer.json} with a {@code Metaspace} pre-tokenizer: its
 *                       rule for the leading {@code ▁} replaces {@code addSpacePrefix}'s; null otherwise
 */
public record TokenizerSpec(String model, List<String> pieces, TokenType[] types, float[] scores,
                            List<String> merges, List<String> preTokenizer, int bos, int eos, int eot,
                            boolean addBos, boolean addSpacePrefix, boolean ignoreMerges, boolean nfc,
                            Metaspace metaspace) {
    /**
     * Hugging Face's {@code Metaspace} pre-tokenizer: spaces become {@code ▁}; a {@code ▁} goes in front
     * of text not starting with one, in front of the first text only ({@code first}: not after an
     * added token that opens the input), of every text ({@code always}) or of none; {@code split}
     * cuts the text in front of every {@code ▁}, so no merge crosses a word start.
     */
    public record Metaspace(Prepend prepend, boolean split) {
        public enum Prepend { FIRST, ALWAYS, NEVER }

        public Metaspace {
            if (prepend == null) {
                throw new IllegalArgumentException("Metaspace prepend scheme is null");
            }
        }
    }

    /** Without a {@code Metaspace} rule: GGUF's tokenizers and byte-level BPE. */
    public TokenizerSpec(String model, List<String> pieces, TokenType[] types, float[] scores,
                         List<String> merges, List<String> preTokenizer, int bos, int eos, int eot,
                         boolean addBos, boolean addSpacePrefix, boolean ignoreMerges, boolean nfc) {
        this(model, pieces, types, scores, merges, preTokenizer, bos, eos, eot, addBos, addSpacePrefix, ignoreMerges,
                nfc, null);
    }

    /** Spellings llama.cpp also treats as end of generation when the vocabulary has them. */
    private static final Set<String> END_OF_TURN_SPELLINGS = Set.of("<|eot_id|>", "<|im_end|>", "<|end|>",
            "<end_of_turn>", "<|endoftext|>", "<|end_of_text|>", "<EOT>", "<|eom_id|>");

    public TokenizerSpec {
        pieces = List.copyOf(pieces);
        types = types.clone();
        scores = scores == null ? null : scores.clone();
        merges = List.copyOf(merges);
        preTokenizer = List.copyOf(preTokenizer);
        if (pieces.isEmpty()) {
            throw new IllegalArgumentException("tokenizer has an empty vocabulary");
        }
        if (types.length != pieces.size()) {
            throw new IllegalArgumentException("tokenizer has " + types.length + " token types for "
                    + pieces.size() + " tokens");
        }
        if (scores != null && scores.length != pieces.size()) {
            throw new IllegalArgumentException("tokenizer has " + scores.length + " scores for "
                    + pieces.size() + " tokens");
        }
        requireId("BOS", bos, pieces.size());
        requireId("EOS", eos, pieces.size());
        requireId("EOT", eot, pieces.size());
        if (metaspace != null && !model.equals("llama")) {
            throw new IllegalArgumentException("a Metaspace pre-tokenizer belongs to a SentencePiece (llama) tokenizer");
        }
        if (!model.equals("gpt2") && !model.equals("llama")) {
            throw new IllegalArgumentException("tokenizer model '" + model + "' is not supported (supported: gpt2, llama)");
        }
    }

    private static void requireId(String what, int id, int n) {
        if (id < -1 || id >= n) {
            throw new IllegalArgumentException(what + " id " + id + " is out of range for a vocabulary of " + n + " tokens");
        }
    }

    /**
     * The split regexes llama.cpp applies for each {@code tokenizer.ggml.pre} name (one after
     * another), in {@code tokenizer.json} syntax; names sharing a regex set share a row. The first
     * name of a row is the one written. {@code gpt2} is what earlier versions of this writer wrote
     * (llama.cpp knows only {@code gpt-2}).
     */
    private static final List<Map.Entry<List<String>, List<String>>> GGUF_PRE = List.of(
            Map.entry(List.of("llama-bpe", "llama3", "llama-v3", "dbrx", "smaug-bpe"), List.of(PreTokenizer.LLAMA3)),
            Map.entry(List.of("qwen2", "stablelm2"), List.of(PreTokenizer.QWEN2)),
            Map.entry(List.of("gpt-2", "gpt2", "mpt", "olmo"), List.of(PreTokenizer.GPT2)),
            Map.entry(List.of("smollm", "starcoder", "refact", "command-r"), List.of("\\p{N}", PreTokenizer.GPT2)),
            Map.entry(List.of("default"), List.of("[\\p{P}\\$\\+<=>\\^~\\|]+", PreTokenizer.GPT2, "\\p{N}+",
                    "[0-9][0-9][0-9]")),
            Map.entry(List.of("falcon"), List.of("[\\p{P}\\$\\+<=>\\^~\\|`]+", PreTokenizer.GPT2, "[0-9][0-9][0-9]")));

    /**
     * The pre-tokenizer regexes of a GGUF {@code tokenizer.ggml.pre} name.
     *
     * @throws IllegalArgumentException for a name not known here, naming it and the known ones
     */
    public static List<String> preTokenizerOf(String ggufPre) {
        for (Map.Entry<List<String>, List<String>> e : GGUF_PRE) {
            if (e.getKey().contains(ggufPre)) {
                return e.getValue();
            }
        }
        throw new IllegalArgumentException("tokenizer.ggml.pre '" + ggufPre + "' is not supported (supported: "
                + String.join(", ", GGUF_PRE.stream().flatMap(e -> e.getKey().stream()).toList()) + ")");
    }

    /**
     * GGUF's {@code tokenizer.ggml.pre} name for this BPE pre-tokenizer ({@code llama-bpe},
     * {@code qwen2}, {@code gpt-2}, {@code smollm}, {@code default}, {@code falcon}).
     *
     * @throws IllegalArgumentException for a pre-tokenizer GGUF has no name for here
     */
    public String ggufPre() {
        List<String> regexes = preTokenizer.isEmpty() ? List.of(PreTokenizer.GPT2) : preTokenizer;
        for (Map.Entry<List<String>, List<String>> e : GGUF_PRE) {
            if (e.getValue().equals(regexes)) {
                return e.getKey().getFirst();
            }
        }
        throw new IllegalArgumentException("no GGUF tokenizer.ggml.pre name for the pre-tokenizer " + preTokenizer
                + " (known: " + String.join(", ", GGUF_PRE.stream().map(e -> e.getKey().getFirst()).toList()) + ")");
    }

    public TextTokenizer build() {
        return model.equals("gpt2") ? new BpeTokenizer(this) : new SpmTokenizer(this);
    }

    /** EOS, EOT and the control tokens spelled as a known end of turn. */
    Set<Integer> endOfGeneration() {
        List<Integer> ids = new ArrayList<>();
        if (eos >= 0) {
            ids.add(eos);
        }
        if (eot >= 0) {
            ids.add(eot);
        }
        for (int id = 0; id < pieces.size(); id++) {
            if (types[id] == TokenType.CONTROL && END_OF_TURN_SPELLINGS.contains(pieces.get(id))) {
                ids.add(id);
            }
        }
        return Set.copyOf(ids);
    }
}
