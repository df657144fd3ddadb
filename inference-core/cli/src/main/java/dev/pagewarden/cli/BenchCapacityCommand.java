package dev.pagewarden.cli;

import dev.pagewarden.command.Args;
import dev.pagewarden.command.Command;
import dev.pagewarden.command.Json;
import dev.pagewarden.core.engine.Engine;
import dev.pagewarden.core.engine.EngineConfig;
import dev.pagewarden.core.model.load.LoadedModel;
import dev.pagewarden.core.model.load.ModelLoader;
import dev.pagewarden.core.request.GenerationRequest;
import dev.pagewarden.core.request.InvalidRequestException;
import dev.pagewarden.core.request.RequestFailedException;
import dev.pagewarden.core.request.RequestHandle;
import dev.pagewarden.core.request.TokenListener;
import dev.pagewarden.core.sampling.SamplingParams;
import dev.pagewarden.core.spi.EngineMetrics;
import dev.pagewarden.core.tokenizer.TextTokenizer;

import java.io.PrintStream;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;

/**
 * How many chats run at once on the engine's defaults: N concurrent chats on short prompts, each without a
 * max_tokens (so it may use what the window leaves, as the API gives it), once with every request reserving
 * prompt + max new tokens at admission and once with pages on demand. With {@code --pairs N}, also the decode
 * speed of both when the pools are not full (a batch of short requests), alternating, as the median ratio.
 */
final class BenchCapacityCommand implements Command {
    private static final String[] NAMES = {"Lily", "Tom", "Sue", "Ben", "Mia", "Max", "Anna", "Sam"};

    @Override
    public String name() {
        return "bench-capacity";
    }

    @Override
    public String usage() {
        return "bench-capacity --model FILE [--tokenizer FILE] [--chats N] [--backend cpu|gpu|auto] [--threads T] "
                + "[--pairs N] [--json]";
    }

    @Override
    public int run(Args args, PrintStream out, PrintStream err) throws Exception {
        Path modelPath = args.existingModel("model");
        Path tokPath = args.optionalExistingFile("tokenizer");
        EngineConfig defaults = EngineConfig.builder().backend(args.string("backend", "auto"))
                .threads(args.integer("threads", 0)).build();
        int chats = args.integer("chats", defaults.maxBatch());
        int pairs = args.integer("pairs", 0);
        boolean json = args.flag("json");
        args.rejectUnknown();
        if (chats < 1 || pairs < 0) {
            throw new Args.UsageException("--chats must be >= 1 and --pairs >= 0");
        }
        Map<String, Object> report = new LinkedHashMap<>();
        try (LoadedModel model = ModelLoader.load(modelPath, tokPath)) {
            if (model.tokenizer() == null) {
                throw new InvalidRequestException("tokenizer", modelPath + " carries no vocabulary: pass --tokenizer FILE");
            }
            TextTokenizer tok = model.tokenizer();
            List<int[]> prompts = new ArrayList<>();
            for (int i = 0; i < chats; i++) {
                prompts.add(tok.encode("Once upon a time, there was a little " + NAMES[i % NAMES.length] + " who",
                        tok.addBos(), false));
            }
            report.put("model", modelPath.getFileName().toString());
            report.put("chats", chats);
            report.put("max_batch", defaults.maxBatch());
            report.put("whole_reservation", chats(model, defaults.toBuilder()
                    .decodeHeadroomPages(EngineConfig.FULL_RESERVATION).build(), prompts, err));
            report.put("pages_on_demand", chats(model, defaults, prompts, err));
            if (pairs > 0) {
                report.put("decode_pairs", pairs(model, defaults, prompts, pairs, err));
            }
        }
        if (json) {
            out.println(Json.write(report));
        } else {
            print(report, out);
        }
        return 0;
    }

    /** What {@code prompts} as chats without max_tokens do on an engine with {@code cfg}: how many decode at once. */
    private static Map<String, Object> chats(LoadedModel model, EngineConfig cfg, List<int[]> prompts, PrintStream err)
            throws InterruptedException {
        Counting metrics = new Counting();
        Map<String, Object> r = new LinkedHashMap<>();
        long t0 = System.nanoTime();
        int served = 0;
        int failed = 0;
        long tokens = 0;
        try (Engine e = Engine.builder(model, cfg).metrics(metrics).build()) {
            List<RequestHandle> handles = new ArrayList<>();
            for (int[] p : prompts) {
                // a chat without max_tokens: what the window leaves after its prompt
                handles.add(e.submit(new GenerationRequest("bench", p, e.contextWindow() - p.length,
                        SamplingParams.greedy()), TokenListener.NONE));
            }
            for (RequestHandle h : handles) {
                try {
                    tokens += h.result().get(10, TimeUnit.MINUTES).outputTokens().length;
                    served++;
                } catch (ExecutionException ex) {
                    if (!(ex.getCause() instanceof RequestFailedException)) {
                        throw new IllegalStateException("chat failed: " + ex.getCause(), ex.getCause());
                    }
                    failed++;
                } catch (java.util.concurrent.TimeoutException ex) {
                    throw new IllegalStateException("chat did not finish within 10 minutes", ex);
                }
            }
            r.put("window", e.contextWindow());
            r.put("decode_pool_tokens", e.decodePool().capacityTokens());
        }
        double seconds = (System.nanoTime() - t0) / 1e9;
        r.put("headroom_pages", cfg.decodeHeadroomPages() == EngineConfig.FULL_RESERVATION ? "whole request"
                : cfg.decodeHeadroomPages());
        r.put("most_running_at_once", metrics.maxBatch.get());
        r.put("served", served);
        r.put("failed", failed);
        r.put("preemptions", metrics.preemptions.get());
        r.put("tokens", tokens);
        r.put("seconds", Math.round(seconds * 100) / 100.0);
        err.printf(Locale.ROOT, "bench-capacity: %s: at most %d running at once%n", r.get("headroom_pages"),
                metrics.maxBatch.get());
        return r;
    }

