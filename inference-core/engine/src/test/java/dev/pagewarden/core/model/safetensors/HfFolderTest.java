package dev.pagewarden.core.model.safetensors;

import dev.pagewarden.core.model.Architecture;
import dev.pagewarden.core.model.ModelConfig;
import dev.pagewarden.core.model.RopeScaling;
import dev.pagewarden.core.model.load.LoadedModel;
import dev.pagewarden.core.model.load.ModelLoader;
import dev.pagewarden.oracle.EngineRuns;
import dev.pagewarden.oracle.LlamaCpp;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

import java.nio.file.Path;
import java.util.List;
import java.util.SplittableRandom;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * A Hugging Face folder runs as its GGUF twin runs: the test writes random weights as a folder (its own
 * safetensors writer) and as the GGUF llama.cpp's converter would make of it (Q/K permutation of llama),
 * then compares the engine's logits on both, and llama.cpp's on the twin with the engine's on the folder.
 */
class HfFolderTest {
    /** llama.cpp's F32 scores against the engine's, as the GGUF oracle test allows. */
    private static final double F32_LOGPROB_TOLERANCE = 1e-4;

    @TempDir
    Path dir;

    static ModelConfig config(String modelType) {
        return switch (modelType) {
            // separate classifier, GQA, Llama 3.1-style RoPE scaling
            case "llama" -> new ModelConfig(64, 160, 2, 4, 2, 512, 128, 1e-5f, 500000f, false)
                    .with(Architecture.LLAMA, 16, RopeScaling.llama3(8, 1, 4, 32, 16, 500000));
            case "mistral" -> new ModelConfig(64, 160, 2, 4, 1, 512, 128, 1e-5f, 1000000f, false);
            case "qwen2" -> new ModelConfig(64, 160, 2, 4, 2, 512, 128, 1e-6f, 1000000f, true)
                    .with(Architecture.QWEN2, 16, null);
            // head size decoupled from dim / heads, as Qwen 3 has it
            case "qwen3" -> new ModelConfig(64, 160, 2, 4, 2, 512, 128, 1e-6f, 1000000f, true)
                    .with(Architecture.QWEN3, 32, null);
            default -> throw new IllegalArgumentException(modelType);
        };
    }

    static int[] tokens(int vocab, int n, long seed) {
        SplittableRandom rnd = new SplittableRandom(seed);
        int[] t = new int[n];
        t[0] = 1;
        for (int i = 1; i < n; i++) {
            t[i] = rnd.nextInt(vocab);
        }
        return t;
    }

    @ParameterizedTest(name = "{0} {1} shards={2}")
    @CsvSource({"llama,F32,1", "llama,BF16,1", "llama,F16,2", "mistral,F32,1", "qwen2,F32,3", "qwen2,BF16,1",
            "qwen3,F32,1", "qwen3,BF16,2", "qwen3,F16,1"})
    void folderRunsAsItsGgufTwin(String modelType, String dtype, int shards) throws Exception {
        TinyHfModel m = TinyHfModel.random(config(modelType), modelType, dtype, modelType.hashCode() + 31L * dtype.hashCode());
        Path folder = m.writeFolder(dir.resolve(modelType + "-" + dtype), shards);
        Path twin = m.writeGgufTwin(dir.resolve(modelType + "-" + dtype + ".gguf"));
        int[] tokens = tokens(m.cfg.vocabSize(), 24, 5);

        float[][] fromFolder;
        float[] folderPrefill;
        try (LoadedModel model = ModelLoader.load(folder, null)) {
            assertThat(model.format()).isEqualTo("safetensors");
            assertThat(model.config()).isEqualTo(m.cfg);
            fromFolder = EngineRuns.teacherForcedLogits(model, tokens);
            folderPrefill = EngineRuns.prefillLastLogits(model, tokens);
        }
        float[][] fromTwin;
        float[] twinPrefill;
        try (LoadedModel model = ModelLoader.load(twin, null)) {
            fromTwin = EngineRuns.teacherForcedLogits(model, tokens);
            twinPrefill = EngineRuns.prefillLastLogits(model, tokens);
        }
        // the same numbers in the same layout through the same kernels: identical, not merely close
        for (int p = 0; p < tokens.length; p++) {
            assertThat(fromFolder[p]).as("%s %s position %d", modelType, dtype, p).containsExactly(fromTwin[p]);
        }
        assertThat(folderPrefill).containsExactly(twinPrefill);
    }

    /** llama.cpp on the twin is the oracle for the engine on the folder (exact top-1 for F32). */
    @ParameterizedTest(name = "{0}")
    @CsvSource({"llama", "mistral", "qwen2", "qwen3"})
    void folderMatchesLlamaCppOnItsTwin(String modelType) throws Exception {
        LlamaCpp.require();
        TinyHfModel m = TinyHfModel.random(config(modelType), modelType, "F32", 17 + modelType.hashCode());
        Path folder = m.writeFolder(dir.resolve(modelType), 1);
        Path twin = m.writeGgufTwin(dir.resolve(modelType + ".gguf"));
        int[] tokens = tokens(m.cfg.vocabSize(), 32, 9);

        LlamaCpp.Response lc = LlamaCpp.batch(twin).teacherForced(tokens, 0).run();
        List<LlamaCpp.Position> want = lc.positions(0);
        float[][] got;
        try (LoadedModel model = ModelLoader.load(folder, null)) {
            got = EngineRuns.teacherForcedLogits(model, tokens);
        }
        double worst = 0;
        for (int p = 0; p < tokens.length; p++) {
            double[] ours = EngineRuns.logSoftmax(got[p]);
            for (int id = 0; id < ours.length; id++) {
                worst = Math.max(worst, Math.abs(ours[id] - want.get(p).logprob(id)));
            }
            assertThat(EngineRuns.argmax(got[p])).as("%s position %d top-1 (%s)", modelType, p, lc.version())
                    .isEqualTo(want.get(p).top1());
        }
        System.out.printf("%s folder vs llama.cpp on its twin: worst |logprob diff| %.3g over %d positions; %s%n",
                modelType, worst, tokens.length, lc.version());
        assertThat(worst).as("%s worst |logprob diff| (%s)", modelType, lc.version()).isLessThan(F32_LOGPROB_TOLERANCE);
    }

    @Test
    void tiedModelMayShipItsEmbeddingAsLmHead() throws Exception {
        TinyHfModel m = TinyHfModel.random(config("qwen3"), "qwen3", "F32", 3);
        m.values.put("lm_head.weight", m.values.get("model.embed_tokens.weight"));
        m.shapes.put("lm_head.weight", m.shapes.get("model.embed_tokens.weight"));
        try (LoadedModel model = ModelLoader.load(m.writeFolder(dir.resolve("q"), 1), null)) {
            assertThat(model.config().sharedClassifier()).isTrue();
            assertThat(model.tokenizer()).isNull();
        }
    }
}
