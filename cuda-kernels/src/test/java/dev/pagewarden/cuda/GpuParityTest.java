package dev.pagewarden.cuda;

import dev.pagewarden.core.model.write.ModelGenerator;
import dev.pagewarden.core.backend.Backend;
import dev.pagewarden.core.backend.BackendOptions;
import dev.pagewarden.core.backend.BackendProvider;
import dev.pagewarden.core.backend.Backends;
import dev.pagewarden.core.engine.Engine;
import dev.pagewarden.core.engine.EngineConfig;
import dev.pagewarden.core.kv.ReadCheck;
import dev.pagewarden.core.model.DType;
import dev.pagewarden.core.model.LlamaWeights;
import dev.pagewarden.core.model.ModelConfig;
import dev.pagewarden.core.model.load.LoadedModel;
import dev.pagewarden.core.model.load.ModelLoader;
import dev.pagewarden.core.reference.ReferenceLlama;
import dev.pagewarden.core.reference.TinyModelsAccess;
import dev.pagewarden.core.request.GenerationRequest;
import dev.pagewarden.core.request.TokenListener;
import dev.pagewarden.core.safety.SafetyEvent;
import dev.pagewarden.core.sampling.SamplingParams;
import dev.pagewarden.core.spi.EngineMetrics;
import dev.pagewarden.core.testing.RealModelTest;
import dev.pagewarden.core.tokenizer.Tokenizer;
import dev.pagewarden.cuda.cli.GpuCheckCommand;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

import dev.pagewarden.core.model.write.ModelGenerator;
import dev.pagewarden.core.model.write.ModelShape;
import dev.pagewarden.core.model.DType;
import dev.pagewarden.core.model.load.ModelLoader;
import org.junit.jupiter.api.io.TempDir;

import java.lang.foreign.Arena;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The GPU backend against the float64 reference and the CPU backend. Needs a GPU: on a machine
 * without one every test here is skipped with the reason printed (also under CI=true - CI has no
 * GPU; the device check runs these same checks through {@code gpu-check}).
 */
class GpuParityTest extends RealModelTest {
    static final double MAX_REL_ERROR = 1e-4;

    @BeforeAll
    static void requireGpu() {
        BackendProvider gpu = Backends.all().stream().filter(p -> p.name().equals("gpu")).findFirst().orElseThrow();
        if (!gpu.available()) {
            String why = "no usable GPU: " + gpu.unavailableReason();
            System.out.println("SKIPPED GpuParityTest: " + why);
            Assumptions.abort(why);
        }
    }

    /**
     * The worst relative error (largest |gpu - reference| over the largest |reference| of a position) of the
     * GPU's logits, one row per position from {@code prefill - 1} on, against the float64 reference run
     * over every token.
     */
    static double worstAgainstReference(ReferenceLlama ref, int[] tokens, int prefill, List<float[]> gpu) {
        double worst = 0;
        for (int p = 0; p < tokens.length; p++) {
            double[] r = ref.forward(tokens[p], p);
            if (p >= prefill - 1) {
                float[] g = gpu.get(p - prefill + 1);
                double maxDiff = 0;
                double maxRef = 0;
                for (int i = 0; i < r.length; i++) {
                    maxDiff = Math.max(maxDiff, Math.abs(g[i] - r[i]));
                    maxRef = Math.max(maxRef, Math.abs(r[i]));
                }
                worst = Math.max(worst, maxDiff / maxRef);
            }
        }
        return worst;
    }

    static int[] storyTokens(int extra) {
        int[] prompt = new Tokenizer(model.vocabulary()).encode("Once upon a time, in a big forest, there lived a tiny rabbit", true, false);
        int[] tokens = Arrays.copyOf(prompt, prompt.length + extra);
        System.arraycopy(GpuChecks.randomTokens(extra, model.config().vocabSize(), 3), 0, tokens, prompt.length, extra);
        return tokens;
    }

    @Test
    void realModelLogitsMatchTheFloat64ReferenceAndTheCpu() {
        int[] tokens = storyTokens(40);
        int prefill = tokens.length - 40;
        ReferenceLlama ref = new ReferenceLlama(model.weights());
        List<float[]> gpu;
        try (Backend g = Backends.select("gpu").create(model, BackendOptions.defaults())) {
            gpu = GpuChecks.logits(g, tokens, prefill);
        }
        double worst = worstAgainstReference(ref, tokens, prefill, gpu);
        System.out.printf("gpu vs float64 reference: worst relative error %.3g%n", worst);
        assertThat(worst).isLessThan(MAX_REL_ERROR);
        double cpu = GpuChecks.parity(model, tokens, prefill);
        System.out.printf("gpu vs cpu: worst relative error %.3g%n", cpu);
        assertThat(cpu).isLessThan(MAX_REL_ERROR);
    }

