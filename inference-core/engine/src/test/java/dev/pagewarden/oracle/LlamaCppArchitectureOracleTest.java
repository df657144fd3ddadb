package dev.pagewarden.oracle;

import dev.pagewarden.core.model.write.ModelGenerator;
import dev.pagewarden.core.model.write.ModelShape;
import dev.pagewarden.core.model.DType;
import dev.pagewarden.core.model.ModelConfig;
import dev.pagewarden.core.model.load.LoadedModel;
import dev.pagewarden.core.model.load.ModelLoader;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Each architecture the engine runs (llama with Llama 3.2's RoPE scaling, mistral, qwen2 with Q/K/V
 * biases, qwen3 with per-head Q/K norms, head sizes other than dim/heads) against llama.cpp on the same
 * random-weight F32 GGUF: teacher-forced scores after every position and greedy streams.
 */
class LlamaCppArchitectureOracleTest {
    /** F32 weights on both sides: largest |logit difference| disagreement, any position, any token. */
    static final double F32_TOLERANCE = 1e-4;
    static final String SHAPE = "dim=64,hidden=128,layers=2,heads=4,kv_heads=2,vocab=512,seq=128,shared=false";
    static final int POSITIONS = 96;
    static final int GREEDY_TOKENS = 32;

    @TempDir
    static Path dir;

    @BeforeAll
    static void oracleAvailable() {
        LlamaCpp.require();
    }

    /**
     * Teacher-forced over BOS and 95 random ids (one decode step per position, and the whole history as one
     * prefill for the last position): top-1 identical to llama.cpp's at every position and every token's
     * score, taken relative to llama.cpp's top-1 (llama.cpp gives log-probabilities, so only differences
     * are logits), within {@link #F32_TOLERANCE}; then two greedy streams identical token for token.
     * qwen2 keeps head size dim/heads: llama.cpp v0.4.0 builds its Q/K/V as square matrices and refuses
     * the file otherwise.
     */
    @ParameterizedTest(name = "{0} {1} {2}")
    @CsvSource(nullValues = "-", value = {
            "llama,   llama3, -",
            "llama,   llama3, 32",
            "mistral, -,      -",
            "qwen2,   -,      -",
            "qwen3,   -,      -",
            "qwen3,   -,      32"})
    void f32ScoresAndGreedyEqualLlamaCpp(String arch, String ropeScaling, Integer headDim) throws Exception {
        String shape = headDim == null ? SHAPE : SHAPE + ",head_dim=" + headDim;
        ModelConfig cfg = ModelShape.parse(shape).forArchitecture(arch, ropeScaling).config();
        String what = arch + (ropeScaling == null ? "" : "+" + ropeScaling) + " head_dim " + cfg.headSize();
        Path gguf = dir.resolve(what.replace(' ', '-').replace('+', '-') + ".gguf");
        ModelGenerator.generate(cfg, DType.F32, ModelGenerator.FileFormat.GGUF, 11, gguf, total -> done -> { });

        int[] tokens = LlamaCppOracleTest.randomTokens(cfg.vocabSize(), POSITIONS, what.hashCode());
        List<int[]> prompts = List.of(LlamaCppOracleTest.randomTokens(cfg.vocabSize(), 6, 1),
                LlamaCppOracleTest.randomTokens(cfg.vocabSize(), 17, 2));
        LlamaCpp.Batch batch = LlamaCpp.batch(gguf).teacherForced(tokens, 0);
        prompts.forEach(p -> batch.greedy(p, GREEDY_TOKENS, false));
        LlamaCpp.Response lc = batch.run();

        try (LoadedModel model = ModelLoader.load(gguf, null)) {
            float[][] got = EngineRuns.teacherForcedLogits(model, tokens);
            float[] prefill = EngineRuns.prefillLastLogits(model, tokens);
            List<LlamaCpp.Position> want = lc.positions(0);
            double worst = 0;
            List<String> differing = new ArrayList<>();
            for (int p = 0; p < tokens.length; p++) {
                worst = Math.max(worst, worstDifference(got[p], want.get(p)));
                if (EngineRuns.argmax(got[p]) != want.get(p).top1()) {
                    differing.add("position " + p + ": engine " + EngineRuns.argmax(got[p]) + ", llama.cpp "
                            + want.get(p).top1() + " (llama.cpp margin " + want.get(p).margin() + ")");
                }
            }
            LlamaCpp.Position last = want.get(tokens.length - 1);
            double worstPrefill = worstDifference(prefill, last);
            String report = String.format("%s: worst logit-difference error %.3g over %d positions x %d tokens, "
                            + "prefill of all %d: %.3g; top-1 differs at %d positions %s; %s", what, worst, tokens.length,
                    cfg.vocabSize(), tokens.length, worstPrefill, differing.size(), differing, lc.version());
            System.out.println(report);
            assertThat(differing).as("F32: top-1 identical at every position; " + report).isEmpty();
            assertThat(EngineRuns.argmax(prefill)).as("prefill top-1; " + report).isEqualTo(last.top1());
            assertThat(Math.max(worst, worstPrefill)).as(report).isLessThan(F32_TOLERANCE);

            int compared = 0;
            for (int i = 0; i < prompts.size(); i++) {
                compared += LlamaCppOracleTest.assertSameGreedyStream(
                        EngineRuns.greedy(model, prompts.get(i), GREEDY_TOKENS), lc.greedy(i + 1).ids(),
                        LlamaCppOracleTest.stopTokens(model), GREEDY_TOKENS, what + " prompt " + i + " (" + lc.version() + ")");
            }
            System.out.printf("%s greedy: %d tokens identical to llama.cpp%n", what, compared);
            assertThat(compared).as(what + ": greedy tokens compared").isGreaterThan(GREEDY_TOKENS / 2);
        }
    }

