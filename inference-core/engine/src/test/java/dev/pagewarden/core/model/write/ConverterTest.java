package dev.pagewarden.core.model.write;

import dev.pagewarden.core.model.DType;
import dev.pagewarden.core.model.LlamaTensors;
import dev.pagewarden.core.model.RowSource;
import dev.pagewarden.core.model.load.LoadedModel;
import dev.pagewarden.core.model.load.ModelLoader;
import dev.pagewarden.core.model.gguf.GgufFile;
import dev.pagewarden.core.model.gguf.GgufReader;
import dev.pagewarden.core.testing.TestModels;
import dev.pagewarden.core.testing.TinyBpeTokenizer;
import dev.pagewarden.core.testing.WeightChecks;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

import java.lang.foreign.Arena;
import java.nio.file.Path;
import java.util.Map;
import java.util.TreeMap;

import static org.assertj.core.api.Assertions.assertThat;

/** Converting the real stories260K checkpoint to GGUF keeps every weight and the vocabulary. */
class ConverterTest {
    @TempDir
    Path dir;

    @ParameterizedTest
    @EnumSource(DType.class)
    void stories260KToGguf(DType dtype) throws Exception {
        Path gguf = dir.resolve("stories260K-" + dtype + ".gguf");
        Converter.convert(TestModels.stories260K(), TestModels.tok512(), gguf, dtype, total -> done -> { });
        try (LoadedModel src = ModelLoader.load(TestModels.stories260K(), TestModels.tok512());
             LoadedModel out = ModelLoader.load(gguf, null)) {
            assertThat(out.format()).isEqualTo("gguf");
            assertThat(out.config()).isEqualTo(src.config());
            // f32: WeightChecks compares raw bits, so this asserts bit-identical tensors
            long compared = WeightChecks.assertMatches(out.weights(),
                    slot -> RowSource.of(LlamaTensors.tensor(src.weights(), slot)));
            assertThat(compared).isEqualTo(src.config().parameterCount());
            GeneratedModelRoundTripTest.assertSameVocabulary(out.vocabulary(), src.vocabulary());
            assertThat(out.vocabulary().tokens()).contains(" the");   // llama2.c spacing survives "▁" in the file
        }
    }

    @Test
    void ggufInputCanBeReencoded() throws Exception {
        Path f32 = dir.resolve("a.gguf");
        Path q8 = dir.resolve("b.gguf");
        Converter.convert(TestModels.stories260K(), TestModels.tok512(), f32, DType.F32, total -> done -> { });
        Converter.convert(f32, null, q8, DType.Q8_0, total -> done -> { });
        try (LoadedModel a = ModelLoader.load(f32, null); LoadedModel b = ModelLoader.load(q8, null)) {
            WeightChecks.assertMatches(b.weights(), slot -> RowSource.of(LlamaTensors.tensor(a.weights(), slot)));
            assertThat(b.weights().layers().getFirst().wq().type()).isEqualTo(DType.Q8_0);
        }
    }

    /**
     * A GGUF with a byte-level BPE tokenizer and a chat template (a Hugging Face folder converted
     * first) re-encoded to Q8_0 keeps every tokenizer key, so it tokenizes, renders and stops alike.
     */
    @Test
    void ggufInputKeepsItsByteLevelTokenizerAndTemplate() throws Exception {
        Path folder = dir.resolve("tiny-folder");
        ModelGenerator.generateHfFolder(ModelShape.parse("dim=64,hidden=128,layers=1,heads=4,vocab="
                + TinyBpeTokenizer.SIZE + ",seq=64").forArchitecture("qwen3", null).config(), "qwen3", DType.F32, 3,
                folder, total -> done -> { });
        TinyBpeTokenizer.write(folder);
        Path f32 = dir.resolve("bpe.gguf");
        Path q8 = dir.resolve("bpe-q8.gguf");
        Converter.convert(folder, null, f32, DType.F32, total -> done -> { });
        Converter.convert(f32, null, q8, DType.Q8_0, total -> done -> { });
        try (Arena arena = Arena.ofConfined()) {
            Map<String, Object> before = tokenizerKeys(GgufReader.read(f32, arena));
            assertThat(before).containsKeys("tokenizer.ggml.model", "tokenizer.ggml.merges", "tokenizer.chat_template");
            assertThat(tokenizerKeys(GgufReader.read(q8, arena))).isEqualTo(before);
        }
        try (LoadedModel a = ModelLoader.load(f32, null); LoadedModel b = ModelLoader.load(q8, null)) {
            String text = "Hello <|im_end|> wörld  \t 12345";
            assertThat(b.tokenizer().encode(text, true)).containsExactly(a.tokenizer().encode(text, true));
            assertThat(b.tokenizer().endOfGeneration()).isEqualTo(a.tokenizer().endOfGeneration());
            assertThat(b.chatTemplate().source()).isEqualTo(a.chatTemplate().source());
            assertThat(b.weights().layers().getFirst().wq().type()).isEqualTo(DType.Q8_0);
        }
    }

    private static Map<String, Object> tokenizerKeys(GgufFile f) {
        Map<String, Object> keys = new TreeMap<>();
        f.metadata().forEach((k, v) -> {
            if (k.startsWith("tokenizer.")) {
                keys.put(k, v.value());
            }
        });
        return keys;
    }
}
