package dev.pagewarden.cli.bench;

import dev.pagewarden.core.engine.Engine;
import dev.pagewarden.core.engine.EngineConfig;
import dev.pagewarden.core.grammar.GrammarConstraints;
import dev.pagewarden.core.grammar.JsonGrammar;
import dev.pagewarden.core.model.load.LoadedModel;
import dev.pagewarden.core.request.GenerationRequest;
import dev.pagewarden.core.request.RequestHandle;
import dev.pagewarden.core.request.TokenListener;
import dev.pagewarden.core.sampling.SamplingParams;
import dev.pagewarden.core.sampling.TokenConstraint;

import java.io.PrintStream;
import java.util.ArrayList;
import java.util.BitSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.SplittableRandom;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * Structured output over a model's vocabulary: the time a request waits for each new grammar state's token mask
 * along a path through a schema, with every mask computed on demand (no warming) and after a grammar's background
 * warming; and the decode speed of an unconstrained request while a constrained request with a new schema starts
 * beside it, both ways (medians of alternating runs).
 */
public final class GrammarBench {
    /** A schema with a nested object, an enum, bounded strings, an array and a number. */
    static final String SCHEMA = """
            {"type":"object","properties":{"name":{"type":"string","minLength":1,"maxLength":12},
             "mood":{"enum":["happy","sad","calm"]},"pet":{"type":"object","properties":{"kind":{"type":"string",
             "maxLength":8},"age":{"type":"integer"}},"required":["kind","age"]},"tags":{"type":"array",
             "minItems":1,"maxItems":3,"items":{"type":"string","maxLength":6}},"score":{"type":"number"}},
             "required":["name","mood","pet","tags","score"]}""";

    /** What to run: the backend, the path's length in states, the tokens of the unconstrained request. */
    public record Options(String backend, int threads, int pathStates, int backgroundTokens, int warmStates,
                          int repeats) {
        public Options {
            if (pathStates < 1 || backgroundTokens < 20 || warmStates < 1 || repeats < 1) {
                throw new IllegalArgumentException("grammar-bench needs --path-states >= 1, --background-tokens >= 20, "
                        + "--warm-states >= 1 and --repeats >= 1");
            }
        }
    }

    private GrammarBench() {
    }

    public static Map<String, Object> run(LoadedModel model, Options o, PrintStream log) throws Exception {
        Map<String, Object> report = new LinkedHashMap<>();
        report.put("vocabulary", model.tokenizer().vocabSize());
        report.put("model_dim", model.config().dim());
        report.put("layers", model.config().nLayers());

        // the same path (a seeded random walk over allowed tokens) cold and warmed; a fresh schema text each run
        List<Double> cold = path(new GrammarConstraints(model.tokenizer(), 0).constraint(grammar(0)), o.pathStates());
        TokenConstraint warm = new GrammarConstraints(model.tokenizer(), o.warmStates()).constraint(grammar(0));
        long t0 = System.nanoTime();
        GrammarConstraints.awaitWarm(warm);
        double warmSeconds = (System.nanoTime() - t0) / 1e9;
        List<Double> warmed = path(warm, o.pathStates());
        report.put("path_states", cold.size());
        report.put("mask_ms_on_demand_mean", round(mean(cold)));
        report.put("mask_ms_on_demand_max", round(max(cold)));
        report.put("warm_states", o.warmStates());
        report.put("warm_seconds", round(warmSeconds));
        report.put("mask_ms_after_warming_mean", round(mean(warmed)));
        report.put("mask_ms_after_warming_max", round(max(warmed)));
        report.put("path_states_found_warm", warmed.stream().filter(ms -> ms < 1.0).count());
        log.printf("masks along %d states: on demand %.1f ms mean, after warming %d states in %.1f s %.2f ms mean%n",
                cold.size(), mean(cold), o.warmStates(), warmSeconds, mean(warmed));

        EngineConfig config = EngineConfig.builder().backend(o.backend()).threads(o.threads())
                .contextWindow(model.config().seqLen()).build();
        try (Engine engine = Engine.builder(model, config).build()) {
            // first runs pay the kernels' compilation: not measured
            stall(engine, model, o, 0, 1);
            stall(engine, model, o, 0, 2);
            // the two ways alternate, each with a schema new to it, so drift on the machine falls on both
            Map<Integer, List<Stall>> runs = new LinkedHashMap<>();
            for (int r = 0; r < o.repeats(); r++) {
                for (int budget : new int[] {0, o.warmStates()}) {
                    Stall s = stall(engine, model, o, budget, 3 + 2 * r + (budget == 0 ? 0 : 1));
                    runs.computeIfAbsent(budget, b -> new ArrayList<>()).add(s);
                    log.printf("unconstrained decode, warming %d states: %.1f tok/s alone, %.1f tok/s while a new "
                            + "schema starts (longest gap %.0f ms)%n", budget, s.aloneTokS, s.besideTokS, s.maxGapMs);
                }
            }
            runs.forEach((budget, list) -> {
                String k = budget == 0 ? "on_demand" : "warming";
                report.put("background_tok_s_alone_" + k, round(median(list.stream().map(Stall::aloneTokS).toList())));
                report.put("background_tok_s_beside_new_schema_" + k,
                        round(median(list.stream().map(Stall::besideTokS).toList())));
                report.put("background_max_gap_ms_" + k, round(median(list.stream().map(Stall::maxGapMs).toList())));
            });
        }
        return report;
    }

