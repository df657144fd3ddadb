package dev.pagewarden.cli.bench.http;

import com.sun.net.httpserver.HttpExchange;
import com.sun.net.httpserver.HttpServer;
import dev.pagewarden.command.Json;

import java.io.IOException;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.concurrent.Executors;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.IntFunction;

/**
 * A stand-in for the platform server: streams {@link #TOKENS} as OpenAI completion chunks (or fails
 * as {@link #behaviour} says for the n-th request), lists one model, and serves a scripted
 * {@code /actuator/prometheus}.
 */
final class FakeOpenAiServer implements AutoCloseable {
    static final List<String> TOKENS = List.of("Once", " upon", " a", " time");
    static final String KEY = "sk-test";
    static final String METRICS_TOKEN = "scrape-token-0123456789";

    enum Mode { OK, HTTP_503, ERROR_CHUNK, NO_DONE }

    private final HttpServer server;
    final List<Map<?, ?>> bodies = Collections.synchronizedList(new ArrayList<>());
    final AtomicInteger requests = new AtomicInteger();
    final AtomicInteger scrapes = new AtomicInteger();
    /** Mode of the n-th (1-based) completion request. */
    volatile IntFunction<Mode> behaviour = n -> Mode.OK;
    /** Exposition text of the n-th (1-based) scrape. */
    volatile IntFunction<String> metrics = n -> pools(1024, 1024);
    /** The receipt verification status of the n-th completion at its k-th audit lookup: (n, k) -> status. */
    volatile java.util.function.BiFunction<Integer, Integer, String> receipt = (n, k) -> "ok";
    final Map<String, AtomicInteger> lookups = new java.util.concurrent.ConcurrentHashMap<>();

    FakeOpenAiServer() throws IOException {
        server = HttpServer.create(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0), 0);
        server.setExecutor(Executors.newVirtualThreadPerTaskExecutor());
        server.createContext("/v1/completions", this::completions);
        // like the platform's audit endpoint: the tenant's own request and its receipt's verification
        server.createContext("/v1/audit/requests/", ex -> {
            if (!("Bearer " + KEY).equals(ex.getRequestHeaders().getFirst("Authorization"))) {
                respond(ex, 401, "{\"error\":{\"code\":\"invalid_api_key\"}}");
                return;
            }
            String id = ex.getRequestURI().getPath().substring("/v1/audit/requests/".length());
            int n = Integer.parseInt(id.substring("cmpl-".length()));
            if (n > requests.get()) {
                respond(ex, 404, "{\"error\":{\"code\":\"not_found\"}}");
                return;
            }
            int k = lookups.computeIfAbsent(id, x -> new AtomicInteger()).incrementAndGet();
            respond(ex, 200, "{\"id\":\"" + id + "\",\"status\":\"FINISHED\",\"receipt_verification\":{\"status\":\""
                    + receipt.apply(n, k) + "\"}}");
        });
        server.createContext("/v1/models", ex -> respond(ex, 200, "{\"object\":\"list\",\"data\":[{\"id\":\"fake-model\",\"object\":\"model\"}]}"));
        // like the platform's management port: metrics only with the scrape token
        server.createContext("/actuator/prometheus", ex -> {
            if (!("Bearer " + METRICS_TOKEN).equals(ex.getRequestHeaders().getFirst("Authorization"))) {
                respond(ex, 401, "{\"error\":{\"code\":\"invalid_api_key\"}}");
                return;
            }
            respond(ex, 200, metrics.apply(scrapes.incrementAndGet()));
        });
        server.start();
    }

    URI base() {
        return URI.create("http://127.0.0.1:" + server.getAddress().getPort());
    }

    /** Two decode workers with {@code free} of {@code total} pages free (the rest split between two other states). */
    static String pools(int free, int total) {
        int used = total - free;
        return "# HELP kv_pool_pages KV pool pages by state\n# TYPE kv_pool_pages gauge\n"
                + "kv_pool_pages{state=\"free\",worker=\"decode-0\"} " + free + ".0\n"
                + "kv_pool_pages{state=\"owned\",worker=\"decode-0\"} " + (used - used / 2) + ".0\n"
                + "kv_pool_pages{state=\"deferred\",worker=\"decode-0\"} " + used / 2 + ".0\n"
                + "kv_pool_pages{worker=\"prefill-0\",state=\"free\"} 512.0\n"
                + "kv_pool_pages{worker=\"prefill-0\",state=\"owned\"} 0.0\n"
                + "http_server_requests_seconds_count{uri=\"/v1/completions\"} 3.0\n";
    }

    private void completions(HttpExchange ex) throws IOException {
        try (ex) {
            int n = requests.incrementAndGet();
            Map<?, ?> body = (Map<?, ?>) Json.parse(new String(ex.getRequestBody().readAllBytes(), StandardCharsets.UTF_8));
            bodies.add(body);
            if (!("Bearer " + KEY).equals(ex.getRequestHeaders().getFirst("Authorization"))) {
                respond(ex, 401, "{\"error\":{\"message\":\"bad key\",\"type\":\"invalid_request_error\",\"param\":null,\"code\":\"invalid_api_key\"}}");
                return;
            }
            Mode mode = behaviour.apply(n);
            if (mode == Mode.HTTP_503) {
                respond(ex, 503, "{\"error\":{\"message\":\"queue full\",\"type\":\"overloaded\",\"param\":null,\"code\":\"overloaded\"}}");
                return;
            }
            ex.getResponseHeaders().add("Content-Type", "text/event-stream");
            ex.sendResponseHeaders(200, 0);
            OutputStream os = ex.getResponseBody();
            for (int i = 0; i < TOKENS.size(); i++) {
                if (mode == Mode.ERROR_CHUNK && i == 2) {
                    event(os, "{\"error\":{\"message\":\"KV frame failed its check\",\"type\":\"server_error\",\"param\":null,"
                            + "\"code\":\"kv_transfer_failed\"}}");
                    event(os, "[DONE]");
                    return;
                }
                event(os, "{\"id\":\"cmpl-" + n + "\",\"object\":\"text_completion\",\"model\":\"fake-model\",\"choices\":[{\"index\":0,"
                        + "\"text\":" + Json.write(TOKENS.get(i)) + ",\"finish_reason\":null}]}");
            }
            if (mode == Mode.NO_DONE) {
                return;
            }
            event(os, "{\"id\":\"cmpl-" + n + "\",\"object\":\"text_completion\",\"choices\":[{\"index\":0,\"text\":\"\","
                    + "\"finish_reason\":\"length\"}],\"usage\":{\"prompt_tokens\":5,\"completion_tokens\":" + TOKENS.size()
                    + ",\"total_tokens\":" + (5 + TOKENS.size()) + "}}");
            event(os, "[DONE]");
        }
    }

    private static void event(OutputStream os, String data) throws IOException {
        os.write(("data: " + data + "\n\n").getBytes(StandardCharsets.UTF_8));
        os.flush();
    }

    private static void respond(HttpExchange ex, int status, String body) throws IOException {
        try (ex) {
            byte[] b = body.getBytes(StandardCharsets.UTF_8);
            ex.getResponseHeaders().add("Content-Type", "application/json");
            ex.sendResponseHeaders(status, b.length);
            ex.getResponseBody().write(b);
        }
    }

    @Override
    public void close() {
        server.stop(0);
    }
}
