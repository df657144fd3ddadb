package dev.pagewarden.cli.bench.http;

import java.util.LinkedHashMap;
import java.util.Map;
import java.util.TreeMap;

/**
 * Reads the KV pool gauge from Prometheus text exposition: lines like
 * {@code kv_pool_pages{state="free",worker="decode-0"} 1024.0}. Per worker, {@code free} is the
 * sample with {@code state="free"} and {@code total} the sum over all states.
 */
public final class PoolGauges {
    private PoolGauges() {
    }

    /** One worker's pool: pages free and pages in all states together. */
    public record Pool(long free, long total) {
        public boolean allFree() {
            return free == total;
        }
    }

    /** Pools by worker (sorted by name; a sample without a worker label counts under ""); empty when the metric is absent. */
    public static Map<String, Pool> parse(String exposition, String metric) {
        Map<String, long[]> acc = new TreeMap<>();
        for (String raw : exposition.split("\n")) {
            String line = raw.strip();
            if (line.isEmpty() || line.startsWith("#") || !line.startsWith(metric)) {
                continue;
            }
            int at = metric.length();
            if (at < line.length() && line.charAt(at) != '{' && line.charAt(at) != ' ') {
                continue;   // another metric sharing the prefix, e.g. kv_pool_pages_total
            }
            Map<String, String> labels = new LinkedHashMap<>();
            if (at < line.length() && line.charAt(at) == '{') {
                at = labels(line, at + 1, labels);
            }
            String[] rest = line.substring(at).strip().split("\\s+");
            double value;
            try {
                value = Double.parseDouble(rest[0]);
            } catch (NumberFormatException e) {
                throw new IllegalArgumentException("bad sample value in '" + line + "'");
            }
            if (!Double.isFinite(value)) {
                continue;
            }
            long[] pool = acc.computeIfAbsent(labels.getOrDefault("worker", ""), k -> new long[2]);
            long pages = Math.round(value);
            pool[1] += pages;
            if ("free".equals(labels.get("state"))) {
                pool[0] += pages;
            }
        }
        Map<String, Pool> out = new LinkedHashMap<>();
        acc.forEach((k, v) -> out.put(k, new Pool(v[0], v[1])));
        return out;
    }

    /** Parses {@code a="x",b="y"}} from {@code i}; returns the index after the closing brace. */
    private static int labels(String line, int i, Map<String, String> into) {
        while (true) {
            while (i < line.length() && (line.charAt(i) == ',' || line.charAt(i) == ' ')) {
                i++;
            }
            if (i >= line.length()) {
                throw new IllegalArgumentException("unterminated labels in '" + line + "'");
            }
            if (line.charAt(i) == '}') {
                return i + 1;
            }
            int eq = line.indexOf('=', i);
            if (eq < 0 || eq + 1 >= line.length() || line.charAt(eq + 1) != '"') {
                throw new IllegalArgumentException("bad label in '" + line + "'");
            }
            String name = line.substring(i, eq).strip();
            StringBuilder v = new StringBuilder();
            int j = eq + 2;
            for (; j < line.length() && line.charAt(j) != '"'; j++) {
                char c = line.charAt(j);
                if (c == '\\' && j + 1 < line.length()) {
                    char e = line.charAt(++j);
                    v.append(e == 'n' ? '\n' : e);
                } else {
                    v.append(c);
                }
            }
            if (j >= line.length()) {
                throw new IllegalArgumentException("unterminated label value in '" + line + "'");
            }
            into.put(name, v.toString());
            i = j + 1;
        }
    }
}
