package dev.pagewarden.cli;

import dev.pagewarden.cli.bench.FairBench;
import dev.pagewarden.command.Args;
import dev.pagewarden.command.Command;
import dev.pagewarden.command.Json;
import dev.pagewarden.core.model.load.LoadedModel;
import dev.pagewarden.core.model.load.ModelLoader;

import java.io.PrintStream;
import java.nio.file.Path;
import java.util.Locale;
import java.util.Map;

/** Tenant B's time to first token while tenant A floods the engine, against B alone: a table, or JSON with --json. */
final class FairBenchCommand implements Command {

    @Override
    public String name() {
        return "bench-fair";
    }

    @Override
    public String usage() {
        return "bench-fair --model FILE [--tokenizer FILE] [--streams 16] [--a-tokens 32+224] [--b-tokens 16+16] "
                + "[--b-requests 60] [--interval-ms 1000] [--decode-pool-tokens N] [--threads T] [--backend cpu|gpu|auto] [--json]";
    }

    @Override
    public int run(Args args, PrintStream out, PrintStream err) throws Exception {
        Path modelPath = args.existingFile("model");
        Path tokPath = args.optionalExistingFile("tokenizer");
        int streams = args.integer("streams", 16);
        int[] a = tokens(args.string("a-tokens", "32+224"), "a-tokens");
        int[] b = tokens(args.string("b-tokens", "16+16"), "b-tokens");
        int bRequests = args.integer("b-requests", 60);
        int interval = args.integer("interval-ms", 1000);
        // half of A's streams fit, with room left for B's short request but not for A's next one
        int pool = args.integer("decode-pool-tokens", (streams / 2) * (a[0] + a[1]) + 4 * (b[0] + b[1]));
        int threads = args.integer("threads", 0);
        String backend = args.string("backend", "auto");
        boolean json = args.flag("json");
        args.rejectUnknown();
        FairBench.Options o = new FairBench.Options(streams, a[0], a[1], b[0], b[1], bRequests, interval, pool, backend,
                threads);
        Map<String, Object> report;
        try (LoadedModel model = ModelLoader.load(modelPath, tokPath)) {
            report = FairBench.run(model, o, err);
        }
        if (json) {
            out.println(Json.write(report));
            return 0;
        }
        out.printf(Locale.ROOT, "A: %s streams of %s tokens; B: one request of %s tokens every %s ms, %s requests; "
                        + "decode pool %s tokens%n", report.get("streams"), report.get("a_request_tokens"),
                report.get("b_request_tokens"), report.get("interval_ms"), report.get("b_requests"),
                report.get("decode_pool_tokens"));
        out.println("run             B TTFT p50 ms   p99 ms   max ms   A tokens");
        for (String run : new String[]{"alone", "fair", "as_tenant_a"}) {
            Map<?, ?> r = (Map<?, ?>) report.get(run);
            out.printf(Locale.ROOT, "%-14s %14.1f %8.1f %8.1f %10s%n", run, (Double) r.get("b_ttft_p50_ms"),
                    (Double) r.get("b_ttft_p99_ms"), (Double) r.get("b_ttft_max_ms"), r.get("a_tokens"));
        }
        out.printf(Locale.ROOT, "B's p99 vs alone: %.2fx with fair admission, %.2fx in arrival order (as tenant A)%n",
                (Double) report.get("fair_p99_vs_alone"), (Double) report.get("as_tenant_a_p99_vs_alone"));
        return 0;
    }

    /** {@code PROMPT+GEN}. */
    private static int[] tokens(String v, String name) {
        String[] p = v.split("\\+");
        try {
            if (p.length == 2) {
                return new int[]{Integer.parseInt(p[0].strip()), Integer.parseInt(p[1].strip())};
            }
        } catch (NumberFormatException e) {
            // answered below
        }
        throw new Args.UsageException("--" + name + " must be PROMPT+GEN (token counts), got '" + v + "'");
    }
}