    @Test
    void randomShapesWithGroupedQueryAttentionMatchTheCpu() {
        for (ModelConfig c : List.of(new ModelConfig(64, 160, 2, 8, 2, 300, 128, 1e-5f, 10000f, true),
                new ModelConfig(48, 100, 3, 6, 3, 97, 96, 1e-6f, 500000f, false))) {
            LlamaWeights w = TinyModelsAccess.random(c, c.dim() * 31L);
            try (LoadedModel m = new LoadedModel(null, "memory", w, null, Arena.ofShared())) {
                double e = GpuChecks.parity(m, GpuChecks.randomTokens(50, c.vocabSize(), c.dim()), 20);
                System.out.printf("%s: gpu vs cpu %.3g%n", c, e);
                assertThat(e).as(c.toString()).isLessThan(MAX_REL_ERROR);
            }
        }
    }

    @Test
    void qwenAndScaledLlamaModelsMatchTheCpuAndTheFusedRopeChangesNoBit(@TempDir Path dir) throws Exception {
        String base = "dim=64,hidden=160,layers=2,heads=8,kv_heads=2,vocab=300,seq=96,shared=false";
        String[][] cases = {{"qwen2", null, base}, {"qwen3", null, base + ",head_dim=12"}, {"llama", "llama3", base}};
        for (String[] c : cases) {
            ModelConfig cfg = ModelShape.parse(c[2]).forArchitecture(c[0], c[1]).config();
            Path f = dir.resolve(c[0] + ".gguf");
            ModelGenerator.generate(cfg, DType.F32, ModelGenerator.FileFormat.GGUF, 3, f, size -> done -> { });
            try (LoadedModel m = ModelLoader.load(f, null)) {
                int[] tokens = GpuChecks.randomTokens(50, cfg.vocabSize(), 5);
                double e = GpuChecks.parity(m, tokens, 20);
                System.out.printf("%s %s: gpu vs cpu %.3g%n", c[0], c[1], e);
                assertThat(e).as(c[0]).isLessThan(MAX_REL_ERROR);
                assertThat(GpuChecks.fusedRopeDifference(m, tokens, 20)).as(c[0]).isZero();
            }
        }
    }

    @Test
    void cudaGraphsReplayStepsWithTheSameBits() {
        GpuChecks.GraphChecks g = GpuChecks.graphs(model, storyTokens(30), storyTokens(0).length, 8, 40);
        System.out.printf("graphs: %d captured, max diff %s, batched %s%n", g.captured(), g.maxAbsDiff(),
                g.batchedMaxAbsDiff());
        assertThat(g.captured()).isGreaterThan(1);
        assertThat(g.maxAbsDiff()).isZero();
        assertThat(g.batchedMaxAbsDiff()).isZero();
    }

    @Test
    void greedyTokensThroughTheEngineEqualTheCpuEngine() throws Exception {
        int[] prompt = new Tokenizer(model.vocabulary()).encode("Once upon a time", true, false);
        int[][] out = new int[2][];
        String[] names = {"gpu", "cpu"};
        for (int i = 0; i < 2; i++) {
            try (Engine e = Engine.builder(model, EngineConfig.builder().backend(names[i]).build()).build()) {
                out[i] = e.submit(new GenerationRequest("t", prompt, 200, SamplingParams.greedy()), TokenListener.NONE)
                        .result().get(120, TimeUnit.SECONDS).outputTokens();
            }
        }
        int same = 0;
        while (same < Math.min(out[0].length, out[1].length) && out[0][same] == out[1][same]) {
            same++;
        }
        System.out.println("greedy gpu vs cpu: " + same + " identical tokens of " + out[1].length);
        if (same < out[1].length) {
            try (Backend cpu = Backends.select("cpu").create(model, BackendOptions.defaults())) {
                double margin = GpuChecks.greedy(cpu, prompt, same + 1).margins()[same];
                assertThat(margin).as("divergence at %d is no near-tie", same).isLessThan(1e-3);
            }
        } else {
            assertThat(out[0]).isEqualTo(out[1]);
        }
    }

