package dev.pagewarden.cuda;

import dev.pagewarden.core.backend.Backend;
import dev.pagewarden.core.backend.BackendOptions;
import dev.pagewarden.core.backend.Backends;
import dev.pagewarden.core.kv.KvStorage;
import dev.pagewarden.core.backend.SequenceStep;
import dev.pagewarden.core.kv.KvLayout;
import dev.pagewarden.core.kv.PageRef;
import dev.pagewarden.core.kv.PageTags;
import dev.pagewarden.core.kv.ReadCheck;
import dev.pagewarden.core.model.ModelConfig;
import dev.pagewarden.core.model.load.LoadedModel;
import dev.pagewarden.core.reference.TinyModelsAccess;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The device check's own logic, run here against the CPU backend (which must pass the invariance
 * checks too): so a check that could not fail, or that fails a correct backend, is caught without a
 * GPU. The GPU runs the same code in gpu-check and GpuParityTest.
 */
class GpuChecksOnCpuTest {
    private LoadedModel model;
    private Backend cpu;

    @BeforeEach
    void tinyModel() {
        ModelConfig c = new ModelConfig(64, 160, 2, 8, 2, 300, 128, 1e-5f, 10000f, true);
        model = new LoadedModel(null, "memory", TinyModelsAccess.random(c, 77), null, Arena.ofShared());
        cpu = Backends.select("cpu").create(model, BackendOptions.defaults());
    }

    @AfterEach
    void close() {
        cpu.close();
        model.close();
    }

    @Test
    void theCpuBackendPassesTheDecodeStepInvarianceCheck() {
        int[] tokens = GpuChecks.randomTokens(19, model.config().vocabSize(), 5);
        assertThat(GpuChecks.decodeInvariance(cpu, tokens, 7)).isZero();
        assertThat(GpuChecks.batchInvariance(cpu, tokens, 7)).isZero();
    }

    /**
     * gpu-check's tensor-core check runs a decode step beside 63 neighbours up to n + 64 tokens long: every
     * page table must hold the longest of them, or the step is refused before the invariance is measured.
     */
    @Test
    void theDecodeStepInvarianceCheckRunsBesideSixtyThreeNeighbours() {
        int[] tokens = GpuChecks.randomTokens(20, model.config().vocabSize(), 21);
        assertThat(GpuChecks.decodeInvariance(cpu, tokens, 63)).isZero();
    }

    @Test
    void theGraphChecksBatchedDecodeFeedsEachSequenceItsOwnTokens() {
        int batch = 4;
        int steps = 20;
        List<float[]> batched = GpuChecks.batchedDecode(cpu, batch, steps);
        assertThat(batched).hasSize(batch + batch * steps);
        int vocab = model.config().vocabSize();
        int[] feed = GpuChecks.randomTokens(steps * batch, vocab, 77);
        for (int j = 0; j < batch; j++) {
            int[] prompt = GpuChecks.randomTokens(3 + 5 * j, vocab, 300 + j);
            int[] tokens = java.util.Arrays.copyOf(prompt, prompt.length + steps);
            for (int t = 0; t < steps; t++) {
                tokens[prompt.length + t] = feed[t * batch + j];
            }
            List<float[]> alone = GpuChecks.logits(cpu, tokens, prompt.length);
            assertThat(alone.get(0)).as("prefill %d", j).isEqualTo(batched.get(j));
            for (int t = 0; t < steps; t++) {
                assertThat(alone.get(1 + t)).as("sequence %d step %d", j, t).isEqualTo(batched.get(batch + t * batch + j));
            }
        }
    }

    @Test
    void theCpuBackendPassesTheWriterShadowCheck() {
        int[] tokens = GpuChecks.randomTokens(20, model.config().vocabSize(), 6);
        GpuChecks.ShadowChecks s = GpuChecks.writerShadow(cpu, tokens);
        assertThat(s.slotsWritten()).isEqualTo(20 + 11);
        assertThat(s.wrong()).isZero();
        assertThat(s.scrubZeroes()).isTrue();
        assertThat(s.neighbourKept()).isTrue();
    }

