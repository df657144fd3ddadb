package dev.pagewarden.cli;

import dev.pagewarden.command.Args;
import dev.pagewarden.command.Command;
import dev.pagewarden.command.Json;
import dev.pagewarden.cli.bench.EngineBench;
import dev.pagewarden.core.model.load.LoadedModel;
import dev.pagewarden.core.model.load.ModelLoader;

import java.io.PrintStream;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;

/** Engine throughput on a model: a table, or one JSON object with --json. */
final class BenchCommand implements Command {

    @Override
    public String name() {
        return "bench";
    }

    @Override
    public String usage() {
        return "bench --model FILE [--tokenizer FILE] [--prompt-tokens N] [--gen-tokens N] [--batch 1,8,...] "
                + "[--threads T] [--repeats N] [--backend cpu|gpu|auto] [--compare safety] [--pairs N] [--svg FILE] [--json]";
    }

    @Override
    public int run(Args args, PrintStream out, PrintStream err) throws Exception {
        Path modelPath = args.existingFile("model");
        Path tokPath = args.optionalExistingFile("tokenizer");
        int promptTokens = args.integer("prompt-tokens", 128);
        int genTokens = args.integer("gen-tokens", 64);
        List<Integer> batches = new ArrayList<>();
        for (String b : args.string("batch", "1,8").split(",")) {
            try {
                batches.add(Integer.parseInt(b.trim()));
            } catch (NumberFormatException e) {
                throw new Args.UsageException("--batch must be a comma-separated list of integers, got '" + b + "'");
            }
        }
        int threads = args.integer("threads", 0);
        int repeats = args.integer("repeats", 3);
        String backend = args.string("backend", "auto");
        boolean json = args.flag("json");
        String compare = args.string("compare", null);
        int pairs = args.integer("pairs", 10);
        String svg = args.string("svg", null);
        args.rejectUnknown();
        if (compare != null && !compare.equals("safety")) {
            throw new Args.UsageException("--compare knows only 'safety', got '" + compare + "'");
        }
        if (compare != null && pairs < 1) {
            throw new Args.UsageException("--pairs must be >= 1, got " + pairs);
        }
        EngineBench.Options options = new EngineBench.Options(backend, threads, promptTokens, genTokens, batches, repeats,
                compare == null ? 0 : pairs);
        Map<String, Object> report;
        try (LoadedModel model = ModelLoader.load(modelPath, tokPath)) {
            report = EngineBench.run(model, options, err);
        }
        if (svg != null) {
            java.nio.file.Files.writeString(Path.of(svg), dev.pagewarden.cli.bench.BenchPlot.svg(report));
            err.println("wrote " + svg);
        }
        if (json) {
            out.println(Json.write(report));
        } else {
            printTable(report, out);
        }
        return 0;
    }

    @SuppressWarnings("unchecked")
    private static void printTable(Map<String, Object> r, PrintStream out) {
        out.printf(Locale.ROOT, "model %s, %,d parameters, backend %s, %s threads%n", r.get("model"), r.get("parameters"),
                r.get("backend"), r.get("threads"));
        if (r.containsKey("mem_read_gbs")) {
            out.printf(Locale.ROOT, "memory read bandwidth %.1f GB/s with %d threads (one thread alone: %.1f GB/s), "
                            + "weights read per token %.1f MB%n", (Double) r.get("mem_read_gbs"), (Integer) r.get("threads"),
                    (Double) r.get("mem_read_gbs_one_thread"), ((Long) r.get("weight_bytes_per_token")) / 1e6);
        } else {
            out.printf(Locale.ROOT, "weights read per token %.1f MB (from the %s device's memory: no host bandwidth probe)%n",
                    ((Long) r.get("weight_bytes_per_token")) / 1e6, r.get("backend"));
        }
        out.printf(Locale.ROOT, "prefill: %.1f tokens/s (%s-token prompts)%n", (Double) r.get("prefill_tok_s"), r.get("prompt_tokens"));
        Map<String, Object> decode = (Map<String, Object>) r.get("decode_tok_s");
        Map<String, Object> frac = (Map<String, Object>) r.getOrDefault("decode_weight_bandwidth_fraction", Map.of());
        Map<String, Object> speedup = (Map<String, Object>) r.getOrDefault("decode_speedup_vs_batch1", Map.of());
        out.println("batch   decode tok/s   weight bandwidth used" + (speedup.isEmpty() ? ""
                : frac.isEmpty() ? "   vs batch 1 (per-run)" : "   vs batch 1 (per-run, bandwidth-normalised)"));
        for (String b : decode.keySet()) {
            out.printf(Locale.ROOT, "%5s   %12.1f   %21s", b, (Double) decode.get(b), frac.get(b) instanceof Double f
                    ? String.format(Locale.ROOT, "%.1f%%", 100 * f) : "-");
            out.println(speedup.containsKey(b) ? String.format(Locale.ROOT, "   %8.2fx", (Double) speedup.get(b)) : "");
        }
        out.printf("peak KV pages: %s%n", r.get("peak_kv_pages"));
        if (r.get("compare_safety") instanceof Map<?, ?> c) {
            out.printf(Locale.ROOT, "safety on/off decode throughput at batch %s over %s alternating pairs: median %.4f "
                    + "(min %.4f, max %.4f)%n", c.get("batch"), c.get("pairs"), (Double) c.get("median_ratio"),
                    (Double) c.get("min_ratio"), (Double) c.get("max_ratio"));
        }
    }
}
