package dev.pagewarden.cli.bench.http;

import dev.pagewarden.cli.bench.http.PoolGauges.Pool;

import java.util.LinkedHashMap;
import java.util.Locale;
import java.util.Map;
import java.util.TreeMap;

/**
 * One {@code bench-http} run. Latencies are in milliseconds over the completed (error-free)
 * requests only: time to first token from sending the request to the first chunk carrying text,
 * inter-token latency the gaps between successive text chunks of one request.
 *
 * @param outputTokens   sum over completed requests of {@code usage.completion_tokens} when the
 *                       stream reports it, else of the text chunks received
 * @param errors         failed requests by kind: {@code http_STATUS[:code]}, {@code stream_error:code},
 *                       {@code incomplete_stream}, {@code bad_chunk}, {@code timeout}, {@code io:Exception}
 * @param poolBefore     pools by worker before the run (empty when the metric was absent; null without a pool check)
 * @param poolBackToFree null without a pool check; otherwise whether every pool was all-free again within the wait
 * @param poolProblem    why the pool check could not tell, or null
 */
public record HttpBenchReport(String base, String model, int clients, int maxTokens, double wallSeconds,
                              long completed, Map<String, Long> errors, long outputTokens,
                              double ttftP50Ms, double ttftP99Ms, double itlP50Ms, double itlP99Ms, long itlSamples,
                              Map<String, Pool> poolBefore, Map<String, Pool> poolAfter, Boolean poolBackToFree,
                              double poolSettleSeconds, String poolProblem) {
    public HttpBenchReport {
        errors = Map.copyOf(new TreeMap<>(errors));
    }

    public long errorCount() {
        return errors.values().stream().mapToLong(Long::longValue).sum();
    }

    public double tokensPerSecond() {
        return wallSeconds > 0 ? outputTokens / wallSeconds : 0;
    }

    /** The run met the bar the platform sets: requests completed, none failed, pools back to all-free (when checked). */
    public boolean clean() {
        return completed > 0 && errorCount() == 0 && (poolBefore == null || Boolean.TRUE.equals(poolBackToFree));
    }

    public Map<String, Object> toJsonMap() {
        Map<String, Object> m = new LinkedHashMap<>();
        m.put("base", base);
        m.put("model", model);
        m.put("clients", clients);
        m.put("max_tokens", maxTokens);
        m.put("wall_s", wallSeconds);
        m.put("completed", completed);
        m.put("errors", errorCount());
        m.put("errors_by_kind", new TreeMap<>(errors));
        m.put("output_tokens", outputTokens);
        m.put("output_tok_s", tokensPerSecond());
        m.put("ttft_ms_p50", ttftP50Ms);
        m.put("ttft_ms_p99", ttftP99Ms);
        m.put("itl_ms_p50", itlP50Ms);
        m.put("itl_ms_p99", itlP99Ms);
        m.put("itl_samples", itlSamples);
        if (poolBefore != null) {
            Map<String, Object> pools = new LinkedHashMap<>();
            m.put("pool_back_to_free", poolBackToFree);
            m.put("pool_settle_s", poolSettleSeconds);
            m.put("pool_problem", poolProblem);
            for (String w : poolBefore.keySet()) {
                pools.put(w, poolJson(poolBefore.get(w), poolAfter == null ? null : poolAfter.get(w)));
            }
            if (poolAfter != null) {
                for (String w : poolAfter.keySet()) {
                    pools.putIfAbsent(w, poolJson(null, poolAfter.get(w)));
                }
            }
            m.put("pools", pools);
        }
        m.put("clean", clean());
        return m;
    }

    private static Map<String, Object> poolJson(Pool before, Pool after) {
        Map<String, Object> p = new LinkedHashMap<>();
        p.put("free_before", before == null ? null : before.free());
        p.put("total_before", before == null ? null : before.total());
        p.put("free_after", after == null ? null : after.free());
        p.put("total_after", after == null ? null : after.total());
        return p;
    }

    public String toText() {
        StringBuilder sb = new StringBuilder();
        sb.append(String.format(Locale.ROOT, "bench-http: %d clients, %.1f s against %s, model %s, max_tokens %d%n",
                clients, wallSeconds, base, model, maxTokens));
        sb.append(String.format(Locale.ROOT, "requests     %d completed, %d errors%s%n", completed, errorCount(),
                errors.isEmpty() ? "" : " " + errors));
        sb.append(String.format(Locale.ROOT, "TTFT         p50 %s  p99 %s%n", ms(ttftP50Ms), ms(ttftP99Ms)));
        sb.append(String.format(Locale.ROOT, "inter-token  p50 %s  p99 %s  (%d gaps)%n", ms(itlP50Ms), ms(itlP99Ms), itlSamples));
        sb.append(String.format(Locale.ROOT, "output       %d tokens, %.1f tokens/s%n", outputTokens, tokensPerSecond()));
        sb.append("pool         ").append(poolLine()).append('\n');
        return sb.toString();
    }

    String poolLine() {
        if (poolBefore == null) {
            return "not checked";
        }
        if (poolProblem != null) {
            return "UNKNOWN: " + poolProblem;
        }
        StringBuilder sb = new StringBuilder(Boolean.TRUE.equals(poolBackToFree)
                ? String.format(Locale.ROOT, "every pool all-free again after %.1f s:", poolSettleSeconds)
                : String.format(Locale.ROOT, "NOT all-free after waiting %.1f s:", poolSettleSeconds));
        for (var e : poolAfter.entrySet()) {
            Pool b = poolBefore.get(e.getKey());
            sb.append(String.format(Locale.ROOT, " %s %d/%d free (before %s)", e.getKey().isEmpty() ? "(no worker label)" : e.getKey(),
                    e.getValue().free(), e.getValue().total(), b == null ? "-" : b.free() + "/" + b.total()));
        }
        return sb.toString();
    }

    private static String ms(double v) {
        return Double.isNaN(v) ? "-" : String.format(Locale.ROOT, "%.2f ms", v);
    }

    public String toMarkdown() {
        StringBuilder sb = new StringBuilder();
        sb.append(String.format(Locale.ROOT, "bench-http against `%s`, model `%s`: %d concurrent streaming clients, "
                + "max_tokens %d, %.1f s%n%n", base, model, clients, maxTokens, wallSeconds));
        sb.append("| figure | value |\n|---|---|\n");
        row(sb, "requests completed", Long.toString(completed));
        row(sb, "errors", errorCount() + (errors.isEmpty() ? "" : " " + errors));
        row(sb, "time to first token p50 / p99", ms(ttftP50Ms) + " / " + ms(ttftP99Ms));
        row(sb, "inter-token latency p50 / p99", ms(itlP50Ms) + " / " + ms(itlP99Ms));
        row(sb, "output tokens", Long.toString(outputTokens));
        row(sb, "output tokens/s", String.format(Locale.ROOT, "%.1f", tokensPerSecond()));
        row(sb, "KV pools after the run", poolLine());
        return sb.toString();
    }

    private static void row(StringBuilder sb, String k, String v) {
        sb.append("| ").append(k).append(" | ").append(v.replace("|", "\\|")).append(" |\n");
    }
}
