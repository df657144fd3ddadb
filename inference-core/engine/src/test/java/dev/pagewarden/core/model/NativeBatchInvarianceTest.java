package dev.pagewarden.core.model;

import dev.pagewarden.core.backend.Backend;
import dev.pagewarden.core.backend.BackendOptions;
import dev.pagewarden.core.backend.Backends;
import dev.pagewarden.core.backend.SequenceStep;
import dev.pagewarden.core.fault.FaultHooks;
import dev.pagewarden.core.kv.KvLayout;
import dev.pagewarden.core.kv.KvPool;
import dev.pagewarden.core.kv.PageRef;
import dev.pagewarden.core.model.load.LoadedModel;
import dev.pagewarden.core.model.load.ModelLoader;
import dev.pagewarden.core.model.write.ModelGenerator;
import dev.pagewarden.core.model.write.ModelShape;
import dev.pagewarden.core.step.StepGuard;
import dev.pagewarden.core.tensor.MatMul;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

import java.nio.file.Path;
import java.security.MessageDigest;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HexFormat;
import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

/**
 * Batch and thread invariance through the CPU backend with the native kernels: the logits of one
 * sequence (a prefill chunk, then decode steps) have the same bits alone and beside two other sequences
 * (whose rows go through the four-row kernels with it), on one kernel thread and on two.
 */
class NativeBatchInvarianceTest {
    @TempDir
    Path dir;

    @ParameterizedTest
    @EnumSource(value = DType.class, names = {"Q8_0", "Q4_0", "Q4_K", "Q5_K", "Q6_K"})
    void logitsAloneAndInABatchOnOneAndTwoThreadsHaveTheSameBits(DType type) throws Exception {
        assumeTrue(MatMul.servesNatively(type), MatMul.kernelsInUse());
        ModelConfig cfg = ModelShape.parse(QuantizedModelParityTest.SHAPE).config();
        Path file = dir.resolve("m-" + type + ".gguf");
        ModelGenerator.generate(cfg, type, ModelGenerator.FileFormat.GGUF, 7, file, total -> done -> { });
        try (LoadedModel model = ModelLoader.load(file, null)) {
            String alone1 = digest(model, 1, false);
            assertThat(digest(model, 1, true)).as("in a batch, one thread").isEqualTo(alone1);
            assertThat(digest(model, 2, false)).as("alone, two threads").isEqualTo(alone1);
            assertThat(digest(model, 2, true)).as("in a batch, two threads").isEqualTo(alone1);
        }
    }

    /** SHA-256 of sequence 1's logits over a 9-token prefill and 6 decode steps. */
    private static String digest(LoadedModel model, int threads, boolean companions) throws Exception {
        ModelConfig c = model.config();
        MessageDigest sha = MessageDigest.getInstance("SHA-256");
        try (Backend backend = Backends.select("cpu").create(model, new BackendOptions(threads))) {
            KvLayout layout = KvLayout.of(c, 16);
            int n = 15;
            KvPool pool = new KvPool("test", backend.allocateKv(layout, 3 * layout.pagesFor(n + 8)));
            StepGuard guard = new StepGuard(backend, pool, FaultHooks.NONE);
            List<List<PageRef>> pages = new ArrayList<>();
            for (int s = 1; s <= 3; s++) {
                pages.add(pool.allocate(s, "t" + s, layout.pagesFor(n + 8)));
            }
            int[][] tokens = new int[3][n + 8];
            for (int s = 0; s < 3; s++) {
                for (int i = 0; i < tokens[s].length; i++) {
                    tokens[s][i] = (31 * i + 97 * s + 5) % c.vocabSize();
                }
            }
            // prefill: sequence 1 has 9 tokens, its companions 5 and 12 (batch rows 26: groups of four and a rest)
            int[] prefill = {9, 5, 12};
            int[] pos = new int[3];
            for (int step = 0; step <= n - 9; step++) {
                List<SequenceStep> batch = new ArrayList<>();
                for (int s = 0; s < (companions ? 3 : 1); s++) {
                    int len = step == 0 ? prefill[s] : 1;
                    batch.add(new SequenceStep(s + 1, "t" + (s + 1), Arrays.copyOfRange(tokens[s], pos[s], pos[s] + len), pos[s],
                            pages.get(s), true));
                }
                float[][] logits = new float[batch.size()][c.vocabSize()];
                assertThat(guard.forward(batch, logits, i -> { })[0].allowed()).isTrue();
                for (int s = 0; s < batch.size(); s++) {
                    pos[s] += batch.get(s).tokens().length;
                    pool.markWrittenUpTo(s + 1, pages.get(s), pos[s]);
                }
                for (float f : logits[0]) {
                    int bits = Float.floatToRawIntBits(f);
                    sha.update(new byte[] {(byte) bits, (byte) (bits >> 8), (byte) (bits >> 16), (byte) (bits >> 24)});
                }
            }
            pool.storage().close();
        }
        return HexFormat.of().formatHex(sha.digest());
    }
}
