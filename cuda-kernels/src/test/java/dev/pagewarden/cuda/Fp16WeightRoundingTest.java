package dev.pagewarden.cuda;

import dev.pagewarden.core.model.write.ModelGenerator;
import dev.pagewarden.core.backend.Backend;
import dev.pagewarden.core.backend.BackendOptions;
import dev.pagewarden.core.backend.Backends;
import dev.pagewarden.core.model.DType;
import dev.pagewarden.core.model.LlamaWeights;
import dev.pagewarden.core.model.ModelConfig;
import dev.pagewarden.core.model.Tensor;
import dev.pagewarden.core.model.load.LoadedModel;
import dev.pagewarden.core.model.load.ModelLoader;
import org.junit.jupiter.api.Test;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * What the tile decoders' fp16 rounding alone does to a quantized model: the CPU backend on the model
 * as stored against the CPU backend on the same model with every matrix replaced by F16 holding
 * fp16(CPU decode) - the weights the tensor cores multiply ({@link QuantPackingTest} holds the decoders
 * to exactly those). Sizes the parity tolerance of quantized models through the GEMM: about 1e-3, ten
 * times the fp32 paths' 1e-4.
 */
class Fp16WeightRoundingTest {
    static final double BOUND = 2e-3;

    /** The matrix as F16 of its CPU decode rounded to nearest even. */
    static Tensor f16(Tensor t) {
        MemorySegment d = Arena.ofAuto().allocate((long) t.rows() * t.cols() * 2);
        float[] row = new float[t.cols()];
        for (int r = 0; r < t.rows(); r++) {
            t.rowInto(r, row, 0);
            for (int c = 0; c < t.cols(); c++) {
                d.set(Tensor.I16_LE, ((long) r * t.cols() + c) * 2, Float.floatToFloat16(row[c]));
            }
        }
        return new Tensor(t.name(), DType.F16, t.rows(), t.cols(), d);
    }

    @Test
    void fp16RoundedWeightsMoveTheLogitsOfEveryQuantizedTypeByAboutOneInAThousand() throws Exception {
        ModelConfig shape = new ModelConfig(256, 512, 2, 8, 2, 512, 128, 1e-5f, 10000f, false);
        for (DType type : QuantPacking.TYPES) {
            Path f = Files.createTempFile("r", ".gguf");
            ModelGenerator.generate(shape, type, ModelGenerator.FileFormat.GGUF, 5, f, size -> done -> { });
            try (LoadedModel m = ModelLoader.load(f, null)) {
                LlamaWeights w = m.weights();
                List<LlamaWeights.Layer> ls = new ArrayList<>();
                for (LlamaWeights.Layer l : w.layers()) {
                    ls.add(new LlamaWeights.Layer(l.rmsAtt(), f16(l.wq()), f16(l.wk()), f16(l.wv()), f16(l.wo()), l.rmsFfn(),
                            f16(l.w1()), f16(l.w2()), f16(l.w3())));
                }
                LlamaWeights w16 = new LlamaWeights(w.config(), w.tokenEmbedding(), ls, w.rmsFinal(), f16(w.classifier()));
                int[] tokens = GpuChecks.randomTokens(24, shape.vocabSize(), 9);
                List<float[]> a;
                List<float[]> b;
                try (Backend c = Backends.select("cpu").create(m, BackendOptions.defaults())) {
                    a = GpuChecks.logits(c, tokens, 12);
                }
                try (LoadedModel m16 = new LoadedModel(null, "memory", w16, null, Arena.ofShared());
                     Backend c = Backends.select("cpu").create(m16, BackendOptions.defaults())) {
                    b = GpuChecks.logits(c, tokens, 12);
                }
                double worst = 0;
                for (int i = 0; i < a.size(); i++) {
                    worst = Math.max(worst, GpuChecks.relError(b.get(i), a.get(i)));
                }
                System.out.printf("%s: fp16-rounded weights vs the CPU decode, logits max relative error %.3g%n", type, worst);
                assertThat(w.matrixTypes()).containsExactly(type);
                assertThat(worst).as(type.name()).isGreaterThan(0).isLessThan(BOUND);
            } finally {
                Files.deleteIfExists(f);
            }
        }
    }
}
