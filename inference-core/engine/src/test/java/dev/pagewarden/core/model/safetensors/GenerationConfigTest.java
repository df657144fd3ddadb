package dev.pagewarden.core.model.safetensors;

import dev.pagewarden.core.model.ModelFormatException;
import dev.pagewarden.core.model.load.LoadedModel;
import dev.pagewarden.core.model.load.ModelLoader;
import dev.pagewarden.core.testing.TinyBpeTokenizer;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Files;
import java.nio.file.Path;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * {@code generation_config.json}: each {@code eos_token_id} (one id or a list, as transformers reads it)
 * ends generation; {@code bos_token_id} is the BOS when the tokenizer's config names none.
 */
class GenerationConfigTest {
    @TempDir
    Path dir;

    private Path folder(String generationConfig) throws Exception {
        Path f = TinyHfModel.random(HfFolderTest.config("qwen3"), "qwen3", "F32", 4).writeFolder(dir.resolve("m"), 1);
        TinyBpeTokenizer.write(f);
        if (generationConfig != null) {
            Files.writeString(f.resolve(GenerationConfig.FILE), generationConfig);
        }
        return f;
    }

    @Test
    void withoutTheFileTheTokenizerDecides() throws Exception {
        try (LoadedModel m = ModelLoader.load(folder(null), null)) {
            // EOS of tokenizer_config.json, and <|im_end|> by its end-of-turn spelling
            assertThat(m.tokenizer().endOfGeneration())
                    .containsExactlyInAnyOrder(TinyBpeTokenizer.END_OF_TEXT, TinyBpeTokenizer.IM_END);
            assertThat(m.tokenizer().bos()).isEqualTo(-1);
        }
    }

    @Test
    void everyEosIdInTheListEndsGenerationAndItsBosFillsIn() throws Exception {
        try (LoadedModel m = ModelLoader.load(folder("{\"bos_token_id\": 300, \"eos_token_id\": [310, 311], "
                + "\"temperature\": 0.6, \"do_sample\": true}"), null)) {
            assertThat(m.tokenizer().endOfGeneration()).containsExactlyInAnyOrder(TinyBpeTokenizer.END_OF_TEXT,
                    TinyBpeTokenizer.IM_END, 310, 311);
            assertThat(m.tokenizer().bos()).isEqualTo(300);
            assertThat(m.tokenizer().addBos()).isFalse();
            assertThat(m.tokenizer().encode("hello", false)).isNotEmpty();
        }
        try (LoadedModel m = ModelLoader.load(folder("{\"eos_token_id\": 320}"), null)) {
            assertThat(m.tokenizer().endOfGeneration()).contains(320);
            assertThat(m.tokenizer().bos()).isEqualTo(-1);
        }
    }

    @Test
    void badFilesAreRefusedWithTheReason() {
        assertThatThrownBy(() -> ModelLoader.load(folder("{\"eos_token_id\": 9999}"), null))
                .isInstanceOf(ModelFormatException.class).hasMessageContaining(GenerationConfig.FILE)
                .hasMessageContaining("token id 9999 lies outside the 512 tokens");
        assertThatThrownBy(() -> ModelLoader.load(folder("{\"eos_token_id\": [\"</s>\"]}"), null))
                .isInstanceOf(ModelFormatException.class)
                .hasMessageContaining("eos_token_id should be a token id or a list of token ids");
        assertThatThrownBy(() -> ModelLoader.load(folder("{\"eos_token_id\": "), null))
                .isInstanceOf(ModelFormatException.class).hasMessageContaining("not valid JSON");
    }

    @Test
    void writtenFilesReadBack() throws Exception {
        new GenerationConfig(1, java.util.List.of(2, 7)).write(dir);
        assertThat(GenerationConfig.read(dir)).isEqualTo(new GenerationConfig(1, java.util.List.of(2, 7)));
        new GenerationConfig(-1, java.util.List.of(5)).write(dir);
        assertThat(Files.readString(dir.resolve(GenerationConfig.FILE))).doesNotContain("bos").contains("\"eos_token_id\" : 5");
        assertThat(GenerationConfig.read(dir.resolve("nowhere"))).isEqualTo(GenerationConfig.NONE);
    }
}
