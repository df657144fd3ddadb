package dev.pagewarden.cli.bench.http;

import dev.pagewarden.command.Args;
import dev.pagewarden.command.Command;
import dev.pagewarden.command.Json;
import dev.pagewarden.cli.tools.ProgressBar;

import java.io.IOException;
import java.io.PrintStream;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/** {@code bench-http}: load on a running platform server (see {@link HttpBench}); exit 1 unless the run was clean. */
public final class BenchHttpCommand implements Command {
    /** Where the API key comes from when {@code --key} is not given. */
    public static final String KEY_ENV = "PAGEWARDEN_API_KEY";
    public static final String METRICS_TOKEN_ENV = "PAGEWARDEN_METRICS_TOKEN";
    private static final Pattern DURATION = Pattern.compile("(\\d+(?:\\.\\d+)?)(ms|s|m)?");

    @Override
    public String name() {
        return "bench-http";
    }

    @Override
    public String usage() {
        return "bench-http [--base URL (default http://localhost:8080)] [--key KEY (default $" + KEY_ENV + ")] [--model ID "
                + "(default: first of /v1/models)] [--clients N (4)] [--duration 30s | --requests N (per client)] "
                + "[--max-tokens K (64)] [--prompt TEXT] [--request-timeout 60s] [--metrics-url URL (default "
                + "BASE's host, port 8081, /actuator/prometheus)] [--metrics-token TOKEN (default $" + METRICS_TOKEN_ENV + ")] [--pool-metric NAME (kv_pool_pages)] [--pool-wait 30s] [--no-pool-check] "
                + "[--verify-receipts N (0: none; else up to N completed requests' receipts through /v1/audit/requests)] "
                + "[--receipt-wait 60s] [--json] [--out REPORT.md]";
    }

    @Override
    public int run(Args args, PrintStream out, PrintStream err) throws Exception {
        URI base = uri("base", args.string("base", "http://localhost:8080"));
        String key = args.string("key", System.getenv(KEY_ENV));
        String model = args.string("model", null);
        int clients = args.integer("clients", 4);
        String durationText = args.string("duration", null);
        int requests = args.integer("requests", 0);
        int maxTokens = args.integer("max-tokens", 64);
        String prompt = args.string("prompt", "Once upon a time");
        Duration requestTimeout = duration("request-timeout", args.string("request-timeout", "60s"));
        String metrics = args.string("metrics-url", null);
        String metricsToken = args.string("metrics-token", System.getenv(METRICS_TOKEN_ENV));
        String poolMetric = args.string("pool-metric", HttpBenchConfig.DEFAULT_POOL_METRIC);
        Duration poolWait = duration("pool-wait", args.string("pool-wait", "30s"));
        boolean noPoolCheck = args.flag("no-pool-check");
        int verifyReceipts = args.integer("verify-receipts", 0);
        Duration receiptWait = duration("receipt-wait", args.string("receipt-wait", "60s"));
        boolean json = args.flag("json");
        String outFile = args.string("out", null);
        args.rejectUnknown();

        if (durationText != null && requests > 0) {
            throw new Args.UsageException("give --duration or --requests, not both");
        }
        if (requests < 0) {
            throw new Args.UsageException("--requests must be > 0, got " + requests);
        }
        if (verifyReceipts < 0) {
            throw new Args.UsageException("--verify-receipts must be >= 0, got " + verifyReceipts);
        }
        if (clients < 1) {
            throw new Args.UsageException("--clients must be >= 1, got " + clients);
        }
        if (maxTokens < 1) {
            throw new Args.UsageException("--max-tokens must be >= 1, got " + maxTokens);
        }
        Duration duration = duration("duration", durationText == null ? "30s" : durationText);
        if (requests == 0 && duration.isZero()) {
            throw new Args.UsageException("--duration must be > 0");
        }
        HttpBenchConfig d = HttpBenchConfig.defaults(base, key);
        HttpBenchConfig config = d.withModel(model).withLoad(clients, duration, requests).withRequest(prompt, maxTokens)
                .withTimeouts(requestTimeout, d.errorBackoff())
                .withPoolCheck(noPoolCheck ? null : metrics != null ? uri("metrics-url", metrics) : d.metricsUrl(),
                        metricsToken, poolMetric, poolWait, d.poolPollInterval());

        HttpBench bench = new HttpBench(config);
        HttpBenchReport report;
        try {
            report = bench.run(ProgressBar.steps(err, "bench-http", bench.progressTotal()));
        } catch (IOException e) {
            err.println("error: " + e.getMessage());
            return 1;
        }
        Map<String, Long> receipts = null;
        if (verifyReceipts > 0) {
            List<String> ids = sample(bench.completedIds(), verifyReceipts);
            receipts = bench.verifyReceipts(ids, receiptWait);
        }
        boolean receiptsOk = receipts == null || receipts.keySet().equals(Set.of("ok")) || receipts.isEmpty();
        if (json) {
            Map<String, Object> m = new LinkedHashMap<>(report.toJsonMap());
            if (receipts != null) {
                m.put("receipts_checked", receipts.values().stream().mapToLong(Long::longValue).sum());
                m.put("receipts_by_status", receipts);
                m.put("receipts_ok", receiptsOk);
            }
            out.print(Json.write(m) + "\n");
        } else {
            out.print(report.toText());
            if (receipts != null) {
                out.println("receipts: " + receipts);
            }
        }
        if (outFile != null) {
            Files.writeString(Path.of(outFile), report.toMarkdown(), StandardCharsets.UTF_8);
        }
        if (!receiptsOk) {
            err.println("bench-http: receipts that did not verify: " + receipts);
            return 1;
        }
        if (!report.clean()) {
            err.println("bench-http: not clean: " + (report.completed() == 0 ? "no request completed; " : "")
                    + (report.errorCount() > 0 ? report.errorCount() + " errors " + report.errors() + "; " : "")
                    + "pool " + report.poolLine());
            return 1;
        }
        return 0;
    }

    /** Up to {@code n} of {@code ids}, spread evenly over them. */
    static List<String> sample(List<String> ids, int n) {
        if (ids.size() <= n) {
            return ids;
        }
        List<String> out = new ArrayList<>(n);
        for (int i = 0; i < n; i++) {
            out.add(ids.get((int) ((long) i * ids.size() / n)));
        }
        return out;
    }

    private static URI uri(String option, String v) {
        try {
            URI u = URI.create(v);
            if (!"http".equals(u.getScheme()) && !"https".equals(u.getScheme()) || u.getHost() == null) {
                throw new IllegalArgumentException("not an http(s) URL");
            }
            return u;
        } catch (IllegalArgumentException e) {
            throw new Args.UsageException("--" + option + " must be an http(s) URL, got '" + v + "'");
        }
    }

    /** {@code 500ms}, {@code 30s}, {@code 2m}, or plain seconds. */
    static Duration duration(String option, String v) {
        Matcher m = DURATION.matcher(v.trim().toLowerCase(Locale.ROOT));
        if (!m.matches()) {
            throw new Args.UsageException("--" + option + " must be a duration like 500ms, 30s or 2m, got '" + v + "'");
        }
        double n = Double.parseDouble(m.group(1));
        String unit = m.group(2) == null ? "s" : m.group(2);
        double millis = switch (unit) {
            case "ms" -> n;
            case "m" -> n * 60_000;
            default -> n * 1000;
        };
        return Duration.ofMillis(Math.round(millis));
    }
}
