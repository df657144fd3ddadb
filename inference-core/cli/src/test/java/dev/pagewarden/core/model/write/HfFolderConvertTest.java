package dev.pagewarden.core.model.write;

import dev.pagewarden.cli.testing.CliRun;
import dev.pagewarden.core.model.DType;
import dev.pagewarden.core.model.LlamaTensors;
import dev.pagewarden.core.model.RowSource;
import dev.pagewarden.core.model.load.LoadedModel;
import dev.pagewarden.core.model.load.ModelLoader;
import dev.pagewarden.core.testing.TinyBpeTokenizer;
import dev.pagewarden.core.testing.WeightChecks;
import dev.pagewarden.oracle.EngineRuns;
import dev.pagewarden.oracle.LlamaCpp;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.SplittableRandom;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * {@code make-model --format safetensors} writes a Hugging Face folder, and {@code convert --hf-dir}
 * turns a folder into GGUF. Oracle: llama.cpp on the converted file scores tokens as the engine scores
 * them on the folder.
 */
class HfFolderConvertTest {
    /** llama.cpp's F32 scores against the engine's, as the GGUF oracle tests allow. */
    private static final double F32_LOGPROB_TOLERANCE = 1e-4;
    private static final String SHAPE = "dim=64,hidden=160,layers=2,heads=4,kv_heads=2,vocab=512,seq=128,shared=false";

    @TempDir
    Path dir;

    /** A model of {@link #SHAPE} with the tokenizer of {@link TinyBpeTokenizer} (its 512 tokens: the vocabulary size). */
    private Path makeModel(String out, String format, String arch, String dtype, String... extra) throws Exception {
        Path target = dir.resolve(out);
        Path vocab = dir.resolve("vocab");
        if (!Files.isDirectory(vocab)) {
            TinyBpeTokenizer.write(vocab);
        }
        List<String> argv = new ArrayList<>(List.of("make-model", "--shape", SHAPE, "--arch", arch, "--format", format,
                "--dtype", dtype, "--seed", "5", "--out", target.toString(), "--vocab-from", vocab.toString()));
        argv.addAll(List.of(extra));
        CliRun r = CliRun.run(argv.toArray(String[]::new));
        assertThat(r.code()).as(r.err()).isZero();
        return target;
    }

    private static String[] scaling(String arch) {
        return arch.equals("llama") ? new String[]{"--rope-scaling", "llama3"} : new String[0];
    }

    /** The folder and the GGUF file generated with the same seed hold the same model (llama: Q/K rows reordered). */
    @ParameterizedTest(name = "{0}")
    @CsvSource({"llama", "mistral", "qwen2", "qwen3"})
    void aGeneratedFolderIsTheModelOfTheGgufWithTheSameSeed(String arch) throws Exception {
        // (RoPE scaling is no weight to compare: the oracle test below covers it)
        Path folder = makeModel(arch, "safetensors", arch, "f32");
        Path gguf = makeModel(arch + ".gguf", "gguf", arch, "f32");
        assertThat(folder.resolve("config.json")).isRegularFile();
        assertThat(Files.readString(folder.resolve("config.json"))).contains("\"model_type\" : \"" + arch + "\"");
        try (LoadedModel f = ModelLoader.load(folder, null); LoadedModel g = ModelLoader.load(gguf, null)) {
            assertThat(f.format()).isEqualTo("safetensors");
            assertThat(f.config()).isEqualTo(g.config());
            long compared = WeightChecks.assertMatches(f.weights(), slot -> RowSource.of(LlamaTensors.tensor(g.weights(), slot)));
            assertThat(compared).isEqualTo(g.config().parameterCount());
            // the tokenizer came along, with a generation_config.json naming its EOS
            assertThat(f.tokenizer().vocabSize()).isEqualTo(TinyBpeTokenizer.SIZE);
            assertThat(Files.readString(folder.resolve("generation_config.json")))
                    .contains("\"eos_token_id\" : " + TinyBpeTokenizer.END_OF_TEXT);
            assertThat(f.chatTemplate().source()).isEqualTo(g.chatTemplate().source()).contains("<|im_end|>");
        }
    }

