package dev.pagewarden.core.model;

import dev.pagewarden.core.model.write.ModelGenerator;
import dev.pagewarden.core.model.write.ModelShape;
import dev.pagewarden.core.model.gguf.GgufLlama;
import dev.pagewarden.core.model.load.LoadedModel;
import dev.pagewarden.core.model.load.ModelLoader;
import dev.pagewarden.core.reference.ReferenceParity;
import dev.pagewarden.core.tensor.MatMul;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

import java.nio.file.Path;
import java.util.Random;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assumptions.assumeFalse;

/**
 * A model written by make-model in each quantised type, loaded from GGUF (weights stay in the
 * mapping, decoded a tile at a time): the CPU backend's logits, through a prefill chunk and then
 * decode steps, against the float64 reference forward on the same (dequantised) weights.
 */
class QuantizedModelParityTest {
    /** Every matrix has 256 or 512 columns: whole K-quant super-blocks, so nothing falls back to F16. */
    static final String SHAPE = "dim=256,hidden=512,layers=2,heads=4,kv_heads=2,vocab=512,seq=64,shared=false";
    static final double MAX_REL_ERROR = 1e-4;

    @TempDir
    Path dir;

    @ParameterizedTest
    @EnumSource(value = DType.class, names = {"BF16", "Q4_0", "Q4_K", "Q5_K", "Q6_K"})
    void logitsMatchTheFloat64ReferenceOnTheDequantisedWeights(DType type) throws Exception {
        // the Java kernels' exact decoding; the engine's pom runs this class once more with them forced
        // (the native kernels, which round activations to 8 bits, have their own check: NativeModelParityTest)
        assumeFalse(MatMul.servesNatively(type), "native kernels compute " + type + " here");
        ModelConfig cfg = ModelShape.parse(SHAPE).config();
        Path file = dir.resolve("m-" + type + ".gguf");
        ModelGenerator.generate(cfg, type, ModelGenerator.FileFormat.GGUF, 5, file, total -> done -> { });
        try (LoadedModel model = ModelLoader.load(file, null)) {
            for (LlamaTensors.Slot slot : LlamaTensors.ggufOrder(cfg)) {
                assertThat(LlamaTensors.tensor(model.weights(), slot).type()).as(slot.ggufName())
                        .isEqualTo(slot.role().isNorm() ? DType.F32 : type);
                assertThat(GgufLlama.storedType(slot, type)).isEqualTo(slot.role().isNorm() ? DType.F32 : type);
            }
            Random rnd = new Random(type.ordinal());
            int[] tokens = new int[24];
            for (int i = 0; i < tokens.length; i++) {
                tokens[i] = rnd.nextInt(cfg.vocabSize());
            }
            double err = ReferenceParity.worstError(model, tokens, 9);
            System.out.printf("%s: worst logits relative error %.3g%n", type, err);
            assertThat(err).as(type.name()).isLessThan(MAX_REL_ERROR);
        }
    }
}