    /** A backend that writes the shadow of its steps' slots wrong (or not at all) must fail the check. */
    @Test
    void aBackendThatLeavesTheShadowUnwrittenFailsIt() {
        // the bytes stay, the shadow of every page the step touched is put back to nobody
        Backend blind = cpuThen("blind", (batch, storage, logits) -> {
            try (Arena arena = Arena.ofConfined()) {
                MemorySegment page = arena.allocate(storage.layout().pageBytes(), 64);
                for (SequenceStep s : batch) {
                    for (PageRef ref : s.pageTable()) {
                        storage.readPage(ref.page(), page);
                        storage.writeSlots(ref.page(), page, storage.layout().pageTokens(),
                                new long[storage.layout().pageTokens()]);
                    }
                }
            }
        });
        int[] tokens = GpuChecks.randomTokens(20, model.config().vocabSize(), 6);
        GpuChecks.ShadowChecks s = GpuChecks.writerShadow(blind, tokens);
        assertThat(s.wrong()).isEqualTo(s.slotsWritten()).isGreaterThan(0);
    }

    /** A backend whose batched steps round differently from its single ones must fail the check. */
    @Test
    void aBackendThatDependsOnItsBatchFailsIt() {
        Backend skewed = cpuThen("skewed", oneUlpWhen(size -> size > 1));
        int[] tokens = GpuChecks.randomTokens(19, model.config().vocabSize(), 5);
        assertThat(GpuChecks.decodeInvariance(skewed, tokens, 3)).isGreaterThan(0.0);
    }

    /** The sweep over batch sizes passes the CPU and finds a backend that goes wrong at one batch size only. */
    @Test
    void theBatchSizeSweepPassesTheCpuAndFindsTheOneBadBatchSize() {
        int[] tokens = GpuChecks.randomTokens(9, model.config().vocabSize(), 8);
        GpuChecks.Sweep ok = GpuChecks.batchInvarianceSweep(cpu, tokens, 5);
        assertThat(ok.batches()).isEqualTo(5);
        assertThat(ok.maxAbsDiff()).isZero();
        Backend atFour = cpuThen("wrong-at-four", oneUlpWhen(size -> size == 4));
        GpuChecks.Sweep bad = GpuChecks.batchInvarianceSweep(atFour, tokens, 5);
        assertThat(bad.maxAbsDiff()).isGreaterThan(0.0);
        assertThat(bad.worstNeighbours()).isEqualTo(3);
    }

    /** What a backend built to fail a check does to a step after the CPU backend ran it. */
    @FunctionalInterface
    private interface AfterStep {
        void apply(List<SequenceStep> batch, KvStorage storage, float[][] logits);
    }

    /** The CPU backend with {@code after} applied to every step: a backend built to fail one check. */
    private Backend cpuThen(String name, AfterStep after) {
        return new Backend() {
            @Override
            public String name() {
                return name;
            }

            @Override
            public ModelConfig config() {
                return cpu.config();
            }

            @Override
            public KvStorage allocateKv(KvLayout layout, int pages) {
                return cpu.allocateKv(layout, pages);
            }

            @Override
            public ReadCheck[] forward(List<SequenceStep> batch, KvStorage storage, PageTags tags, float[][] logits) {
                ReadCheck[] r = cpu.forward(batch, storage, tags, logits);
                after.apply(batch, storage, logits);
                return r;
            }

            @Override
            public void close() {
            }
        };
    }

    /** One ulp added to one logit of every sequence, in steps whose batch size matches. */
    private static AfterStep oneUlpWhen(java.util.function.IntPredicate batchSize) {
        return (batch, storage, logits) -> {
            if (batchSize.test(batch.size())) {
                for (int i = 0; i < batch.size(); i++) {
                    logits[i][3] = Math.nextUp(logits[i][3]);
                }
            }
        };
    }
}
