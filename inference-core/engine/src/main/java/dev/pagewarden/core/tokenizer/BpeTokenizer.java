package dev.pagewarden.core.tokenizer;

import java.nio.charset.StandardCharsets;
import java.text.Normalizer;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * Byte-level BPE (GPT-2, Llama 3, Qwen): added tokens split out first, then the pre-tokenizer regex,
 * then each piece's UTF-8 bytes mapped to GPT-2's printable characters and merged pair by pair,
 * lowest merge rank first (ties: leftmost), as llama.cpp and Hugging Face tokenizers both do.
 * Immutable and thread-safe.
 */
public final class BpeTokenizer extends VocabTokenizer {
    /** Merge rank keyed by {@code "left right"}; byte-level pieces never hold a real space. */
    private final Map<String, Integer> ranks;
    private final PreTokenizer pre;

    BpeTokenizer(TokenizerSpec spec) {
        if (spec.merges().isEmpty()) {
            throw new IllegalArgumentException("byte-level BPE tokenizer has no merges");
        }
        super(spec);
        ranks = HashMap.newHashMap(spec.merges().size());
        for (int r = 0; r < spec.merges().size(); r++) {
            String m = spec.merges().get(r);
            int sp = m.indexOf(' ');
            if (sp <= 0 || sp == m.length() - 1 || m.indexOf(' ', sp + 1) >= 0) {
                throw new IllegalArgumentException("BPE merge " + r + " '" + m + "' is not two pieces separated by one space");
            }
            ranks.putIfAbsent(m, r);
        }
        pre = new PreTokenizer(spec.preTokenizer().isEmpty() ? List.of(PreTokenizer.GPT2) : spec.preTokenizer());
    }

    @Override
    public byte[] bytes(int id) {
        String p = piece(id);
        if (spec.types()[id].isAdded()) {
            return p.getBytes(StandardCharsets.UTF_8); // added tokens are stored as plain text
        }
        byte[] b = ByteLevel.decode(p);
        return b != null ? b : p.getBytes(StandardCharsets.UTF_8);
    }

    @Override
    int[] encode(List<AddedTokens.Fragment> fragments) {
        IntList out = new IntList();
        for (AddedTokens.Fragment f : fragments) {
            if (f.isToken()) {
                out.add(f.id());
                continue;
            }
            String s = spec.nfc() ? Normalizer.normalize(f.text(), Normalizer.Form.NFC) : f.text();
            for (String word : pre.split(s)) {
                encodeWord(ByteLevel.encode(requireUtf8(word)), out);
            }
        }
        return out.toArray();
    }

    private static String requireUtf8(String s) {
        for (int i = 0; i < s.length(); i++) {
            char c = s.charAt(i);
            if (Character.isSurrogate(c)) {
                if (Character.isHighSurrogate(c) && i + 1 < s.length() && Character.isLowSurrogate(s.charAt(i + 1))) {
                    i++;
                    continue;
                }
                throw new IllegalArgumentException("cannot encode text: unpaired surrogate U+"
                        + Integer.toHexString(c).toUpperCase() + " has no UTF-8 form");
            }
        }
        return s;
    }

    private void encodeWord(String word, IntList out) {
        if (spec.ignoreMerges()) {
            Integer whole = ids.get(word);
            if (whole != null) {
                out.add(whole);
                return;
            }
        }
        for (String symbol : merge(word)) {
            Integer id = ids.get(symbol);
            if (id != null) {
                out.add(id);
                continue;
            }
            for (int i = 0; i < symbol.length(); i++) { // no such piece: its single bytes, as llama.cpp does
                Integer b = ids.get(String.valueOf(symbol.charAt(i)));
                if (b == null) {
                    throw new IllegalArgumentException("cannot encode byte-level piece '" + symbol
                            + "': the vocabulary lacks '" + symbol.charAt(i) + "'");
                }
                out.add(b);
            }
        }
    }

    /** The word's byte-level characters merged, lowest merge rank first. */
    String[] merge(String word) {
        String[] chars = new String[word.length()]; // byte-level characters are all in the BMP: one char each
        for (int i = 0; i < chars.length; i++) {
            chars[i] = String.valueOf(word.charAt(i));
        }
        return PairMerge.merge(chars, (l, r) -> {
            Integer rank = ranks.get(l + " " + r);
            return rank == null ? Double.NaN : rank;
        });
    }
}
