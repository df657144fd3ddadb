package dev.pagewarden.core.tokenizer;

import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

import java.util.HashMap;
import java.util.List;
import java.util.Map;

import static dev.pagewarden.core.tokenizer.LenmlOracle.show;
import static dev.pagewarden.core.tokenizer.LenmlOracle.toList;
import static org.assertj.core.api.Assertions.assertThat;

/**
 * Byte-level BPE loaded from the real Llama 3 and Qwen3 {@code tokenizer.json}, checked against
 * those packages' own encoder over {@link TokenizerCorpus}: user text (control tokens read as text),
 * template text (control tokens matched), NFD input and one long text.
 */
class LenmlTokenizerOracleTest {
    static final Map<String, TextTokenizer> TOKENIZERS = new HashMap<>();
    /** Oracle ids per model: [user text, template text, NFD, long]. */
    static final Map<String, List<List<List<Integer>>>> ORACLE = new HashMap<>();

    @BeforeAll
    static void load() throws Exception {
        LenmlOracle.require("LenmlTokenizerOracleTest");
        for (String model : List.of("llama3", "qwen3")) {
            TOKENIZERS.put(model, HfTokenizer.load(LenmlOracle.modelDir(model)).build());
            ORACLE.put(model, LenmlOracle.encode(model, List.of(
                    new LenmlOracle.Job(false, TokenizerCorpus.TEXTS),
                    new LenmlOracle.Job(true, TokenizerCorpus.TEXTS),
                    new LenmlOracle.Job(false, TokenizerCorpus.decomposed()),
                    new LenmlOracle.Job(false, List.of(TokenizerCorpus.longText())))));
        }
    }

    @ParameterizedTest
    @ValueSource(strings = {"llama3", "qwen3"})
    void userTextEncodesAsTheOracleDoesWithControlTokensOff(String model) {
        assertSame(model, TokenizerCorpus.TEXTS, false, ORACLE.get(model).get(0));
    }

    @ParameterizedTest
    @ValueSource(strings = {"llama3", "qwen3"})
    void templateTextEncodesAsTheOracleDoesWithSpecialParsing(String model) {
        assertSame(model, TokenizerCorpus.TEXTS, true, ORACLE.get(model).get(1));
    }

    @ParameterizedTest
    @ValueSource(strings = {"llama3", "qwen3"})
    void decomposedTextEncodesAsTheOracleDoes(String model) {
        assertThat(TokenizerCorpus.decomposed()).isNotEmpty();
        assertSame(model, TokenizerCorpus.decomposed(), false, ORACLE.get(model).get(2));
    }

    @ParameterizedTest
    @ValueSource(strings = {"llama3", "qwen3"})
    void longTextEncodesAsTheOracleDoes(String model) {
        assertSame(model, List.of(TokenizerCorpus.longText()), false, ORACLE.get(model).get(3));
    }

    static void assertSame(String model, List<String> texts, boolean special, List<List<Integer>> expected) {
        TextTokenizer tok = TOKENIZERS.get(model);
        for (int i = 0; i < texts.size(); i++) {
            assertThat(toList(tok.encode(texts.get(i), special)))
                    .as("%s, special %s, text %d %s", model, special, i, show(texts.get(i)))
                    .isEqualTo(expected.get(i));
        }
    }
}