    @ParameterizedTest(name = "{0}")
    @CsvSource({"llama", "mistral", "qwen2", "qwen3"})
    void llamaCppRunsTheConvertedFolderAsTheEngineRunsTheFolder(String arch) throws Exception {
        LlamaCpp.require();
        Path folder = makeModel(arch, "safetensors", arch, "f32", scaling(arch));
        Path gguf = dir.resolve(arch + "-converted.gguf");
        CliRun c = CliRun.run("convert", "--hf-dir", folder.toString(), "--out", gguf.toString());
        assertThat(c.code()).as(c.err()).isZero();
        assertThat(c.out()).contains("wrote " + gguf);

        SplittableRandom rnd = new SplittableRandom(9);
        int[] tokens = new int[32];
        for (int i = 0; i < tokens.length; i++) {
            tokens[i] = rnd.nextInt(512);
        }
        String text = "hello world, the quick brown fox <|im_end|> 12 \u00e9t\u00e9 \uD83D\uDE00  end";
        LlamaCpp.Response lc = LlamaCpp.batch(gguf).teacherForced(tokens, 0).tokenize(text, false, false)
                .tokenize(text, true, false).greedy(new int[]{300, 301, 302}, 12, true).run();
        assertThat(lc.model().vocab()).isEqualTo(512);
        assertThat(lc.model().eos()).isEqualTo(TinyBpeTokenizer.END_OF_TEXT);
        float[][] got;
        try (LoadedModel model = ModelLoader.load(folder, null)) {
            got = EngineRuns.teacherForcedLogits(model, tokens);
            assertThat(model.tokenizer().encode(text, false)).containsExactly(lc.tokens(1));
            assertThat(model.tokenizer().encode(text, true)).containsExactly(lc.tokens(2))
                    .contains(TinyBpeTokenizer.IM_END);
            // llama.cpp's stream includes the end-of-generation token it stopped on, the engine's leaves it out
            LlamaCpp.Greedy g = lc.greedy(3);
            int[] want = g.stoppedAtEog() ? java.util.Arrays.copyOf(g.ids(), g.ids().length - 1) : g.ids();
            assertThat(EngineRuns.greedy(model, new int[]{300, 301, 302}, 12)).containsExactly(want);
        }
        double worst = 0;
        for (int p = 0; p < tokens.length; p++) {
            double[] ours = EngineRuns.logSoftmax(got[p]);
            for (int id = 0; id < ours.length; id++) {
                worst = Math.max(worst, Math.abs(ours[id] - lc.positions(0).get(p).logprob(id)));
            }
            assertThat(EngineRuns.argmax(got[p])).as("%s position %d top-1 (%s)", arch, p, lc.version())
                    .isEqualTo(lc.positions(0).get(p).top1());
        }
        System.out.printf("%s: converted folder in llama.cpp vs the folder in the engine: worst |logprob diff| %.3g; %s%n",
                arch, worst, lc.version());
        assertThat(worst).as("%s worst |logprob diff| (%s)", arch, lc.version()).isLessThan(F32_LOGPROB_TOLERANCE);
    }

    @Test
    void aBf16FolderConvertsToAnyType() throws Exception {
        Path folder = makeModel("bf16", "safetensors", "qwen3", "bf16");
        Path q8 = dir.resolve("q8.gguf");
        Path f32 = dir.resolve("f32.gguf");
        assertThat(CliRun.run("convert", "--hf-dir", folder.toString(), "--out", q8.toString(), "--dtype", "q8_0").code()).isZero();
        assertThat(CliRun.run("convert", "--hf-dir", folder.toString(), "--out", f32.toString()).code()).isZero();
        try (LoadedModel f = ModelLoader.load(folder, null); LoadedModel g = ModelLoader.load(f32, null);
             LoadedModel q = ModelLoader.load(q8, null)) {
            assertThat(f.weights().layers().getFirst().wq().type()).isEqualTo(DType.BF16);
            assertThat(q.weights().layers().getFirst().wq().type()).isEqualTo(DType.Q8_0);
            assertThat(g.config()).isEqualTo(f.config());
            // bf16 widens to f32 exactly
            WeightChecks.assertMatches(g.weights(), slot -> RowSource.of(LlamaTensors.tensor(f.weights(), slot)));
        }
    }

    @Test
    void badRequestsAreRefusedWithTheReason() throws Exception {
        CliRun q = CliRun.run("make-model", "--shape", SHAPE, "--format", "safetensors", "--dtype", "q8_0",
                "--out", dir.resolve("q").toString());
        assertThat(q.code()).isNotZero();
        assertThat(q.err()).contains("f32, f16 or bf16").contains("--format gguf");

        CliRun noConfig = CliRun.run("convert", "--hf-dir", dir.toString(), "--out", dir.resolve("x.gguf").toString());
        assertThat(noConfig.code()).isNotZero();
        assertThat(noConfig.err()).contains("without config.json");
        CliRun both = CliRun.run("convert", "--hf-dir", dir.toString(), "--model", "m.gguf", "--out", "x.gguf");
        assertThat(both.code()).isNotZero();
        assertThat(both.err()).contains("either --model FILE or --hf-dir DIR");

        Files.writeString(dir.resolve("file"), "x");
        CliRun onFile = CliRun.run("make-model", "--shape", SHAPE, "--format", "safetensors",
                "--out", dir.resolve("file").toString());
        assertThat(onFile.code()).isNotZero();
        assertThat(onFile.err()).contains("is a file");
    }
}
