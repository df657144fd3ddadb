package dev.pagewarden.core.model.load;

import dev.pagewarden.core.model.safetensors.GenerationConfig;
import dev.pagewarden.core.tokenizer.TextTokenizer;
import dev.pagewarden.core.tokenizer.TokenType;

import java.util.List;
import java.util.OptionalInt;
import java.util.Set;
import java.util.TreeSet;

/**
 * A folder's tokenizer with what its {@code generation_config.json} adds: every {@code eos_token_id}
 * ends generation (transformers stops on each of them), and {@code bos_token_id} is the BOS when
 * {@code tokenizer_config.json} names none. Everything else is the tokenizer's own.
 */
final class GenerationStops implements TextTokenizer {
    private final TextTokenizer tokenizer;
    private final int bos;
    private final Set<Integer> endOfGeneration;

    private GenerationStops(TextTokenizer tokenizer, GenerationConfig generation) {
        this.tokenizer = tokenizer;
        this.bos = tokenizer.bos() >= 0 ? tokenizer.bos() : generation.bos();
        Set<Integer> stops = new TreeSet<>(tokenizer.endOfGeneration());
        stops.addAll(generation.eos());
        this.endOfGeneration = Set.copyOf(stops);
    }

    /** {@code tokenizer} itself when {@code generation} adds nothing. */
    static TextTokenizer of(TextTokenizer tokenizer, GenerationConfig generation) {
        boolean addsBos = tokenizer.bos() < 0 && generation.bos() >= 0;
        boolean addsStops = !tokenizer.endOfGeneration().containsAll(generation.eos());
        return addsBos || addsStops ? new GenerationStops(tokenizer, generation) : tokenizer;
    }

    @Override
    public int vocabSize() {
        return tokenizer.vocabSize();
    }

    @Override
    public String piece(int id) {
        return tokenizer.piece(id);
    }

    @Override
    public TokenType type(int id) {
        return tokenizer.type(id);
    }

    @Override
    public byte[] bytes(int id) {
        return tokenizer.bytes(id);
    }

    @Override
    public int bos() {
        return bos;
    }

    @Override
    public int eos() {
        return tokenizer.eos();
    }

    @Override
    public boolean addBos() {
        return tokenizer.addBos();
    }

    @Override
    public Set<Integer> endOfGeneration() {
        return endOfGeneration;
    }

    @Override
    public OptionalInt id(String piece) {
        return tokenizer.id(piece);
    }

    @Override
    public int[] encode(String text, boolean parseSpecial) {
        return tokenizer.encode(text, parseSpecial);
    }

    @Override
    public int[] encodeSpans(List<Span> spans) {
        return tokenizer.encodeSpans(spans);
    }
}
