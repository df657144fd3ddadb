package dev.pagewarden.cli.tools;

import dev.pagewarden.core.model.DType;
import dev.pagewarden.core.model.LlamaTensors;
import dev.pagewarden.core.model.RowSource;
import dev.pagewarden.core.model.load.LoadedModel;
import dev.pagewarden.core.model.load.ModelLoader;
import dev.pagewarden.core.testing.TestModels;
import dev.pagewarden.core.testing.WeightChecks;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

import java.nio.file.Path;

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
}
