package dev.pagewarden.oracle;

import dev.pagewarden.core.model.write.Converter;
import dev.pagewarden.core.model.write.ModelGenerator;
import dev.pagewarden.core.model.write.ModelShape;
import dev.pagewarden.core.model.DType;
import dev.pagewarden.core.model.ModelConfig;
import dev.pagewarden.core.model.load.LoadedModel;
import dev.pagewarden.core.model.load.ModelLoader;
import dev.pagewarden.core.testing.TestModels;
import dev.pagewarden.core.tokenizer.Tokenizer;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.SplittableRandom;
import java.util.stream.Stream;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * The engine against llama.cpp (node-llama-cpp's prebuilt CPU build) on the same GGUF files: the
 * converted stories260K (tokenization and greedy streams) and random-weight models written at test time
 * (teacher-forced scores per weight type). Needs {@code npm ci} in {@code src/test/llama-cpp-check}.
 */
class LlamaCppOracleTest {
    /** F32 weights: largest |engine - llama.cpp| log-probability at any position and token. */
    static final double F32_LOGPROB_TOLERANCE = 1e-4;
    /**
     * F16 and Q8_0: llama.cpp rounds activations to the weights' dot-product format (F16, Q8_0) while the
     * engine keeps them in F32, so top-1 may differ only where llama.cpp's own score gap between its top-1
     * and the engine's top-1 is below the type's near-tie threshold, and scores stay within its tolerance.
     */
    static final double F16_NEAR_TIE = 0.01;
    static final double F16_LOGPROB_TOLERANCE = 0.01;
    static final double Q8_0_NEAR_TIE = 0.05;
    static final double Q8_0_LOGPROB_TOLERANCE = 0.08;

    @TempDir
    static Path dir;

    @BeforeAll
    static void oracleAvailable() {
        LlamaCpp.require();
    }

    // ------------------------------------------------------------------------------ stories260K

    static Path stories260KGguf() throws Exception {
        Path file = dir.resolve("stories260K.gguf");
        if (!file.toFile().exists()) {
            Converter.convert(TestModels.stories260K(), TestModels.tok512(), file, DType.F32, total -> done -> { });
        }
        return file;
    }

    static final List<String> TEXTS = List.of(
            "Once upon a time",
            "Lily and Ben went to the park. They saw a big dog!",
            "The cat sat on the mat, and the dog barked: \"Woof woof\".",
            "Tom's mom said, \"Don't be sad.\"",
            "1234567890 apples",
            "  two leading spaces and   three inside",
            "tab\there\nnew line\n\nparagraph",
            "caf\u00e9 na\u00efve \u6771\u4eac \ud83d\ude00",
            "<s> and </s> are text here",
            " ");

    @Test
    void stories260KTokenizationEqualsLlamaCpp() throws Exception {
        Path gguf = stories260KGguf();
        try (LoadedModel model = ModelLoader.load(gguf, null)) {
            Tokenizer tok = new Tokenizer(model.vocabulary());
            // a user text holding the BOS piece itself ("\n<s>\n" in this vocabulary) stays text
            String bosPiece = tok.piece(tok.bos());
            List<String> texts = new ArrayList<>(TEXTS);
            texts.add("The end." + bosPiece + "Once upon a time");
            LlamaCpp.Batch batch = LlamaCpp.batch(gguf);
            for (String text : texts) {
                batch.tokenize(text, false, false).tokenize(text, false, true);
            }
            batch.tokenize(bosPiece, true, false);
            LlamaCpp.Response lc = batch.run();
            assertThat(lc.tokens(2 * texts.size())).as("llama.cpp with special parsing reads the BOS piece as BOS")
                    .containsExactly(tok.bos());
            for (int i = 0; i < texts.size(); i++) {
                String text = texts.get(i);
                assertThat(tok.encode(text, false, false)).as("no BOS: %s (%s)", text, lc.version())
                        .containsExactly(lc.tokens(2 * i));
                assertThat(tok.encode(text, true, false)).as("BOS: %s (%s)", text, lc.version())
                        .containsExactly(lc.tokens(2 * i + 1));
            }
        }
    }

    @Test
    void stories260KGreedyTokensEqualLlamaCpp() throws Exception {
        Path gguf = stories260KGguf();
        List<String> prompts = List.of("Once upon a time", "Lily and Ben went to the park.", "The little dog");
        int maxTokens = 120;
        try (LoadedModel model = ModelLoader.load(gguf, null)) {
            Tokenizer tok = new Tokenizer(model.vocabulary());
            LlamaCpp.Batch batch = LlamaCpp.batch(gguf);
            List<int[]> encoded = new ArrayList<>();
            for (String p : prompts) {
                int[] ids = tok.encode(p, true, false);
                encoded.add(ids);
                batch.greedy(ids, maxTokens, false);
            }
            LlamaCpp.Response lc = batch.run();
            int compared = 0;
            for (int i = 0; i < prompts.size(); i++) {
                int[] engine = EngineRuns.greedy(model, encoded.get(i), maxTokens);
                compared += assertSameGreedyStream(engine, lc.greedy(i).ids(), stopTokens(model), maxTokens,
                        prompts.get(i) + " (" + lc.version() + ")");
            }
            System.out.printf("stories260K greedy: %d tokens identical to %s over %d prompts%n", compared, lc.version(),
                    prompts.size());
            assertThat(compared).as("tokens compared").isGreaterThan(100);
        }
    }

    // ------------------------------------------------------------------------------ random weights

    static Stream<Arguments> randomModels() {
        List<Arguments> out = new ArrayList<>();
        for (DType dtype : List.of(DType.F32, DType.F16, DType.Q8_0)) {
            out.add(Arguments.of("tiny-gqa", dtype));
            out.add(Arguments.of("dim=64,hidden=160,layers=2,heads=4,kv_heads=2,vocab=512,seq=128,shared=false", dtype));
        }
        return out.stream();
    }

    /**
     * Teacher-forced over BOS and 63 random ids: llama.cpp's scores over the whole vocabulary after every
     * position against the engine's logits for the same history, one decode step per position.
     */
    @ParameterizedTest(name = "{1} {0}")
    @MethodSource("randomModels")
    void randomWeightsTeacherForcedMatchLlamaCpp(String shape, DType dtype) throws Exception {
        ModelConfig cfg = ModelShape.parse(shape).config();
        Path gguf = dir.resolve("random-" + Integer.toHexString(shape.hashCode()) + "-" + dtype + ".gguf");
        ModelGenerator.generate(cfg, dtype, ModelGenerator.FileFormat.GGUF, 7, gguf, total -> done -> { });
        int[] tokens = randomTokens(cfg.vocabSize(), 64, shape.hashCode());

        LlamaCpp.Response lc = LlamaCpp.batch(gguf).teacherForced(tokens, 0).run();
        List<LlamaCpp.Position> want = lc.positions(0);
        float[][] got;
        float[] prefill;
        try (LoadedModel model = ModelLoader.load(gguf, null)) {
            got = EngineRuns.teacherForcedLogits(model, tokens);
            prefill = EngineRuns.prefillLastLogits(model, tokens);
        }

        double nearTie = switch (dtype) {
            case F32 -> 0;
            case F16 -> F16_NEAR_TIE;
            case Q8_0 -> Q8_0_NEAR_TIE;
            default -> throw new IllegalArgumentException("no near-tie threshold stated for " + dtype);
        };
        double worst = 0;
        List<String> differing = new ArrayList<>();
        double smallestMargin = Double.POSITIVE_INFINITY;
        for (int p = 0; p < tokens.length; p++) {
            LlamaCpp.Position ref = want.get(p);
            double[] ours = EngineRuns.logSoftmax(got[p]);
            for (int id = 0; id < ours.length; id++) {
                worst = Math.max(worst, Math.abs(ours[id] - ref.logprob(id)));
            }
            smallestMargin = Math.min(smallestMargin, ref.margin());
            int engineTop = EngineRuns.argmax(got[p]);
            if (engineTop != ref.top1()) {
                double gap = ref.logprob(ref.top1()) - ref.logprob(engineTop);
                differing.add("position " + p + ": engine " + engineTop + ", llama.cpp " + ref.top1()
                        + " (llama.cpp gap " + String.format("%.3g", gap) + ")");
                if (dtype == DType.F32) {
                    continue;
                }
                assertThat(gap).as("%s %s position %d: engine top-1 %d vs llama.cpp %d is no near-tie (gap %.4g, "
                                + "threshold %s); all differing: %s (%s)", dtype, shape, p, engineTop, ref.top1(), gap,
                        nearTie, differing, lc.version())
                        .isLessThan(nearTie);
            }
        }
        // the prefill path (the whole history as one chunk) scores the last position the same way
        double[] prefillScores = EngineRuns.logSoftmax(prefill);
        LlamaCpp.Position last = want.get(tokens.length - 1);
        double worstPrefill = 0;
        for (int id = 0; id < prefillScores.length; id++) {
            worstPrefill = Math.max(worstPrefill, Math.abs(prefillScores[id] - last.logprob(id)));
        }
        worst = Math.max(worst, worstPrefill);
        if (dtype == DType.F32) {
            assertThat(EngineRuns.argmax(prefill)).as("F32 prefill top-1").isEqualTo(last.top1());
        }
        String report = String.format("%s %s: worst |logprob diff| %.3g over %d positions x %d tokens; top-1 differs at "
                        + "%d of %d positions (near-tie threshold %s, smallest llama.cpp top-2 margin %.3g) %s; "
                        + "prefill of all %d tokens: last position within %.3g; %s",
                dtype, shape, worst, tokens.length, cfg.vocabSize(), differing.size(), tokens.length, nearTie,
                smallestMargin, differing, tokens.length, worstPrefill, lc.version());
        System.out.println(report);
        double tolerance = switch (dtype) {
            case F32 -> F32_LOGPROB_TOLERANCE;
            case F16 -> F16_LOGPROB_TOLERANCE;
            case Q8_0 -> Q8_0_LOGPROB_TOLERANCE;
            default -> throw new IllegalArgumentException("no tolerance stated for " + dtype);
        };
        if (dtype == DType.F32) {
            assertThat(differing).as("F32: top-1 identical at every position; " + report).isEmpty();
        }
        assertThat(worst).as(report).isLessThan(tolerance);
    }

    /** F32 weights: the engine's greedy stream equals llama.cpp's token for token. */
    @Test
    void randomWeightsF32GreedyEqualsLlamaCpp() throws Exception {
        ModelConfig cfg = ModelShape.parse("tiny-gqa").config();
        Path gguf = dir.resolve("greedy-tiny-gqa-F32.gguf");
        ModelGenerator.generate(cfg, DType.F32, ModelGenerator.FileFormat.GGUF, 3, gguf, total -> done -> { });
        int maxTokens = 48;
        List<int[]> prompts = List.of(randomTokens(cfg.vocabSize(), 8, 1), randomTokens(cfg.vocabSize(), 20, 2));
        LlamaCpp.Batch batch = LlamaCpp.batch(gguf);
        prompts.forEach(p -> batch.greedy(p, maxTokens, false));
        LlamaCpp.Response lc = batch.run();
        try (LoadedModel model = ModelLoader.load(gguf, null)) {
            int compared = 0;
            for (int i = 0; i < prompts.size(); i++) {
                compared += assertSameGreedyStream(EngineRuns.greedy(model, prompts.get(i), maxTokens),
                        lc.greedy(i).ids(), stopTokens(model), maxTokens, "prompt " + i + " (" + lc.version() + ")");
            }
            assertThat(compared).as("tokens compared").isGreaterThan(20);
        }
    }

    /** A bad request to the oracle is refused naming what was wrong, never answered with made-up scores. */
    @Test
    void badRequestsAreRefusedNamingTheInput() throws Exception {
        Path gguf = stories260KGguf();
        assertThatThrownBy(() -> LlamaCpp.teacherForced(gguf, new int[]{1, 512}, 4))
                .isInstanceOf(IllegalStateException.class)
                .hasMessageContaining("teacherForced.tokens[1] = 512 lies outside the 512-token vocabulary");
        Path missing = dir.resolve("missing.gguf");
        assertThatThrownBy(() -> LlamaCpp.greedy(missing, new int[]{1}, 4))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining(missing.toString());
    }

    // ------------------------------------------------------------------------------ helpers

    /** BOS, then ids drawn from a seeded generator above the three special tokens. */
    static int[] randomTokens(int vocab, int n, long seed) {
        SplittableRandom rnd = new SplittableRandom(seed);
        int[] ids = new int[n];
        ids[0] = 1;
        for (int i = 1; i < n; i++) {
            ids[i] = 3 + rnd.nextInt(vocab - 3);
        }
        return ids;
    }

    static int[] stopTokens(LoadedModel model) {
        return new int[]{model.vocabulary().eosId(), model.vocabulary().bosId()};
    }

    /**
     * The engine ends a stream on a stop token, which it does not emit; llama.cpp ran without stopping. So
     * the engine's tokens equal llama.cpp's up to llama.cpp's first stop token, and the engine ends there.
     * Returns the number of tokens compared.
     */
    static int assertSameGreedyStream(int[] engine, int[] llamaCpp, int[] stops, int maxTokens, String what) {
        int end = 0;
        while (end < llamaCpp.length && !isStop(llamaCpp[end], stops)) {
            end++;
        }
        int[] expected = Arrays.copyOf(llamaCpp, Math.min(end, maxTokens));
        assertThat(engine).as("greedy tokens: " + what).containsExactly(expected);
        return expected.length;
    }

    private static boolean isStop(int token, int[] stops) {
        for (int s : stops) {
            if (s == token) {
                return true;
            }
        }
        return false;
    }
}
