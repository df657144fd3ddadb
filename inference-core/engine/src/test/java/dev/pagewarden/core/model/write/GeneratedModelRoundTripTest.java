package dev.pagewarden.core.model.write;

import dev.pagewarden.core.model.DType;
import dev.pagewarden.core.model.LlamaTensors;
import dev.pagewarden.core.model.ModelConfig;
import dev.pagewarden.core.model.gguf.GgufLlama;
import dev.pagewarden.core.model.load.LoadedModel;
import dev.pagewarden.core.model.load.ModelLoader;
import dev.pagewarden.core.testing.WeightChecks;
import dev.pagewarden.core.tokenizer.Vocabulary;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

import java.nio.file.Files;
import java.nio.file.Path;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/** Generate a model, load it back through {@link ModelLoader}, compare every element with what was generated. */
class GeneratedModelRoundTripTest {
    private static final long SEED = 7;
    @TempDir
    Path dir;

    @ParameterizedTest(name = "{0} {1} {2}")
    @CsvSource(delimiter = ';', value = {
            "tiny-gqa; F32; GGUF", "tiny-gqa; F16; GGUF", "tiny-gqa; Q8_0; GGUF", "tiny-gqa; F32; BIN",
            "stories260K; F32; GGUF", "stories260K; Q8_0; GGUF", "stories260K; F32; BIN",
            "dim=64,hidden=96,layers=2,heads=4,kv_heads=1,vocab=300,seq=32,shared=false; Q8_0; GGUF",
            "dim=64,hidden=96,layers=2,heads=4,kv_heads=1,vocab=300,seq=32,shared=false; F32; BIN",
            "tiny-gqa; BF16; GGUF", "tiny-gqa; Q4_0; GGUF", "tiny-gqa; Q4_K; GGUF",
            "dim=256,hidden=512,layers=1,heads=4,kv_heads=2,vocab=300,seq=32,shared=false; Q4_K; GGUF",
            "dim=256,hidden=512,layers=1,heads=4,kv_heads=2,vocab=300,seq=32,shared=false; Q5_K; GGUF",
            "dim=256,hidden=512,layers=1,heads=4,kv_heads=2,vocab=300,seq=32,shared=false; Q6_K; GGUF"})
    void roundTrip(String shapeText, DType dtype, ModelGenerator.FileFormat format) throws Exception {
        ModelConfig cfg = ModelShape.parse(shapeText).config();
        Path file = dir.resolve("m." + format.name().toLowerCase());
        ModelGenerator.generate(cfg, dtype, format, SEED, file, total -> done -> { });
        Path tokenizer = null;
        if (format == ModelGenerator.FileFormat.BIN) {
            tokenizer = dir.resolve("tok.bin");
            TokenizerBinWriter.write(ModelGenerator.vocabulary(cfg.vocabSize()), tokenizer);
        }
        try (LoadedModel m = ModelLoader.load(file, tokenizer)) {
            assertThat(m.format()).isEqualTo(format == ModelGenerator.FileFormat.GGUF ? "gguf" : "llama2c");
            assertThat(m.config()).isEqualTo(cfg);
            long compared = WeightChecks.assertMatches(m.weights(), slot -> ModelGenerator.weights(SEED, slot));
            assertThat(compared).isEqualTo(cfg.parameterCount());
            for (LlamaTensors.Slot slot : LlamaTensors.ggufOrder(cfg)) {
                assertThat(LlamaTensors.tensor(m.weights(), slot).type()).as(slot.ggufName())
                        .isEqualTo(format == ModelGenerator.FileFormat.BIN ? DType.F32 : GgufLlama.storedType(slot, dtype));
            }
            assertSameVocabulary(m.vocabulary(), ModelGenerator.vocabulary(cfg.vocabSize()));
        }
    }

    @Test
    void q8RowsThatAreNotWholeBlocksFallBackToF16AndNormsStayF32() {
        ModelConfig cfg = ModelShape.parse("stories260K").config();   // hidden 172 is not a multiple of 32
        LlamaTensors.Slot w2 = LlamaTensors.slot(cfg, LlamaTensors.Role.W2, 0);
        LlamaTensors.Slot w1 = LlamaTensors.slot(cfg, LlamaTensors.Role.W1, 0);
        LlamaTensors.Slot norm = LlamaTensors.slot(cfg, LlamaTensors.Role.ATTN_NORM, 0);
        assertThat(GgufLlama.storedType(w2, DType.Q8_0)).isEqualTo(DType.F16);
        assertThat(GgufLlama.storedType(w1, DType.Q8_0)).isEqualTo(DType.Q8_0);
        assertThat(GgufLlama.storedType(norm, DType.F16)).isEqualTo(DType.F32);
    }

