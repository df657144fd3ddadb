package dev.pagewarden.cli.bench.http;

import dev.pagewarden.command.Json;
import dev.pagewarden.cli.bench.http.PoolGauges.Pool;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStream;
import java.io.InputStreamReader;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.net.http.HttpTimeoutException;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.LongConsumer;

/**
 * Load on an OpenAI-compatible server: N virtual-thread clients, each sending streaming
 * {@code POST /v1/completions} requests back to back, timing every chunk; before and after, the KV
 * pool gauge is scraped so the report says whether every page came back.
 */
public final class HttpBench {
    private final HttpBenchConfig c;
    private final HttpClient http;
    private volatile List<String> completedIds = List.of();

    public HttpBench(HttpBenchConfig config) {
        this.c = config;
        // HTTP/1.1: an h2c upgrade attempt would only add noise to what is measured.
        this.http = HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1)
                .connectTimeout(config.requestTimeout()).build();
    }

    /**
     * Runs the benchmark. {@code progress} is told the work done so far, in seconds (duration mode) or
     * finished requests (request-count mode), out of {@link #progressTotal()}.
     */
    public HttpBenchReport run(LongConsumer progress) throws IOException, InterruptedException {
        String model = c.model() != null ? c.model() : firstModel();
        byte[] body = Json.write(requestBody(model)).getBytes(StandardCharsets.UTF_8);

        Map<String, Pool> poolBefore = null;
        String poolProblem = null;
        if (c.metricsUrl() != null) {
            try {
                poolBefore = PoolGauges.parse(get(c.metricsUrl(), c.metricsToken()), c.poolMetric());
                if (poolBefore.isEmpty()) {
                    poolProblem = "no " + c.poolMetric() + " samples at " + c.metricsUrl();
                }
            } catch (IOException | IllegalArgumentException e) {
                poolBefore = Map.of();
                poolProblem = scrapeProblem(e, "");
            }
        }

        AtomicLong finished = new AtomicLong();
        long start = System.nanoTime();
        long deadline = c.requestsPerClient() > 0 ? Long.MAX_VALUE : start + c.duration().toNanos();
        List<ClientStats> stats = new ArrayList<>();
        ExecutorService clients = Executors.newVirtualThreadPerTaskExecutor();
        try {
            for (int i = 0; i < c.clients(); i++) {
                ClientStats s = new ClientStats();
                stats.add(s);
                clients.submit(() -> loop(body, deadline, s, finished));
            }
            clients.shutdown();
            // Past the end, in-flight requests get requestTimeout to finish; then they are interrupted and counted.
            long hardStop = c.requestsPerClient() > 0 ? Long.MAX_VALUE : deadline + c.requestTimeout().toNanos();
            while (!clients.awaitTermination(100, TimeUnit.MILLISECONDS)) {
                progress.accept(c.requestsPerClient() > 0 ? finished.get()
                        : Math.min(progressTotal(), (System.nanoTime() - start) / 1_000_000_000L));
                if (System.nanoTime() > hardStop) {
                    clients.shutdownNow();
                }
            }
        } finally {
            clients.shutdownNow();
        }
        double wall = (System.nanoTime() - start) / 1e9;
        progress.accept(progressTotal());

        ClientStats all = new ClientStats();
        stats.forEach(all::merge);
        completedIds = List.copyOf(all.ids);

        Map<String, Pool> poolAfter = null;
        Boolean backToFree = null;
        double settle = 0;
        if (poolBefore != null && poolProblem == null) {
            long t0 = System.nanoTime();
            long giveUp = t0 + c.poolWait().toNanos();
            while (true) {
                try {
                    poolAfter = PoolGauges.parse(get(c.metricsUrl(), c.metricsToken()), c.poolMetric());
                } catch (IOException | IllegalArgumentException e) {
                    poolProblem = scrapeProblem(e, " after the run");
                    break;
                }
                backToFree = !poolAfter.isEmpty() && poolAfter.values().stream().allMatch(Pool::allFree);
                if (backToFree || System.nanoTime() >= giveUp) {
                    break;
                }
                Thread.sleep(c.poolPollInterval());
            }
            settle = (System.nanoTime() - t0) / 1e9;
        }
        long[] ttft = all.ttft.stream().mapToLong(Long::longValue).toArray();
        long[] itl = all.itl.stream().mapToLong(Long::longValue).toArray();
        return new HttpBenchReport(c.base().toString(), model, c.clients(), c.maxTokens(), wall, all.completed, all.errors,
                all.tokens, ms(Percentiles.of(ttft, 50)), ms(Percentiles.of(ttft, 99)), ms(Percentiles.of(itl, 50)),
                ms(Percentiles.of(itl, 99)), itl.length, poolBefore, poolAfter, poolProblem == null ? backToFree : null,
                settle, poolProblem);
    }

    /** The response ids of the last run's completed requests, in no particular order. */
    public List<String> completedIds() {
        return completedIds;
    }

    /**
     * Asks the platform's audit endpoint ({@code GET /v1/audit/requests/{id}}, with the bench's key) for the
     * server-side verification of each request's receipt, asking again while it is {@code pending} (its lineage
     * not yet in PostgreSQL) until {@code wait} has passed. Returns how many ended in each status ({@code ok},
     * {@code violation}, {@code mismatch}, {@code pending}, {@code none}, or {@code unreadable} when the answer
     * was not one).
     */
    public Map<String, Long> verifyReceipts(List<String> ids, Duration wait) throws InterruptedException {
        long giveUp = System.nanoTime() + wait.toNanos();
        Map<String, Long> byStatus = new TreeMap<>();
        for (String id : ids) {
            String status;
            while (true) {
                status = receiptStatus(id);
                if (!"pending".equals(status) || System.nanoTime() >= giveUp) {
                    break;
                }
                Thread.sleep(200); // the lineage ships in batches: ask again shortly
            }
            byStatus.merge(status, 1L, Long::sum);
        }
        return byStatus;
    }

    private String receiptStatus(String id) throws InterruptedException {
        try {
            if (Json.parse(get(URI.create(c.base() + "/v1/audit/requests/" + id), c.apiKey())) instanceof Map<?, ?> m
                    && m.get("receipt_verification") instanceof Map<?, ?> v && v.get("status") instanceof String st) {
                return st;
            }
        } catch (IOException | IllegalArgumentException e) {
            return "unreadable";
        }
        return "unreadable";
    }

    /** Seconds of the run, or requests in all, for a progress bar. */
    public long progressTotal() {
        return c.requestsPerClient() > 0 ? (long) c.requestsPerClient() * c.clients() : Math.max(1, c.duration().toSeconds());
    }

    private static double ms(double nanos) {
        return nanos / 1e6;
    }

    private Map<String, Object> requestBody(String model) {
        Map<String, Object> m = new LinkedHashMap<>();
        m.put("model", model);
        m.put("prompt", c.prompt());
        m.put("max_tokens", c.maxTokens());
        m.put("stream", true);
        m.put("temperature", 0);
        return m;
    }

    /** Per-client tallies, merged after the clients end (so no sharing while they run). */
    static final class ClientStats {
        long completed;
        long tokens;
        final Map<String, Long> errors = new HashMap<>();
        final List<Long> ttft = new ArrayList<>();
        final List<Long> itl = new ArrayList<>();
        /** The response ids of the completed requests, for their receipts. */
        final List<String> ids = new ArrayList<>();

        void error(String kind) {
            errors.merge(kind, 1L, Long::sum);
        }

        void merge(ClientStats o) {
            completed += o.completed;
            tokens += o.tokens;
            o.errors.forEach((k, v) -> errors.merge(k, v, Long::sum));
            ttft.addAll(o.ttft);
            itl.addAll(o.itl);
            ids.addAll(o.ids);
        }
    }

    private void loop(byte[] body, long deadline, ClientStats s, AtomicLong finished) {
        for (int n = 0; c.requestsPerClient() > 0 ? n < c.requestsPerClient() : System.nanoTime() < deadline; n++) {
            String error = oneRequest(body, s);
            finished.incrementAndGet();
            if (error != null) {
                s.error(error);
                if (Thread.currentThread().isInterrupted()) {
                    return;
                }
                if (!c.errorBackoff().isZero()) {
                    try {
                        Thread.sleep(c.errorBackoff());
                    } catch (InterruptedException e) {
                        return;
                    }
                }
            }
        }
    }

    /** One streaming request; records its timings into {@code s} when it completes, returns the error kind otherwise. */
    String oneRequest(byte[] body, ClientStats s) {
        HttpRequest.Builder rb = HttpRequest.newBuilder(URI.create(c.base() + "/v1/completions"))
                .timeout(c.requestTimeout())
                .header("Content-Type", "application/json").header("Accept", "text/event-stream")
                .POST(HttpRequest.BodyPublishers.ofByteArray(body));
        if (c.apiKey() != null) {
            rb.header("Authorization", "Bearer " + c.apiKey());
        }
        long t0 = System.nanoTime();
        try {
            HttpResponse<InputStream> r = http.send(rb.build(), HttpResponse.BodyHandlers.ofInputStream());
            try (InputStream in = r.body()) {
                if (r.statusCode() != 200) {
                    String text = new String(in.readNBytes(64 << 10), StandardCharsets.UTF_8);
                    String code = errorCode(text);
                    return "http_" + r.statusCode() + (code == null ? "" : ":" + code);
                }
                return readStream(in, t0, s);
            }
        } catch (HttpTimeoutException e) {
            return "timeout";
        } catch (IOException e) {
            return Thread.currentThread().isInterrupted() ? "timeout" : "io:" + e.getClass().getSimpleName();
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return "timeout";
        }
    }

    /** Server-sent events: {@code data:} lines, a blank line ends an event, {@code [DONE]} ends the stream. */
    private String readStream(InputStream in, long t0, ClientStats s) throws IOException {
        BufferedReader br = new BufferedReader(new InputStreamReader(in, StandardCharsets.UTF_8));
        List<Long> times = new ArrayList<>();
        long chunks = 0;
        long usageTokens = -1;
        String id = null;
        StringBuilder data = null;
        long dataAt = 0;
        boolean done = false;
        String line;
        while (!done) {
            line = br.readLine();
            boolean eof = line == null;
            if (!eof && line.startsWith("data:")) {
                String d = line.substring(5);
                d = d.startsWith(" ") ? d.substring(1) : d;
                if (data == null) {
                    data = new StringBuilder(d);
                    dataAt = System.nanoTime();
                } else {
                    data.append('\n').append(d);
                }
                continue;
            }
            if ((eof || line.isEmpty()) && data != null) {
                String event = data.toString();
                data = null;
                if (event.equals("[DONE]")) {
                    done = true;
                    break;
                }
                Map<?, ?> chunk;
                try {
                    chunk = Json.parse(event) instanceof Map<?, ?> m ? m : null;
                } catch (IllegalArgumentException e) {
                    chunk = null;
                }
                if (chunk == null) {
                    return "bad_chunk";
                }
                if (chunk.get("error") instanceof Map<?, ?> err) {
                    Object code = err.get("code") != null ? err.get("code") : err.get("type");
                    return "stream_error:" + (code == null ? "unknown" : code);
                }
                String text = text(chunk);
                if (text != null && !text.isEmpty()) {
                    chunks++;
                    times.add(dataAt);
                }
                if (id == null && chunk.get("id") instanceof String i) {
                    id = i;
                }
                if (chunk.get("usage") instanceof Map<?, ?> u && u.get("completion_tokens") instanceof Number n) {
                    usageTokens = n.longValue();
                }
            }
            if (eof) {
                break;
            }
            // other fields (event:, id:, retry:) and comments (":") carry nothing we measure
        }
        if (!done) {
            return "incomplete_stream";
        }
        s.completed++;
        s.tokens += usageTokens >= 0 ? usageTokens : chunks;
        if (id != null) {
            s.ids.add(id);
        }
        if (!times.isEmpty()) {
            s.ttft.add(times.getFirst() - t0);
            for (int i = 1; i < times.size(); i++) {
                s.itl.add(times.get(i) - times.get(i - 1));
            }
        }
        return null;
    }

    /** {@code choices[0].text} (completions) or {@code choices[0].delta.content} (chat). */
    private static String text(Map<?, ?> chunk) {
        if (chunk.get("choices") instanceof List<?> choices && !choices.isEmpty() && choices.getFirst() instanceof Map<?, ?> c0) {
            if (c0.get("text") instanceof String t) {
                return t;
            }
            if (c0.get("delta") instanceof Map<?, ?> d && d.get("content") instanceof String t) {
                return t;
            }
        }
        return null;
    }

    /** {@code error.code}, else {@code error.type}, of an OpenAI error body; null when the body is not one. */
    static String errorCode(String body) {
        try {
            if (Json.parse(body) instanceof Map<?, ?> m && m.get("error") instanceof Map<?, ?> e) {
                Object code = e.get("code") != null ? e.get("code") : e.get("type");
                return code == null ? null : code.toString();
            }
        } catch (IllegalArgumentException ignored) {
            // not JSON: the status alone names the error
        }
        return null;
    }

    private String firstModel() throws IOException, InterruptedException {
        String text = get(URI.create(c.base() + "/v1/models"), c.apiKey());
        try {
            if (Json.parse(text) instanceof Map<?, ?> m && m.get("data") instanceof List<?> l && !l.isEmpty()
                    && l.getFirst() instanceof Map<?, ?> first && first.get("id") instanceof String id) {
                return id;
            }
        } catch (IllegalArgumentException e) {
            throw new IOException(c.base() + "/v1/models did not answer JSON: " + e.getMessage());
        }
        throw new IOException(c.base() + "/v1/models lists no model; give one with --model");
    }

    /** I/O messages from {@link #get} already name the URL; a parse error does not. */
    private String scrapeProblem(Exception e, String when) {
        return e instanceof IOException ? e.getMessage() + when
                : "cannot parse " + c.metricsUrl() + when + ": " + e.getMessage();
    }

    private String get(URI uri, String bearer) throws IOException, InterruptedException {
        HttpRequest.Builder rb = HttpRequest.newBuilder(uri).timeout(c.requestTimeout()).GET();
        if (bearer != null) {
            rb.header("Authorization", "Bearer " + bearer);
        }
        HttpResponse<String> r;
        try {
            r = http.send(rb.build(), HttpResponse.BodyHandlers.ofString());
        } catch (IOException e) {
            throw new IOException("cannot reach " + uri + ": " + e.getClass().getSimpleName()
                    + (e.getMessage() == null ? "" : " " + e.getMessage()), e);
        }
        if (r.statusCode() != 200) {
            throw new IOException("HTTP " + r.statusCode() + " from " + uri);
        }
        return r.body();
    }
}
