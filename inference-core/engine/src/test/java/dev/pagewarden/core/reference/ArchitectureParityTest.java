package dev.pagewarden.core.reference;

import dev.pagewarden.core.model.write.ModelGenerator;
import dev.pagewarden.core.model.write.ModelShape;
import dev.pagewarden.core.backend.Backend;
import dev.pagewarden.core.backend.BackendOptions;
import dev.pagewarden.core.backend.Backends;
import dev.pagewarden.core.backend.SequenceStep;
import dev.pagewarden.core.engine.Engine;
import dev.pagewarden.core.engine.EngineConfig;
import dev.pagewarden.core.fault.FaultHooks;
import dev.pagewarden.core.kv.KvLayout;
import dev.pagewarden.core.kv.KvPool;
import dev.pagewarden.core.kv.PageRef;
import dev.pagewarden.core.model.Architecture;
import dev.pagewarden.core.model.DType;
import dev.pagewarden.core.model.ModelConfig;
import dev.pagewarden.core.model.load.LoadedModel;
import dev.pagewarden.core.model.load.ModelLoader;
import dev.pagewarden.core.request.GenerationRequest;
import dev.pagewarden.core.request.TokenListener;
import dev.pagewarden.core.sampling.SamplingParams;
import dev.pagewarden.core.step.StepGuard;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Every architecture, written by make-model's generator as GGUF and read back by the loader, runs on
 * the CPU backend as the float64 reference computes it (logits within {@link FastPathParityTest#MAX_REL_ERROR}),
 * gives the same bits batched as alone, and decodes greedily through the engine as the reference does.
 */
class ArchitectureParityTest {
    /**
     * Small, with GQA; the vocabulary is large enough to carry the synthetic tokenizer. A separate
     * classifier: with random weights a tied one mostly repeats the last token, a weak greedy check.
     */
    static final String SHAPE = "dim=64,hidden=128,layers=2,heads=4,kv_heads=2,vocab=300,seq=96,shared=false";
    static final String TIED = "dim=64,hidden=128,layers=2,heads=4,kv_heads=2,vocab=300,seq=96";
    /** Qwen 3's head size is not dim / heads in most of its sizes (0.6B: 1024 / 16 heads of 128). */
    static final String WIDE_HEADS = SHAPE + ",head_dim=32";

    @TempDir
    static Path dir;

    static Stream<Arguments> architectures() {
        return Stream.of(
                Arguments.of("llama", SHAPE, null),
                Arguments.of("llama", SHAPE, "llama3"),
                Arguments.of("mistral", SHAPE, null),
                Arguments.of("qwen2", SHAPE, null),
                Arguments.of("qwen2", TIED, null),
                Arguments.of("qwen3", SHAPE, null),
                Arguments.of("qwen3", WIDE_HEADS, null));
    }

    static LoadedModel generated(String arch, String shape, String ropeScaling) throws Exception {
        ModelConfig cfg = ModelShape.parse(shape).forArchitecture(arch, ropeScaling).config();
        Path file = dir.resolve(arch + "-" + cfg.headSize() + "-" + ropeScaling + "-" + cfg.sharedClassifier() + ".gguf");
        ModelGenerator.generate(cfg, DType.F32, ModelGenerator.FileFormat.GGUF, 7, file, size -> done -> { });
        LoadedModel model = ModelLoader.load(file, null);
        assertThat(model.config()).as("loader reads back what the generator wrote").isEqualTo(cfg);
        return model;
    }

    static int[] randomTokens(Random rnd, int n, int vocab) {
        int[] t = new int[n];
        for (int i = 0; i < n; i++) {
            t[i] = 3 + rnd.nextInt(vocab - 3);
        }
        return t;
    }

    @ParameterizedTest(name = "{0} {1} rope scaling {2}")
    @MethodSource("architectures")
    void logitsMatchTheFloat64Reference(String arch, String shape, String ropeScaling) throws Exception {
        try (LoadedModel model = generated(arch, shape, ropeScaling)) {
            int[] tokens = randomTokens(new Random(11), 60, model.config().vocabSize());
            double err = ReferenceParity.worstError(model, tokens, 25);
            System.out.printf("%s %s rope scaling %s: worst logits relative error %.3g%n", arch, shape, ropeScaling, err);
            assertThat(err).isLessThan(FastPathParityTest.MAX_REL_ERROR);
        }
    }

    @ParameterizedTest(name = "{0} {1} rope scaling {2}")
    @MethodSource("architectures")
    void batchedLogitsAreBitIdenticalToAlone(String arch, String shape, String ropeScaling) throws Exception {
        try (LoadedModel model = generated(arch, shape, ropeScaling)) {
            Random rnd = new Random(5);
            List<int[]> prompts = List.of(randomTokens(rnd, 9, 300), randomTokens(rnd, 40, 300), randomTokens(rnd, 1, 300));
            float[][][] together = run(model, prompts, true);
            float[][][] alone = run(model, prompts, false);
            for (int step = 0; step < together.length; step++) {
                for (int i = 0; i < prompts.size(); i++) {
                    assertThat(together[step][i]).as("step %d sequence %d", step, i).isEqualTo(alone[step][i]);
                }
            }
        }
    }

    /** A prefill chunk and three decode steps for each prompt, all sequences in one step or each in its own. */
    static float[][][] run(LoadedModel model, List<int[]> prompts, boolean together) {
        ModelConfig c = model.config();
        int steps = 4;
        float[][][] out = new float[steps][prompts.size()][c.vocabSize()];
        try (Backend backend = Backends.select("cpu").create(model, new BackendOptions(2))) {
            KvLayout layout = KvLayout.of(c, 16);
            int perSeq = layout.pagesFor(64);
            KvPool pool = new KvPool("test", backend.allocateKv(layout, perSeq * prompts.size()));
            StepGuard guard = new StepGuard(backend, pool, FaultHooks.NONE);
            List<List<PageRef>> pages = new ArrayList<>();
            for (int i = 0; i < prompts.size(); i++) {
                pages.add(pool.allocate(10 + i, "t" + i, perSeq));
            }
            int[] next = new int[prompts.size()];
            int[] pos = new int[prompts.size()];
            for (int step = 0; step < steps; step++) {
                List<SequenceStep> batch = new ArrayList<>();
                for (int i = 0; i < prompts.size(); i++) {
                    int[] tokens = step == 0 ? prompts.get(i) : new int[] {next[i]};
                    batch.add(new SequenceStep(10 + i, "t" + i, tokens, pos[i], pages.get(i), true));
                }
                if (together) {
                    float[][] logits = out[step];
                    assertThat(guard.forward(batch, logits, i -> { })).allMatch(r -> r.allowed());
                } else {
                    for (int i = 0; i < batch.size(); i++) {
                        float[][] logits = {out[step][i]};
                        assertThat(guard.forward(List.of(batch.get(i)), logits, x -> { })[0].allowed()).isTrue();
                    }
                }
                for (int i = 0; i < prompts.size(); i++) {
                    pos[i] += batch.get(i).tokens().length;
                    pool.markWrittenUpTo(10 + i, pages.get(i), pos[i]);
                    next[i] = argmax(out[step][i]);
                }
            }
            pool.storage().close();
        }
        return out;
    }

    static int argmax(float[] v) {
        int best = 0;
        for (int i = 1; i < v.length; i++) {
            if (v[i] > v[best]) {
                best = i;
            }
        }
        return best;
    }

    @ParameterizedTest(name = "{0} {1} rope scaling {2}")
    @MethodSource("architectures")
    void greedyEngineDecodeEqualsTheReference(String arch, String shape, String ropeScaling) throws Exception {
        try (LoadedModel model = generated(arch, shape, ropeScaling)) {
            int[] prompt = randomTokens(new Random(3), 12, model.config().vocabSize());
            int maxNew = 40;
            List<ReferenceLlama.Step> ref = ReferenceLlama.greedySteps(new ReferenceLlama(model.weights()), prompt, maxNew);
            int[] engineOut;
            try (Engine e = Engine.builder(model, EngineConfig.builder().backend("cpu").build()).build()) {
                engineOut = e.submit(new GenerationRequest("t", prompt, maxNew, SamplingParams.greedy()), TokenListener.NONE)
                        .result().get(60, TimeUnit.SECONDS).outputTokens();
            }
            int refLen = 0;
            int eos = model.vocabulary().eosId();
            int bos = model.vocabulary().bosId();
            while (refLen < ref.size() && ref.get(refLen).token() != eos && ref.get(refLen).token() != bos) {
                refLen++;
            }
            int same = 0;
            while (same < engineOut.length && engineOut[same] == ref.get(same).token()) {
                same++;
            }
            if (same < Math.min(engineOut.length, refLen)) {
                ReferenceLlama.Step s = ref.get(same);
                System.out.printf("%s: near-tie at step %d, margin %g%n", arch, same, s.margin());
                assertThat(s.margin()).as("step %d: engine %d, reference %d is no near-tie", same, engineOut[same],
                        s.token()).isLessThan(1e-4);
            } else {
                assertThat(engineOut.length).as("engine stops where the reference emits BOS/EOS").isEqualTo(refLen);
            }
            System.out.printf("%s %s: %d greedy tokens identical%n", arch, shape, same);
            assertThat(same).isGreaterThan(maxNew / 2);
        }
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("architectures")
    void theArchitectureIsWhatTheFileDeclares(String arch, String shape, String ropeScaling) throws Exception {
        try (LoadedModel model = generated(arch, shape, ropeScaling)) {
            Architecture expected = switch (arch) {
                case "qwen2" -> Architecture.QWEN2;
                case "qwen3" -> Architecture.QWEN3;
                default -> Architecture.LLAMA; // llama.cpp converts Mistral to llama
            };
            assertThat(model.config().architecture()).isEqualTo(expected);
            assertThat(model.config().ropeScaling() != null).isEqualTo(ropeScaling != null);
        }
    }
}
