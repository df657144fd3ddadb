package dev.pagewarden.core.tokenizer;

import java.nio.charset.StandardCharsets;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.OptionalInt;
import java.util.PriorityQueue;
import java.util.Set;

/**
 * SentencePiece from GGUF ({@code tokenizer.ggml.model = llama}: Llama 2, Mistral, TinyLlama) the
 * way llama.cpp tokenizes it: added tokens split out first; each text fragment gets a space in
 * front when it starts the text or follows an added token ({@code add_space_prefix}); spaces become
 * {@code ▁}; then the text's characters merge pair by pair, the pair whose concatenation is the
 * highest-scoring piece first (ties: leftmost); a symbol left that is no piece comes out as its
 * {@code <0xNN>} byte pieces. Immutable and thread-safe.
 */
public final class SpmTokenizer implements TextTokenizer {
    private static final String SPACE = "\u2581";

    private final TokenizerSpec spec;
    private final Map<String, Integer> ids;
    private final int[] byteIds = new int[256];
    private final AddedTokens added;
    private final Set<Integer> endOfGeneration;

    SpmTokenizer(TokenizerSpec spec) {
        this.spec = spec;
        if (spec.scores() == null) {
            throw new IllegalArgumentException("SentencePiece tokenizer has no scores");
        }
        ids = HashMap.newHashMap(spec.pieces().size());
        for (int id = 0; id < spec.pieces().size(); id++) {
            ids.putIfAbsent(spec.pieces().get(id), id);
        }
        for (int b = 0; b < 256; b++) {
            byteIds[b] = ids.getOrDefault(String.format("<0x%02X>", b), -1);
        }
        added = new AddedTokens(spec.pieces(), spec.types());
        endOfGeneration = spec.endOfGeneration();
    }

    @Override
    public int vocabSize() {
        return spec.pieces().size();
    }

    @Override
    public String piece(int id) {
        check(id);
        return spec.pieces().get(id);
    }

    @Override
    public TokenType type(int id) {
        check(id);
        return spec.types()[id];
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
    public int bos() {
        return spec.bos();
    }

    @Override
    public int eos() {
        return spec.eos();
    }

    @Override
    public boolean addBos() {
        return spec.addBos();
    }

    @Override
    public Set<Integer> endOfGeneration() {
        return endOfGeneration;
    }

    @Override
    public OptionalInt id(String piece) {
        Integer id = ids.get(piece);
        return id == null ? OptionalInt.empty() : OptionalInt.of(id);
    }

    @Override
    public int[] encode(String text, boolean parseSpecial) {
        if (text == null) {
            throw new NullPointerException("text to encode is null");
        }
        return encode(added.split(text, parseSpecial));
    }

    @Override
    public int[] encodeSpans(List<Span> spans) {
        return encode(added.split(spans));
    }

    private int[] encode(List<AddedTokens.Fragment> fragments) {
        BpeTokenizer.IntList out = new BpeTokenizer.IntList();
        boolean prevSpecial = true; // the text's start counts as following a special token
        for (AddedTokens.Fragment f : fragments) {
            if (f.isToken()) {
                out.add(f.id());
                prevSpecial = true;
                continue;
            }
            String s = (spec.addSpacePrefix() && prevSpecial ? " " : "") + f.text();
            encodeFragment(s.replace(" ", SPACE), out);
            prevSpecial = false;
        }
        return out.toArray();
    }

    private void encodeFragment(String text, BpeTokenizer.IntList out) {
        int n = text.codePointCount(0, text.length());
        String[] sym = new String[n];
        int[] next = new int[n];
        int[] prev = new int[n];
        int[] version = new int[n];
        for (int i = 0, at = 0; i < n; i++) {
            int cp = text.codePointAt(at);
            if (Character.isSurrogate((char) cp)) {
                throw new IllegalArgumentException("cannot encode text: unpaired surrogate U+"
                        + Integer.toHexString(cp).toUpperCase() + " has no UTF-8 form");
            }
            sym[i] = Character.toString(cp);
            at += Character.charCount(cp);
            next[i] = i + 1 < n ? i + 1 : -1;
            prev[i] = i - 1;
        }
        record Pair(float score, int left, int right, int lv, int rv, int merged) {
        }
        PriorityQueue<Pair> queue = new PriorityQueue<>((a, b) -> a.score != b.score
                ? (a.score > b.score ? -1 : 1) : Integer.compare(a.left, b.left));
        java.util.function.BiConsumer<Integer, Integer> offer = (l, r) -> {
            Integer id = ids.get(sym[l] + sym[r]);
            if (id != null) {
                queue.add(new Pair(spec.scores()[id], l, r, version[l], version[r], id));
            }
        };
        for (int i = 0; i + 1 < n; i++) {
            offer.accept(i, i + 1);
        }
        while (!queue.isEmpty()) {
            Pair p = queue.poll();
            if (version[p.left] != p.lv || version[p.right] != p.rv) {
                continue;
            }
            sym[p.left] = sym[p.left] + sym[p.right];
            version[p.left]++;
            version[p.right] = -1;
            int after = next[p.right];
            next[p.left] = after;
            if (after >= 0) {
                prev[after] = p.left;
                offer.accept(p.left, after);
            }
            if (prev[p.left] >= 0) {
                offer.accept(prev[p.left], p.left);
            }
        }
        for (int i = n == 0 ? -1 : 0; i >= 0; i = next[i]) {
            Integer id = ids.get(sym[i]);
            if (id != null) {
                out.add(id);
                continue;
            }
            for (byte b : sym[i].getBytes(StandardCharsets.UTF_8)) { // byte fallback
                int byteId = byteIds[b & 0xFF];
                if (byteId < 0) {
                    throw new IllegalArgumentException("cannot encode '" + sym[i] + "': the vocabulary has neither "
                            + "that piece nor the byte-fallback piece " + String.format("<0x%02X>", b & 0xFF));
                }
                out.add(byteId);
            }
        }
    }

    private void check(int id) {
        if (id < 0 || id >= spec.pieces().size()) {
            throw new IllegalArgumentException("token id " + id + " is out of range for a vocabulary of "
                    + spec.pieces().size() + " tokens");
        }
    }
}