    /** {@link #SCHEMA} with a distinct variant per {@code n}, so each run compiles and warms anew. */
    private static JsonGrammar grammar(int n) {
        return JsonGrammar.compile(SCHEMA.replace("\"maxLength\":12", "\"maxLength\":" + (12 + n)));
    }

    /** Milliseconds to read each state's mask along a seeded random walk of {@code states} states. */
    private static List<Double> path(TokenConstraint c, int states) {
        SplittableRandom rnd = new SplittableRandom(5);
        List<Double> ms = new ArrayList<>();
        TokenConstraint.State s = c.start();
        for (int i = 0; i < states; i++) {
            long t = System.nanoTime();
            BitSet allowed = s.allowed();
            boolean complete = s.complete();
            ms.add((System.nanoTime() - t) / 1e6);
            if (complete || allowed.isEmpty()) {
                break;
            }
            int pick = allowed.nextSetBit(0);
            for (int skip = rnd.nextInt(Math.min(allowed.cardinality(), 50)); skip > 0; skip--) {
                pick = allowed.nextSetBit(pick + 1);
            }
            s = s.advance(pick);
        }
        return ms;
    }

    private record Stall(double aloneTokS, double besideTokS, double maxGapMs) {
    }

    /**
     * An unconstrained request decodes {@code backgroundTokens}; after a fifth of them a constrained request with a
     * new schema is submitted. Its tokens per second before that point, and from then to the end, with the longest
     * gap between two of its tokens after it.
     */
    private static Stall stall(Engine engine, LoadedModel model, Options o, int warmStates, int schema) throws Exception {
        int[] prompt = {1, 2, 3, 4, 5, 6, 7, 8};
        long[] at = new long[o.backgroundTokens()];
        AtomicInteger n = new AtomicInteger();
        int split = o.backgroundTokens() / 5;
        CountDownLatch reached = new CountDownLatch(1);
        RequestHandle background = engine.submit(new GenerationRequest("plain", prompt, o.backgroundTokens(),
                new SamplingParams(0f, 1f, 1, true)), new TokenListener() {
                    @Override
                    public void onToken(long id, int token) {
                        int i = n.getAndIncrement();
                        at[i] = System.nanoTime();
                        if (i == split) {
                            reached.countDown();
                        }
                    }
                });
        reached.await();
        long startedAt = System.nanoTime();
        int from = n.get();
        // the constraint is compiled and its warming starts at admission, as the API does
        TokenConstraint c = new GrammarConstraints(model.tokenizer(), warmStates).constraint(grammar(schema));
        RequestHandle constrained = engine.submit(new GenerationRequest("json", prompt, 64,
                SamplingParams.greedy().withConstraint(c)), TokenListener.NONE);
        background.result().get(30, TimeUnit.MINUTES);
        constrained.result().get(30, TimeUnit.MINUTES);
        double alone = split / ((at[split] - at[0]) / 1e9);
        int last = n.get() - 1;
        double beside = (last - from + 1) / ((at[last] - startedAt) / 1e9);
        double gap = 0;
        for (int i = from + 1; i <= last; i++) {
            gap = Math.max(gap, (at[i] - at[i - 1]) / 1e6);
        }
        return new Stall(alone, beside, gap);
    }

    private static double median(List<Double> v) {
        List<Double> s = v.stream().sorted().toList();
        return s.size() % 2 == 1 ? s.get(s.size() / 2) : (s.get(s.size() / 2 - 1) + s.get(s.size() / 2)) / 2;
    }

    private static double mean(List<Double> v) {
        return v.stream().mapToDouble(Double::doubleValue).average().orElse(0);
    }

    private static double max(List<Double> v) {
        return v.stream().mapToDouble(Double::doubleValue).max().orElse(0);
    }

    private static double round(double v) {
        return Math.round(v * 100) / 100.0;
    }
}