    /**
     * With -Dpagewarden.gpu.gemm=true (skipped otherwise): the tensor-core path on generated F16 and BF16
     * models against the float64 reference, within the f16/bf16 activation-rounding tolerance of
     * gpu-check, and bit-identical logits alone and among 1..64 neighbours.
     */
    @Test
    void theTensorCorePathMatchesTheFloat64ReferenceAndIsBatchInvariant() throws Exception {
        Assumptions.assumeTrue(GpuBackend.GEMM, "the tensor-core path runs with -Dpagewarden.gpu.gemm=true");
        ModelConfig shape = new ModelConfig(256, 512, 2, 8, 2, 512, 128, 1e-5f, 10000f, false);
        Path dir = Files.createTempDirectory("pagewarden-gemm");
        try {
            for (var type : List.of(DType.F16, DType.BF16)) {
                Path f = dir.resolve("random-" + type + ".gguf");
                ModelGenerator.generate(shape, type,
                        ModelGenerator.FileFormat.GGUF, 5, f, size -> done -> { });
                try (LoadedModel m = ModelLoader.load(f, null)) {
                    int[] tokens = GpuChecks.randomTokens(40, shape.vocabSize(), 9);
                    int prefill = 24;
                    List<float[]> gpu;
                    try (Backend g = Backends.select("gpu").create(m, BackendOptions.defaults())) {
                        gpu = GpuChecks.logits(g, tokens, prefill);
                        assertThat(GpuChecks.batchInvarianceSweep(g, Arrays.copyOf(tokens, 20), 64).maxAbsDiff()).isZero();
                    }
                    ReferenceLlama ref = new ReferenceLlama(m.weights());
                    double worst = worstAgainstReference(ref, tokens, prefill, gpu);
                    double tolerance = type == DType.BF16
                            ? GpuCheckCommand.MAX_REL_ERROR_GEMM_BF16 : GpuCheckCommand.MAX_REL_ERROR_GEMM_F16;
                    System.out.printf("gemm %s vs float64 reference: worst relative error %.3g (tolerance %.1g)%n", type, worst,
                            tolerance);
                    assertThat(worst).isLessThan(tolerance);
                }
                Files.deleteIfExists(f);
            }
        } finally {
            Files.deleteIfExists(dir);
        }
    }

    @Test
    void aSequencesLogitsDoNotDependOnItsBatch() {
        try (Backend g = Backends.select("gpu").create(model, BackendOptions.defaults())) {
            assertThat(GpuChecks.batchInvariance(g, storyTokens(5), 7)).isZero();
            assertThat(GpuChecks.batchInvariance(g, storyTokens(0), 31)).isZero();
            assertThat(GpuChecks.decodeInvariance(g, storyTokens(5), 7)).isZero();
        }
    }

    @Test
    void theKernelsRefuseStaleEpochsUnwrittenSlotsAndScrubbedPages() {
        GpuChecks.TagChecks t = GpuChecks.tagChecks(model, storyTokens(4));
        System.out.println("in-kernel checks: " + t.details());
        assertThat(t.staleEpoch()).isEqualTo(ReadCheck.Violation.OWNER_TAG_MISMATCH);
        assertThat(t.unwritten()).isEqualTo(ReadCheck.Violation.UNWRITTEN_SLOT_READ);
        assertThat(t.scrubbedRead()).isEqualTo(ReadCheck.Violation.OWNER_TAG_MISMATCH);
        assertThat(t.neighbourUntouched()).isTrue();
    }

    @Test
    void theWriterShadowNamesTheWriterOfEverySlotAndAScrubZeroesIt() {
        try (Backend g = Backends.select("gpu").create(model, BackendOptions.defaults())) {
            GpuChecks.ShadowChecks s = GpuChecks.writerShadow(g, storyTokens(10));
            assertThat(s.slotsWritten()).isGreaterThan(0);
            assertThat(s.wrong()).isZero();
            assertThat(s.scrubZeroes()).isTrue();
            assertThat(s.neighbourKept()).isTrue();
        }
    }

    @Test
    void deviceChecksumsEqualTheTransferFrameChecksumAndScrubZeroes() {
        GpuChecks.ChecksumChecks c = GpuChecks.checksums(model, storyTokens(30));
        assertThat(c.pagesCompared()).isGreaterThan(1);
        assertThat(c.mismatches()).isZero();
        assertThat(c.corruptionDetected()).isTrue();
        assertThat(c.scrubZeroes()).isTrue();
    }

    @Test
    void everyQuantizedTileDecodesOnTheDeviceAsTheCpuDecodeRoundedToFp16() {
        List<GpuChecks.QuantDecode> decode = GpuChecks.quantDecode();
        assertThat(decode).extracting(GpuChecks.QuantDecode::type).containsExactlyElementsOf(QuantPacking.TYPES);
        for (GpuChecks.QuantDecode q : decode) {
            System.out.println("tile decode " + q);
            assertThat(q.values()).isPositive();
            assertThat(q.mismatches()).as("%s: %s", q.type(), q.first()).isZero();
        }
    }

    @Test
    void aBf16ModelMatchesTheCpu() throws Exception {
        ModelConfig shape = new ModelConfig(256, 512, 2, 8, 2, 512, 128, 1e-5f, 10000f, false);
        java.nio.file.Path f = java.nio.file.Files.createTempFile("pw-bf16", ".gguf");
        try {
            dev.pagewarden.core.model.write.ModelGenerator.generate(shape, dev.pagewarden.core.model.DType.BF16,
                    dev.pagewarden.core.model.write.ModelGenerator.FileFormat.GGUF, 5, f, size -> done -> { });
            try (LoadedModel m = dev.pagewarden.core.model.load.ModelLoader.load(f, null)) {
                double e = GpuChecks.parity(m, GpuChecks.randomTokens(60, shape.vocabSize(), 9), 24);
                System.out.printf("bf16: gpu vs cpu %.3g%n", e);
                assertThat(e).isLessThan(MAX_REL_ERROR);
            }
        } finally {
            java.nio.file.Files.deleteIfExists(f);
        }
    }
}
