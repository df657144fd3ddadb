package dev.pagewarden.core.reference;

import dev.pagewarden.core.backend.Backend;
import dev.pagewarden.core.backend.BackendOptions;
import dev.pagewarden.core.backend.Backends;
import dev.pagewarden.core.backend.SequenceStep;
import dev.pagewarden.core.fault.FaultHooks;
import dev.pagewarden.core.kv.KvLayout;
import dev.pagewarden.core.kv.KvPool;
import dev.pagewarden.core.kv.PageRef;
import dev.pagewarden.core.model.ModelConfig;
import dev.pagewarden.core.model.load.LoadedModel;
import dev.pagewarden.core.step.StepGuard;

import java.util.Arrays;
import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;

/** The CPU backend's logits against the float64 {@link ReferenceLlama} on the same weights. */
public final class ReferenceParity {
    private ReferenceParity() {
    }

    /** Largest |fast - ref| relative to the largest |ref| (logits are of order ten; a per-element ratio would blow up near zero). */
    public static double relError(float[] fast, double[] ref) {
        double maxDiff = 0;
        double maxRef = 0;
        for (int i = 0; i < ref.length; i++) {
            maxDiff = Math.max(maxDiff, Math.abs(fast[i] - ref[i]));
            maxRef = Math.max(maxRef, Math.abs(ref[i]));
        }
        return maxDiff / maxRef;
    }

    /** Runs {@code tokens} through the backend, the first {@code prefill} of them as one chunk, then one per step; compares each logits row. */
    public static double worstError(LoadedModel model, int[] tokens, int prefill) {
        ReferenceLlama ref = new ReferenceLlama(model.weights());
        ModelConfig c = model.config();
        try (Backend backend = Backends.select("cpu").create(model, new BackendOptions(2))) {
            KvLayout layout = KvLayout.of(c, 16);
            KvPool pool = new KvPool("test", backend.allocateKv(layout, layout.pagesFor(tokens.length)));
            List<PageRef> pages = pool.allocate(7, "t", layout.pagesFor(tokens.length));
            StepGuard guard = new StepGuard(backend, pool, FaultHooks.NONE);
            float[][] logits = {new float[c.vocabSize()]};
            double worst = 0;
            double[] refLogits = null;
            for (int p = 0; p < prefill; p++) {
                refLogits = ref.forward(tokens[p], p);
            }
            assertThat(guard.forward(List.of(new SequenceStep(7, "t", Arrays.copyOf(tokens, prefill), 0, pages, true)), logits, i -> { })[0].allowed()).isTrue();
            pool.markWrittenUpTo(7, pages, prefill);
            worst = Math.max(worst, relError(logits[0], refLogits));
            for (int p = prefill; p < tokens.length; p++) {
                refLogits = ref.forward(tokens[p], p);
                assertThat(guard.forward(List.of(new SequenceStep(7, "t", new int[]{tokens[p]}, p, pages, true)), logits, i -> { })[0].allowed()).isTrue();
                pool.markWrittenUpTo(7, pages, p + 1);
                worst = Math.max(worst, relError(logits[0], refLogits));
            }
            pool.storage().close();
            return worst;
        }
    }
}
