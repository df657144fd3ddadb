package dev.pagewarden.oracle;

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
import dev.pagewarden.core.model.ModelConfig;
import dev.pagewarden.core.model.load.LoadedModel;
import dev.pagewarden.core.request.GenerationRequest;
import dev.pagewarden.core.request.TokenListener;
import dev.pagewarden.core.sampling.SamplingParams;
import dev.pagewarden.core.step.StepGuard;

import java.util.List;
import java.util.concurrent.TimeUnit;

/**
 * The engine's side of an oracle comparison: the same questions {@link LlamaCpp} asks llama.cpp,
 * answered by the CPU backend (teacher-forced logits) and by the whole engine (greedy streams).
 */
public final class EngineRuns {
    private EngineRuns() {
    }

    /**
     * Logits after every position of {@code tokens}, each token fed as its own decode step on the same
     * sequence, so row {@code p} scores the token after {@code tokens[0..p]}.
     */
    public static float[][] teacherForcedLogits(LoadedModel model, int[] tokens) {
        ModelConfig c = model.config();
        if (tokens.length > c.seqLen()) {
            throw new IllegalArgumentException(tokens.length + " tokens exceed the model's context of " + c.seqLen());
        }
        float[][] rows = new float[tokens.length][];
        try (Backend backend = Backends.select("cpu").create(model, new BackendOptions(2))) {
            KvLayout layout = KvLayout.of(c, 16);
            KvPool pool = new KvPool("oracle", backend.allocateKv(layout, layout.pagesFor(tokens.length)));
            try {
                List<PageRef> pages = pool.allocate(1, "oracle", layout.pagesFor(tokens.length));
                StepGuard guard = new StepGuard(backend, pool, FaultHooks.NONE);
                float[][] logits = {new float[c.vocabSize()]};
                for (int p = 0; p < tokens.length; p++) {
                    var step = new SequenceStep(1, "oracle", new int[]{tokens[p]}, p, pages, true);
                    if (!guard.forward(List.of(step), logits, i -> { })[0].allowed()) {
                        throw new IllegalStateException("step guard refused position " + p);
                    }
                    pool.markWrittenUpTo(1, pages, p + 1);
                    rows[p] = logits[0].clone();
                }
            } finally {
                pool.storage().close();
            }
        }
        return rows;
    }

    /** Logits after the last of {@code tokens}, all of them evaluated as one prefill chunk. */
    public static float[] prefillLastLogits(LoadedModel model, int[] tokens) {
        ModelConfig c = model.config();
        if (tokens.length > c.seqLen()) {
            throw new IllegalArgumentException(tokens.length + " tokens exceed the model's context of " + c.seqLen());
        }
        try (Backend backend = Backends.select("cpu").create(model, new BackendOptions(2))) {
            KvLayout layout = KvLayout.of(c, 16);
            KvPool pool = new KvPool("oracle", backend.allocateKv(layout, layout.pagesFor(tokens.length)));
            try {
                List<PageRef> pages = pool.allocate(1, "oracle", layout.pagesFor(tokens.length));
                StepGuard guard = new StepGuard(backend, pool, FaultHooks.NONE);
                float[][] logits = {new float[c.vocabSize()]};
                var step = new SequenceStep(1, "oracle", tokens.clone(), 0, pages, true);
                if (!guard.forward(List.of(step), logits, i -> { })[0].allowed()) {
                    throw new IllegalStateException("step guard refused the prefill");
                }
                return logits[0];
            } finally {
                pool.storage().close();
            }
        }
    }

    /** The engine's greedy output for {@code prompt}: at most {@code maxTokens}, without the stop token it ended on. */
    public static int[] greedy(LoadedModel model, int[] prompt, int maxTokens) throws Exception {
        try (Engine e = Engine.builder(model, EngineConfig.builder().backend("cpu").threads(2).build()).build()) {
            return e.submit(new GenerationRequest("oracle", prompt, maxTokens, SamplingParams.greedy()), TokenListener.NONE)
                    .result().get(120, TimeUnit.SECONDS).outputTokens();
        }
    }

    /** log(softmax(logits)) in float64: comparable with {@link LlamaCpp.Position} scores. */
    public static double[] logSoftmax(float[] logits) {
        double max = Double.NEGATIVE_INFINITY;
        for (float l : logits) {
            max = Math.max(max, l);
        }
        double sum = 0;
        for (float l : logits) {
            sum += Math.exp(l - max);
        }
        double lse = max + Math.log(sum);
        double[] out = new double[logits.length];
        for (int i = 0; i < logits.length; i++) {
            out[i] = logits[i] - lse;
        }
        return out;
    }

    /** Index of the largest value, the lowest index on ties (as greedy sampling picks). */
    public static int argmax(float[] values) {
        int best = 0;
        for (int i = 1; i < values.length; i++) {
            if (values[i] > values[best]) {
                best = i;
            }
        }
        return best;
    }
}
