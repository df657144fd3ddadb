package dev.pagewarden.cli.bench;

import dev.pagewarden.core.engine.Engine;
import dev.pagewarden.core.engine.EngineConfig;
import dev.pagewarden.core.model.load.LoadedModel;
import dev.pagewarden.core.request.GenerationRequest;
import dev.pagewarden.core.request.GenerationResult;
import dev.pagewarden.core.request.PrefixCaching;
import dev.pagewarden.core.request.TokenListener;
import dev.pagewarden.core.sampling.SamplingParams;

import java.io.PrintStream;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.SplittableRandom;
import java.util.concurrent.TimeUnit;

/**
 * The prefix cache on a chat workload: a long shared system prompt, short user turns. Time to first token of a
 * request whose system prompt is cached (a hit) against one whose is not (a miss, the first request of a fresh
 * engine), and multi-turn chat throughput - every turn resends the conversation so far - with the cache on and off.
 */
public final class PrefixBench {

    /** What to run. */
    public record Options(String backend, int threads, int systemTokens, int turnTokens, int genTokens, int turns,
                          int conversations, int repeats) {
        public Options {
            if (systemTokens < 1 || turnTokens < 1 || genTokens < 1 || turns < 1 || conversations < 1 || repeats < 1) {
                throw new IllegalArgumentException("prefix-bench needs positive token counts, turns, conversations and repeats");
            }
        }
    }

    private PrefixBench() {
    }

    public static Map<String, Object> run(LoadedModel model, Options o, PrintStream log) throws Exception {
        int vocab = model.config().vocabSize();
        SplittableRandom rnd = new SplittableRandom(7);
        int[] system = tokens(rnd, o.systemTokens(), vocab);
        int window = model.config().seqLen();
        EngineConfig.Builder base = EngineConfig.builder().backend(o.backend()).threads(o.threads()).contextWindow(window);
        Map<String, Object> report = new LinkedHashMap<>();
        report.put("model_dim", model.config().dim());
        report.put("layers", model.config().nLayers());
        report.put("window", window);
        report.put("system_tokens", o.systemTokens());
        report.put("turn_tokens", o.turnTokens());

        // a throwaway miss and hit first: the kernels' first runs include compilation, which no later request pays
        try (Engine engine = Engine.builder(model, base.prefixCache(true).build()).build()) {
            submit(engine, concat(system, tokens(rnd, o.turnTokens(), vocab)), 1);
            awaitKept(engine);
            submit(engine, concat(system, tokens(rnd, o.turnTokens(), vocab)), 1);
        }
        // time to first token: a miss (the first request of a fresh engine), then hits with other user turns
        List<Double> missMs = new ArrayList<>();
        List<Double> hitMs = new ArrayList<>();
        int cachedOnHit = 0;
        for (int r = 0; r < o.repeats(); r++) {
            try (Engine engine = Engine.builder(model, base.prefixCache(true).build()).build()) {
                GenerationResult miss = submit(engine, concat(system, tokens(rnd, o.turnTokens(), vocab)), 1);
                missMs.add(miss.timeToFirstNanos() / 1e6);
                awaitKept(engine);
                GenerationResult hit = submit(engine, concat(system, tokens(rnd, o.turnTokens(), vocab)), 1);
                hitMs.add(hit.timeToFirstNanos() / 1e6);
                cachedOnHit = hit.cachedTokens();
                log.printf("ttft repeat %d: miss %.1f ms, hit %.1f ms (%d prompt tokens from the cache)%n", r + 1,
                        missMs.getLast(), hitMs.getLast(), cachedOnHit);
            }
        }
        double miss = median(missMs);
        double hit = median(hitMs);
        report.put("ttft_miss_ms", round(miss));
        report.put("ttft_hit_ms", round(hit));
        report.put("ttft_speedup", round(miss / hit));
        report.put("cached_tokens_on_hit", cachedOnHit);

        // multi-turn chat: each turn sends system + the conversation so far + a new user turn
        for (boolean cache : new boolean[] {false, true}) {
            SplittableRandom turns = new SplittableRandom(11);
            long generated = 0;
            long prompt = 0;
            long cached = 0;
            long start = System.nanoTime();
            try (Engine engine = Engine.builder(model, base.prefixCache(cache).build()).build()) {
                int[][] history = new int[o.conversations()][];
                for (int c = 0; c < o.conversations(); c++) {
                    history[c] = system;
                }
                for (int t = 0; t < o.turns(); t++) {
                    for (int c = 0; c < o.conversations(); c++) {
                        int[] p = concat(history[c], tokens(turns, o.turnTokens(), vocab));
                        if (p.length + o.genTokens() > window) {
                            throw new IllegalArgumentException("turn " + (t + 1) + " needs " + (p.length + o.genTokens())
                                    + " tokens, over the window of " + window + ": fewer turns or shorter turns");
                        }
                        GenerationResult res = submit(engine, p, o.genTokens());
                        history[c] = concat(p, res.outputTokens());
                        generated += res.outputTokens().length;
                        prompt += p.length;
                        cached += res.cachedTokens();
                        awaitKept(engine);
                    }
                }
            }
            double seconds = (System.nanoTime() - start) / 1e9;
            String k = cache ? "cache_on" : "cache_off";
            report.put(k + "_seconds", round(seconds));
            report.put(k + "_prompt_tokens", prompt);
            report.put(k + "_cached_tokens", cached);
            report.put(k + "_turns_per_s", Math.round(o.turns() * o.conversations() / seconds * 1000) / 1000.0);
            report.put(k + "_generated_tok_s", round(generated / seconds));
            log.printf("multi-turn, cache %s: %.1f s, %d prompt tokens (%d from the cache)%n", cache ? "on" : "off",
                    seconds, prompt, cached);
        }
        // the same turns both ways: the ratio of the wall times is the throughput ratio
        report.put("turns_speedup", round((double) report.get("cache_off_seconds") / (double) report.get("cache_on_seconds")));
        return report;
    }

    /** One request at a time, greedy, in its tenant's scope without a key. */
    private static GenerationResult submit(Engine engine, int[] prompt, int gen) throws Exception {
        return engine.submit(new GenerationRequest("bench", prompt, gen, SamplingParams.greedy(),
                PrefixCaching.on(null, "bench")), TokenListener.NONE).result().get(30, TimeUnit.MINUTES);
    }

    /** Waits until the last request's prefill pages are kept or freed (right after its transfer's ack). */
    private static void awaitKept(Engine engine) throws InterruptedException {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
        while (engine.prefillPool().ownedPages() > 0 && System.nanoTime() < deadline) {
            Thread.sleep(1);
        }
    }

    private static int[] tokens(SplittableRandom rnd, int n, int vocab) {
        int[] t = new int[n];
        for (int i = 0; i < n; i++) {
            t[i] = 3 + rnd.nextInt(vocab - 3);
        }
        return t;
    }

    private static int[] concat(int[] a, int[] b) {
        int[] out = Arrays.copyOf(a, a.length + b.length);
        System.arraycopy(b, 0, out, a.length, b.length);
        return out;
    }

    private static double median(List<Double> v) {
        List<Double> s = v.stream().sorted().toList();
        return s.size() % 2 == 1 ? s.get(s.size() / 2) : (s.get(s.size() / 2 - 1) + s.get(s.size() / 2)) / 2;
    }

    private static double round(double v) {
        return Math.round(v * 100) / 100.0;
    }
}
