package dev.pagewarden.core.tokenizer;

import java.util.Arrays;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.OptionalInt;
import java.util.Set;

/**
 * What the two model tokenizers share: the vocabulary of a {@link TokenizerSpec} with its id lookup,
 * the added tokens split out before the model's own splitting, and the special ids. Subclasses
 * encode the text fragments between added tokens their own way.
 */
abstract sealed class VocabTokenizer implements TextTokenizer permits BpeTokenizer, SpmTokenizer {
    final TokenizerSpec spec;
    /** Id of each piece (the first id where a piece repeats). */
    final Map<String, Integer> ids;
    private final AddedTokens added;
    private final Set<Integer> endOfGeneration;

    VocabTokenizer(TokenizerSpec spec) {
        this.spec = spec;
        ids = HashMap.newHashMap(spec.pieces().size());
        for (int id = 0; id < spec.pieces().size(); id++) {
            ids.putIfAbsent(spec.pieces().get(id), id);
        }
        added = new AddedTokens(spec.pieces(), spec.types());
        endOfGeneration = spec.endOfGeneration();
    }

    /** Encodes the fragments {@link AddedTokens} split the input into, in order. */
    abstract int[] encode(List<AddedTokens.Fragment> fragments);

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

    private void check(int id) {
        if (id < 0 || id >= spec.pieces().size()) {
            throw new IllegalArgumentException("token id " + id + " is out of range for a vocabulary of "
                    + spec.pieces().size() + " tokens");
        }
    }

    /** A growable int array. */
    static final class IntList {
        private int[] a = new int[16];
        private int n;

        void add(int v) {
            if (n == a.length) {
                a = Arrays.copyOf(a, n * 2);
            }
            a[n++] = v;
        }

        int size() {
            return n;
        }

        int[] toArray() {
            return Arrays.copyOf(a, n);
        }
    }
}