    /**
     * Decode tokens/s of a batch of 8 short requests (the pools far from full: nothing is preempted), whole
     * reservations against pages on demand, alternating per pair (each pair's order swapped), first a warm-up.
     */
    private static Map<String, Object> pairs(LoadedModel model, EngineConfig cfg, List<int[]> prompts, int pairs,
                                             PrintStream err) throws Exception {
        EngineConfig whole = cfg.toBuilder().decodeHeadroomPages(EngineConfig.FULL_RESERVATION).build();
        decodeSpeed(model, whole, prompts);
        decodeSpeed(model, cfg, prompts);
        double[] ratios = new double[pairs];
        List<Double> wholeSpeeds = new ArrayList<>();
        List<Double> onDemandSpeeds = new ArrayList<>();
        for (int i = 0; i < pairs; i++) {
            double a;
            double b;
            if (i % 2 == 0) {
                a = decodeSpeed(model, whole, prompts);
                b = decodeSpeed(model, cfg, prompts);
            } else {
                b = decodeSpeed(model, cfg, prompts);
                a = decodeSpeed(model, whole, prompts);
            }
            wholeSpeeds.add(a);
            onDemandSpeeds.add(b);
            ratios[i] = b / a;
            err.printf(Locale.ROOT, "bench-capacity: pair %d: whole %.0f, on demand %.0f decode tokens/s%n", i + 1, a, b);
        }
        Arrays.sort(ratios);
        Map<String, Object> r = new LinkedHashMap<>();
        r.put("whole_reservation_tokens_per_s", wholeSpeeds.stream().map(v -> Math.round(v)).toList());
        r.put("pages_on_demand_tokens_per_s", onDemandSpeeds.stream().map(v -> Math.round(v)).toList());
        r.put("median_ratio_on_demand_vs_whole", Math.round(median(ratios) * 1000) / 1000.0);
        return r;
    }

    private static double median(double[] sorted) {
        int n = sorted.length;
        return n % 2 == 1 ? sorted[n / 2] : (sorted[n / 2 - 1] + sorted[n / 2]) / 2;
    }

    /** Decode tokens per second of decode step time: 8 requests of 192 new tokens (EOS ignored) on the first prompts. */
    private static double decodeSpeed(LoadedModel model, EngineConfig cfg, List<int[]> prompts) throws Exception {
        Counting metrics = new Counting();
        try (Engine e = Engine.builder(model, cfg).metrics(metrics).build()) {
            List<RequestHandle> handles = new ArrayList<>();
            for (int i = 0; i < 8; i++) {
                handles.add(e.submit(new GenerationRequest("bench", prompts.get(i % prompts.size()), 192,
                        new SamplingParams(0f, 1f, 0, true)), TokenListener.NONE));
            }
            for (RequestHandle h : handles) {
                h.result().get(10, TimeUnit.MINUTES);
            }
        }
        if (metrics.preemptions.get() > 0) {
            throw new IllegalStateException("the decode speed run preempted: the pool is too small for it");
        }
        return metrics.decodeTokens.get() / (metrics.decodeNanos.get() / 1e9);
    }

    @SuppressWarnings("unchecked")
    private static void print(Map<String, Object> r, PrintStream out) {
        out.printf(Locale.ROOT, "model %s, %s concurrent chats without max_tokens, max batch %s%n", r.get("model"),
                r.get("chats"), r.get("max_batch"));
        for (String mode : List.of("whole_reservation", "pages_on_demand")) {
            Map<String, Object> m = (Map<String, Object>) r.get(mode);
            out.printf(Locale.ROOT, "%-18s window %s, decode pool %s tokens: at most %s running at once, %s served, "
                            + "%s failed, %s preemptions, %s tokens in %s s%n", mode, m.get("window"),
                    m.get("decode_pool_tokens"), m.get("most_running_at_once"), m.get("served"), m.get("failed"),
                    m.get("preemptions"), m.get("tokens"), m.get("seconds"));
        }
        Object p = r.get("decode_pairs");
        if (p != null) {
            Map<String, Object> m = (Map<String, Object>) p;
            out.printf(Locale.ROOT, "decode, pools not full: whole %s, on demand %s tokens/s; median ratio %s%n",
                    m.get("whole_reservation_tokens_per_s"), m.get("pages_on_demand_tokens_per_s"),
                    m.get("median_ratio_on_demand_vs_whole"));
        }
    }

    private static final class Counting implements EngineMetrics {
        final AtomicInteger maxBatch = new AtomicInteger();
        final AtomicInteger preemptions = new AtomicInteger();
        final AtomicLong decodeTokens = new AtomicLong();
        final AtomicLong decodeNanos = new AtomicLong();

        @Override
        public void decodeStep(int batchSize, long nanos) {
            maxBatch.accumulateAndGet(batchSize, Math::max);
            decodeTokens.addAndGet(batchSize);
            decodeNanos.addAndGet(nanos);
        }

        @Override
        public void preemption(String outcome) {
            preemptions.incrementAndGet();
        }
    }
}
