package dev.pagewarden.core.tokenizer;

import java.nio.charset.StandardCharsets;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * SentencePiece (Llama 2, Mistral, TinyLlama), from GGUF ({@code tokenizer.ggml.model = llama}) the
 * way llama.cpp tokenizes it, or from a SentencePiece-converted {@code tokenizer.json} the way
 * Hugging Face does: added tokens split out first; each text fragment gets a space in front when it
 * starts the text or follows an added token ({@code add_space_prefix}, or the {@code Metaspace}
 * rule); spaces become {@code ▁}; then the text's characters merge pair by pair, the pair whose
 * concatenation is the highest-scoring piece first (GGUF) or the pair earliest in the merge list
 * ({@code tokenizer.json}), ties leftmost; a symbol left that is no piece comes out as its
 * {@code <0xNN>} byte pieces. Immutable and thread-safe.
 */
public final class SpmTokenizer extends VocabTokenizer {
    private static final String SPACE = "\u2581";

    private final int[] byteIds = new int[256];
    private final TokenizerSpec.Metaspace metaspace;
    private final PairMerge.Priority priority;

    SpmTokenizer(TokenizerSpec spec) {
        if (spec.scores() == null) {
            throw new IllegalArgumentException("SentencePiece tokenizer has no scores");
        }
        super(spec);
        for (int b = 0; b < 256; b++) {
            byteIds[b] = ids.getOrDefault(String.format("<0x%02X>", b), -1);
        }
        metaspace = spec.metaspace();
        if (spec.merges().isEmpty()) { // GGUF: the joined piece with the highest score merges first
            priority = (l, r) -> {
                Integer id = ids.get(l + r);
                return id == null ? Double.NaN : -spec.scores()[id];
            };
        } else { // tokenizer.json: the merge list's order, as Hugging Face's BPE model does
            Map<String, Integer> ranks = HashMap.newHashMap(spec.merges().size());
            for (int r = 0; r < spec.merges().size(); r++) {
                ranks.putIfAbsent(spec.merges().get(r), r);
            }
            priority = (l, r) -> {
                Integer rank = ranks.get(l + " " + r);
                return rank == null ? Double.NaN : rank;
            };
        }
    }

    @Override
    public byte[] bytes(int id) {
        String p = piece(id);
        TokenType t = spec.types()[id];
        if (t == TokenType.BYTE && p.length() == 6 && p.startsWith("<0x") && p.endsWith(">")) {
            return new byte[]{(byte) Integer.parseInt(p.substring(3, 5), 16)};
        }
        if (t == TokenType.CONTROL) {
            return p.getBytes(StandardCharsets.UTF_8);
        }
        return p.replace(SPACE, " ").getBytes(StandardCharsets.UTF_8);
    }

    @Override
    int[] encode(List<AddedTokens.Fragment> fragments) {
        IntList out = new IntList();
        boolean first = true;
        boolean prevAdded = true; // the text's start counts as following an added token
        for (AddedTokens.Fragment f : fragments) {
            if (f.isToken()) {
                out.add(f.id());
                first = false;
                prevAdded = true;
                continue;
            }
            String text = f.text().replace(" ", SPACE);
            if (prefixed(text, first, prevAdded)) {
                text = SPACE + text;
            }
            if (metaspace != null && metaspace.split()) {
                for (int from = 0, at; from < text.length(); from = at) { // each word keeps the ▁ in front of it
                    at = text.indexOf(SPACE, from + 1);
                    at = at < 0 ? text.length() : at;
                    encodeFragment(text.substring(from, at), out);
                }
            } else {
                encodeFragment(text, out);
            }
            first = false;
            prevAdded = false;
        }
        return out.toArray();
    }

    /** Whether a text fragment gets a ▁ in front: llama.cpp's add_space_prefix, or the Metaspace rule. */
    private boolean prefixed(String text, boolean first, boolean prevAdded) {
        if (metaspace == null) {
            return spec.addSpacePrefix() && prevAdded;
        }
        return !text.startsWith(SPACE) && switch (metaspace.prepend()) {
            case ALWAYS -> true;
            case FIRST -> first;
            case NEVER -> false;
        };
    }

    private void encodeFragment(String text, IntList out) {
        String[] chars = new String[text.codePointCount(0, text.length())];
        for (int i = 0, at = 0; i < chars.length; i++) {
            int cp = text.codePointAt(at);
            if (Character.isSurrogate((char) cp)) {
                throw new IllegalArgumentException("cannot encode text: unpaired surrogate U+"
                        + Integer.toHexString(cp).toUpperCase() + " has no UTF-8 form");
            }
            chars[i] = Character.toString(cp);
            at += Character.charCount(cp);
        }
        for (String symbol : PairMerge.merge(chars, priority)) {
            Integer id = ids.get(symbol);
            if (id != null) {
                out.add(id);
                continue;
            }
            for (byte b : symbol.getBytes(StandardCharsets.UTF_8)) { // byte fallback
                int byteId = byteIds[b & 0xFF];
                if (byteId < 0) {
                    throw new IllegalArgumentException("cannot encode '" + symbol + "': the vocabulary has neither "
                            + "that piece nor the byte-fallback piece " + String.format("<0x%02X>", b & 0xFF));
                }
                out.add(byteId);
            }
        }
    }
}
