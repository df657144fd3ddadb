package dev.pagewarden.core.model;

import dev.pagewarden.core.model.load.LoadedModel;
import dev.pagewarden.core.model.load.ModelLoader;
import dev.pagewarden.core.model.write.ModelGenerator;
import dev.pagewarden.core.model.write.ModelShape;
import dev.pagewarden.core.reference.ReferenceParity;
import dev.pagewarden.core.tensor.MatMul;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

import java.nio.file.Path;
import java.util.Random;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

/**
 * {@link QuantizedModelParityTest}'s models with the native kernels, which round every matmul's
 * activations to 8 bits per block: the logits stay within {@link #MAX_REL_ERROR} of the float64
 * reference on the dequantised weights (and unrounded activations). Each rounding moves an activation
 * by at most 1/254 of its block's largest magnitude; on these random two-layer models the logits move by
 * 1.7-2.1% of the largest logit, against 1e-4 for the Java kernels' exact decoding.
 */
class NativeModelParityTest {
    static final double MAX_REL_ERROR = 0.05;

    @TempDir
    Path dir;

    @ParameterizedTest
    @EnumSource(value = DType.class, names = {"Q8_0", "Q4_0", "Q4_K", "Q5_K", "Q6_K"})
    void logitsStayNearTheFloat64Reference(DType type) throws Exception {
        assumeTrue(MatMul.servesNatively(type), MatMul.kernelsInUse());
        ModelConfig cfg = ModelShape.parse(QuantizedModelParityTest.SHAPE).config();
        Path file = dir.resolve("m-" + type + ".gguf");
        ModelGenerator.generate(cfg, type, ModelGenerator.FileFormat.GGUF, 5, file, total -> done -> { });
        try (LoadedModel model = ModelLoader.load(file, null)) {
            Random rnd = new Random(type.ordinal());
            int[] tokens = new int[24];
            for (int i = 0; i < tokens.length; i++) {
                tokens[i] = rnd.nextInt(cfg.vocabSize());
            }
            double err = ReferenceParity.worstError(model, tokens, 9);
            System.out.printf("%s (native): worst logits relative error %.3g%n", type, err);
            assertThat(err).as(type.name()).isLessThan(MAX_REL_ERROR);
        }
    }
}
