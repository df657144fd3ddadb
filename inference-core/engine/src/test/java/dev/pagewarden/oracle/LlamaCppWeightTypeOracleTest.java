package dev.pagewarden.oracle;

import dev.pagewarden.core.model.write.ModelGenerator;
import dev.pagewarden.core.model.write.ModelShape;
import dev.pagewarden.core.model.DType;
import dev.pagewarden.core.model.ModelConfig;
import dev.pagewarden.core.model.gguf.GgufFile;
import dev.pagewarden.core.model.gguf.GgufReader;
import dev.pagewarden.core.model.gguf.GgufTensorInfo;
import dev.pagewarden.core.model.load.LoadedModel;
import dev.pagewarden.core.model.load.ModelLoader;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

import java.lang.foreign.Arena;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The weight types of published GGUFs (BF16, Q4_0, Q4_K, Q5_K, Q6_K) against llama.cpp on the same
 * random-weight llama file, teacher-forced. Both sides multiply by the same stored weights; they differ in
 * the activations: llama.cpp rounds them to the weights' dot format (BF16 for BF16, 8 bits with one scale
 * per 32 values for Q4_0, per 256 values for the K-quants) while the engine keeps them in F32. So top-1 may
 * differ only at near-ties of llama.cpp's own scores, and scores agree within a per-type tolerance.
 */
class LlamaCppWeightTypeOracleTest {
    /** Rows of whole 256-value blocks, so every matrix is stored in the K-quant asked for. */
    static final String SHAPE = "dim=256,hidden=512,layers=2,heads=4,kv_heads=2,vocab=512,seq=128,shared=false";
    static final int POSITIONS = 64;

    @TempDir
    static Path dir;

    @BeforeAll
    static void oracleAvailable() {
        LlamaCpp.require();
    }

    /**
     * Near-tie threshold (largest llama.cpp top-2 gap at which the engine may pick the other token) and
     * score tolerance (largest disagreement of logit differences), with why. Measured with llama.cpp v0.4.0
     * over 64 positions x 512 tokens: worst error 0.016 (BF16), 0.042 (Q4_0), 0.046 / 0.050 / 0.060
     * (Q4_K / Q5_K / Q6_K); top-1 differed at 1 or 2 positions per type, each with a llama.cpp gap under 0.013.
     */
    record Bounds(double nearTie, double tolerance, String why) {
    }

    static Bounds bounds(DType type) {
        return switch (type) {
            case BF16 -> new Bounds(0.02, 0.03, "llama.cpp rounds activations to bf16 (8-bit mantissa, relative "
                    + "error up to 2^-9 per value, four times F16's), the engine keeps f32");
            case Q4_0 -> new Bounds(0.05, 0.08, "llama.cpp rounds activations to Q8_0 (8 bits, one scale per 32 "
                    + "values: error up to amax/254 per value), the engine keeps f32; as for Q8_0 weights");
            case Q4_K, Q5_K, Q6_K -> new Bounds(0.1, 0.15, "llama.cpp rounds activations to Q8_K (8 bits, one scale "
                    + "per 256 values, so a coarser step than Q8_0's per-32 scale), the engine keeps f32");
            default -> throw new IllegalArgumentException("no bounds stated for " + type);
        };
    }

    @ParameterizedTest(name = "{0}")
    @EnumSource(value = DType.class, names = {"BF16", "Q4_0", "Q4_K", "Q5_K", "Q6_K"})
    void teacherForcedMatchesLlamaCppUpToNearTies(DType type) throws Exception {
        ModelConfig cfg = ModelShape.parse(SHAPE).config();
        Path gguf = dir.resolve("llama-" + type + ".gguf");
        ModelGenerator.generate(cfg, type, ModelGenerator.FileFormat.GGUF, 13, gguf, total -> done -> { });
        assertEveryMatrixIs(gguf, type);
        int[] tokens = LlamaCppOracleTest.randomTokens(cfg.vocabSize(), POSITIONS, 17 + type.ordinal());

        LlamaCpp.Response lc = LlamaCpp.batch(gguf).teacherForced(tokens, 0).run();
        List<LlamaCpp.Position> want = lc.positions(0);
        float[][] got;
        float[] prefill;
        try (LoadedModel model = ModelLoader.load(gguf, null)) {
            got = EngineRuns.teacherForcedLogits(model, tokens);
            prefill = EngineRuns.prefillLastLogits(model, tokens);
        }

        Bounds b = bounds(type);
        double worst = LlamaCppArchitectureOracleTest.worstDifference(prefill, want.get(tokens.length - 1));
        double smallestMargin = Double.POSITIVE_INFINITY;
        List<String> differing = new ArrayList<>();
        for (int p = 0; p < tokens.length; p++) {
            LlamaCpp.Position ref = want.get(p);
            worst = Math.max(worst, LlamaCppArchitectureOracleTest.worstDifference(got[p], ref));
            smallestMargin = Math.min(smallestMargin, ref.margin());
            int engineTop = EngineRuns.argmax(got[p]);
            if (engineTop != ref.top1()) {
                double gap = ref.logprob(ref.top1()) - ref.logprob(engineTop);
                differing.add(String.format("position %d: engine %d, llama.cpp %d (llama.cpp gap %.3g)", p, engineTop,
                        ref.top1(), gap));
                assertThat(gap).as("%s position %d: engine top-1 %d vs llama.cpp %d is no near-tie: llama.cpp gap %.4g, "
                                + "threshold %s because %s (%s)", type, p, engineTop, ref.top1(), gap, b.nearTie(),
                        b.why(), lc.version())
                        .isLessThan(b.nearTie());
            }
        }
        String report = String.format("%s: top-1 differs at %d of %d positions %s (near-tie threshold %s, smallest "
                        + "llama.cpp top-2 margin %.3g); worst logit-difference error %.3g (tolerance %s, prefill "
                        + "included) because %s; %s", type, differing.size(), tokens.length, differing, b.nearTie(),
                smallestMargin, worst, b.tolerance(), b.why(), lc.version());
        System.out.println(report);
        assertThat(worst).as(report).isLessThan(b.tolerance());
    }

    /** The file holds every weight matrix in {@code type} (no fallback to F16 for a row of partial blocks). */
    static void assertEveryMatrixIs(Path gguf, DType type) {
        try (Arena arena = Arena.ofConfined()) {
            GgufFile f = GgufReader.read(gguf, arena);
            List<String> matrices = new ArrayList<>();
            for (GgufTensorInfo t : f.tensors()) {
                if (t.dims().size() == 2) {
                    matrices.add(t.name() + ":" + t.type());
                }
            }
            assertThat(matrices).as("weight matrices of " + gguf).isNotEmpty()
                    .allSatisfy(m -> assertThat(m).endsWith(":" + type));
        }
    }
}
