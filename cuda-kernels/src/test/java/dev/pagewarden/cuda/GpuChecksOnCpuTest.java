package dev.pagewarden.cuda;

import dev.pagewarden.core.backend.Backend;
import dev.pagewarden.core.backend.BackendOptions;
import dev.pagewarden.core.backend.Backends;
import dev.pagewarden.core.kv.KvStorage;
import dev.pagewarden.core.backend.SequenceStep;
import dev.pagewarden.core.kv.KvLayout;
import dev.pagewarden.core.kv.KvPool;
import dev.pagewarden.core.kv.ReadCheck;
import dev.pagewarden.core.model.ModelConfig;
import dev.pagewarden.core.model.load.LoadedModel;
import dev.pagewarden.core.reference.TinyModelsAccess;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import java.lang.foreign.Arena;
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

    /** A backend whose batched steps round differently from its single ones must fail the check. */
    @Test
    void aBackendThatDependsOnItsBatchFailsIt() {
        Backend skewed = new Backend() {
            @Override
            public String name() {
                return "skewed";
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
            public ReadCheck[] forward(List<SequenceStep> batch, KvPool pool, float[][] logits) {
                ReadCheck[] r = cpu.forward(batch, pool, logits);
                if (batch.size() > 1) {
                    for (int i = 0; i < batch.size(); i++) {
                        logits[i][3] = Math.nextUp(logits[i][3]); // one ulp, on one logit
                    }
                }
                return r;
            }

            @Override
            public void close() {
            }
        };
        int[] tokens = GpuChecks.randomTokens(19, model.config().vocabSize(), 5);
        assertThat(GpuChecks.decodeInvariance(skewed, tokens, 3)).isGreaterThan(0.0);
    }
}