    /**
     * Llama 3.2's RoPE scaling changes llama.cpp's own scores at these positions by far more than the
     * tolerance (the same weights with the same RoPE base but no scaling), so the comparison above would
     * catch an engine that ignored it.
     */
    @Test
    void ropeScalingMovesLlamaCppScoresBeyondTheTolerance() throws Exception {
        ModelConfig scaled = ModelShape.parse(SHAPE).forArchitecture("llama", "llama3").config();
        ModelConfig plain = ModelShape.parse(SHAPE).config().with(scaled.rmsEps(), scaled.ropeTheta());
        Path a = dir.resolve("scaled.gguf");
        Path b = dir.resolve("unscaled.gguf");
        ModelGenerator.generate(scaled, DType.F32, ModelGenerator.FileFormat.GGUF, 11, a, total -> done -> { });
        ModelGenerator.generate(plain, DType.F32, ModelGenerator.FileFormat.GGUF, 11, b, total -> done -> { });
        int[] tokens = LlamaCppOracleTest.randomTokens(scaled.vocabSize(), POSITIONS, 5);
        List<LlamaCpp.Position> withScaling = LlamaCpp.teacherForced(a, tokens, 0);
        List<LlamaCpp.Position> without = LlamaCpp.teacherForced(b, tokens, 0);
        double largest = 0;
        for (int p = 0; p < tokens.length; p++) {
            for (int id = 0; id < scaled.vocabSize(); id++) {
                largest = Math.max(largest, Math.abs(withScaling.get(p).logprob(id) - without.get(p).logprob(id)));
            }
        }
        System.out.printf("llama3 rope scaling moves llama.cpp's scores by up to %.3g%n", largest);
        assertThat(largest).as("effect of the scaling on llama.cpp's scores").isGreaterThan(100 * F32_TOLERANCE);
    }

    /**
     * Largest disagreement over the vocabulary between the engine's logit differences and llama.cpp's
     * score differences, both taken against llama.cpp's top-1 token.
     */
    static double worstDifference(float[] logits, LlamaCpp.Position ref) {
        int pivot = ref.top1();
        double worst = 0;
        for (int id = 0; id < logits.length; id++) {
            double ours = (double) logits[id] - logits[pivot];
            double theirs = ref.logprob(id) - ref.logprob(pivot);
            worst = Math.max(worst, Math.abs(ours - theirs));
        }
        return worst;
    }
}