    @Test
    void q4KmMixHasLlamaCppTypesPerTensorAndLoadsBack() throws Exception {
        // llama.cpp's use_more_bits(i, 16): i < 2, i >= 14, (i - 2) % 3 == 2, written out by hand
        java.util.Set<Integer> moreBits = java.util.Set.of(0, 1, 4, 7, 10, 13, 14, 15);
        ModelConfig cfg = ModelShape.parse("dim=256,hidden=512,layers=16,heads=4,kv_heads=2,vocab=300,seq=32").config();
        for (LlamaTensors.Slot slot : LlamaTensors.ggufOrder(cfg)) {
            DType expected = switch (slot.role()) {
                case TOKEN_EMBD -> DType.Q6_K; // tied: the embedding is the classifier
                case WV, W2 -> moreBits.contains(slot.layer()) ? DType.Q6_K : DType.Q4_K;
                case WQ, WK, WO, W1, W3 -> DType.Q4_K;
                default -> DType.F32;
            };
            assertThat(GgufLlama.mixedType(slot, DType.Q4_K, cfg)).as(slot.ggufName()).isEqualTo(expected);
        }
        ModelConfig untied = ModelShape.parse("dim=256,hidden=512,layers=2,heads=4,kv_heads=2,vocab=300,seq=32,shared=false").config();
        assertThat(GgufLlama.mixedType(LlamaTensors.slot(untied, LlamaTensors.Role.TOKEN_EMBD, 0), DType.Q5_K, untied))
                .isEqualTo(DType.Q5_K);
        assertThat(GgufLlama.mixedType(LlamaTensors.slot(untied, LlamaTensors.Role.OUTPUT, 0), DType.Q5_K, untied))
                .isEqualTo(DType.Q6_K);
        Path file = dir.resolve("mix.gguf");
        ModelGenerator.generate(untied, DType.Q4_K, true, ModelGenerator.FileFormat.GGUF, SEED, file, null, null,
                total -> done -> { });
        try (LoadedModel m = ModelLoader.load(file, null)) {
            assertThat(WeightChecks.assertMatches(m.weights(), slot -> ModelGenerator.weights(SEED, slot)))
                    .isEqualTo(untied.parameterCount());
            for (LlamaTensors.Slot slot : LlamaTensors.ggufOrder(untied)) {
                assertThat(LlamaTensors.tensor(m.weights(), slot).type()).as(slot.ggufName())
                        .isEqualTo(GgufLlama.mixedType(slot, DType.Q4_K, untied));
            }
        }
    }

    @Test
    void sameSeedGivesIdenticalBytesAndAnotherSeedDoesNot() throws Exception {
        ModelConfig cfg = ModelShape.parse("tiny-gqa").config();
        for (ModelGenerator.FileFormat format : ModelGenerator.FileFormat.values()) {
            Path a = dir.resolve("a-" + format);
            Path b = dir.resolve("b-" + format);
            Path c = dir.resolve("c-" + format);
            ModelGenerator.generate(cfg, DType.F32, format, 1, a, total -> done -> { });
            ModelGenerator.generate(cfg, DType.F32, format, 1, b, total -> done -> { });
            ModelGenerator.generate(cfg, DType.F32, format, 2, c, total -> done -> { });
            if (format == ModelGenerator.FileFormat.SAFETENSORS) { // a folder: its weights file
                a = a.resolve("model.safetensors");
                b = b.resolve("model.safetensors");
                c = c.resolve("model.safetensors");
            }
            assertThat(Files.mismatch(a, b)).as(format + " same seed").isEqualTo(-1L);
            assertThat(Files.mismatch(a, c)).as(format + " other seed").isNotEqualTo(-1L);
            assertThat(Files.size(a)).isEqualTo(Files.size(c));
        }
    }

    @Test
    void generatedWeightsAreBoundedAndNotConstant() {
        ModelConfig cfg = ModelShape.parse("tiny-gqa").config();
        LlamaTensors.Slot wq = LlamaTensors.slot(cfg, LlamaTensors.Role.WQ, 1);
        float[] row = new float[wq.cols()];
        ModelGenerator.weights(3, wq).fill(5, row);
        double bound = 1 / Math.sqrt(wq.cols());
        double sum = 0;
        for (float v : row) {
            assertThat(Math.abs(v)).isLessThanOrEqualTo((float) bound);
            sum += v * v;
        }
        // uniform(-b, b) has variance b^2/3
        assertThat(sum / row.length).isBetween(bound * bound / 3 * 0.6, bound * bound / 3 * 1.4);
        float[] other = new float[wq.cols()];
        ModelGenerator.weights(3, wq).fill(6, other);
        assertThat(other).isNotEqualTo(row);
    }

    @Test
    void binFormatRejectsQuantisedTypesPointingToGguf() {
        ModelConfig cfg = ModelShape.parse("tiny-gqa").config();
        assertThatThrownBy(() -> ModelGenerator.generate(cfg, DType.Q8_0, ModelGenerator.FileFormat.BIN, 1,
                dir.resolve("x.bin"), total -> done -> { }))
                .hasMessageContaining("only f32").hasMessageContaining("GGUF");
    }

    @Test
    void syntheticVocabularyHasSpecialsBytesAndUniquePieces() {
        Vocabulary v = ModelGenerator.vocabulary(32000);
        assertThat(v.size()).isEqualTo(32000);
        assertThat(v.tokens().subList(0, 3)).containsExactly("<unk>", "<s>", "</s>");
        assertThat(v.tokens().get(3)).isEqualTo("<0x00>");
        assertThat(v.tokens().get(258)).isEqualTo("<0xFF>");
        assertThat(v.tokens()).doesNotHaveDuplicates();
        assertThat(v.tokens()).contains(" a", "th", " the");
        assertThatThrownBy(() -> ModelGenerator.vocabulary(100)).hasMessageContaining("vocab_size 100");
    }

    static void assertSameVocabulary(Vocabulary got, Vocabulary want) {
        assertThat(got).isNotNull();
        assertThat(got.tokens()).isEqualTo(want.tokens());
        assertThat(got.scores()).isEqualTo(want.scores());
        assertThat(got.bosId()).isEqualTo(want.bosId());
        assertThat(got.eosId()).isEqualTo(want.eosId());
    }
}
