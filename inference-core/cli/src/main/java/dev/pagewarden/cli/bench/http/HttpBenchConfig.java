package dev.pagewarden.cli.bench.http;

import java.net.URI;
import java.time.Duration;
import java.util.Objects;

/**
 * What {@link HttpBench} runs: {@code clients} concurrent streaming clients, each looping for
 * {@code duration} or, when {@code requestsPerClient > 0}, for exactly that many requests.
 *
 * @param model            API model id; null asks {@code GET /v1/models} and takes the first
 * @param requestTimeout   wait for response headers; also how long in-flight requests may run past the end
 * @param errorBackoff     pause after a failed request, so a refusing server is not hammered in a tight loop
 * @param metricsUrl       Prometheus scrape URL (the platform's management port); null for no pool check
 * @param metricsToken     bearer token for the scrape (the platform's scrape or admin token); null sends none
 * @param poolWait         how long after the run to keep polling until every pool is all-free again
 */
public record HttpBenchConfig(URI base, String apiKey, String model, String prompt, int maxTokens, int clients,
                              Duration duration, int requestsPerClient, Duration requestTimeout, Duration errorBackoff,
                              URI metricsUrl, String metricsToken, String poolMetric, Duration poolWait, Duration poolPollInterval) {
    public static final String DEFAULT_POOL_METRIC = "kv_pool_pages";
    public static final int DEFAULT_MANAGEMENT_PORT = 8081;

    public HttpBenchConfig {
        Objects.requireNonNull(base, "base");
        Objects.requireNonNull(prompt, "prompt");
        Objects.requireNonNull(duration, "duration");
        Objects.requireNonNull(requestTimeout, "requestTimeout");
        Objects.requireNonNull(errorBackoff, "errorBackoff");
        Objects.requireNonNull(poolMetric, "poolMetric");
        Objects.requireNonNull(poolWait, "poolWait");
        Objects.requireNonNull(poolPollInterval, "poolPollInterval");
        if (clients < 1) {
            throw new IllegalArgumentException("clients must be >= 1, got " + clients);
        }
        if (maxTokens < 1) {
            throw new IllegalArgumentException("max tokens must be >= 1, got " + maxTokens);
        }
        if (requestsPerClient < 0 || requestsPerClient == 0 && (duration.isZero() || duration.isNegative())) {
            throw new IllegalArgumentException("give a positive duration or a positive number of requests per client");
        }
        String s = base.toString();
        if (s.endsWith("/")) {
            base = URI.create(s.substring(0, s.length() - 1));
        }
    }

    /**
     * Defaults: 4 clients for 30 s, 64 tokens, pool check at {@code /actuator/prometheus} on the base's host,
     * management port {@value #DEFAULT_MANAGEMENT_PORT}, without a token, waiting up to 30 s.
     */
    public static HttpBenchConfig defaults(URI base, String apiKey) {
        URI metrics = URI.create(base.getScheme() + "://" + base.getHost() + ":" + DEFAULT_MANAGEMENT_PORT
                + "/actuator/prometheus");
        return new HttpBenchConfig(base, apiKey, null, "Once upon a time", 64, 4, Duration.ofSeconds(30), 0,
                Duration.ofSeconds(60), Duration.ofMillis(100), metrics, null, DEFAULT_POOL_METRIC,
                Duration.ofSeconds(30), Duration.ofMillis(200));
    }

    public HttpBenchConfig withModel(String m) {
        return new HttpBenchConfig(base, apiKey, m, prompt, maxTokens, clients, duration, requestsPerClient, requestTimeout,
                errorBackoff, metricsUrl, metricsToken, poolMetric, poolWait, poolPollInterval);
    }

    public HttpBenchConfig withLoad(int clients, Duration duration, int requestsPerClient) {
        return new HttpBenchConfig(base, apiKey, model, prompt, maxTokens, clients, duration, requestsPerClient, requestTimeout,
                errorBackoff, metricsUrl, metricsToken, poolMetric, poolWait, poolPollInterval);
    }

    public HttpBenchConfig withRequest(String prompt, int maxTokens) {
        return new HttpBenchConfig(base, apiKey, model, prompt, maxTokens, clients, duration, requestsPerClient, requestTimeout,
                errorBackoff, metricsUrl, metricsToken, poolMetric, poolWait, poolPollInterval);
    }

    public HttpBenchConfig withTimeouts(Duration requestTimeout, Duration errorBackoff) {
        return new HttpBenchConfig(base, apiKey, model, prompt, maxTokens, clients, duration, requestsPerClient, requestTimeout,
                errorBackoff, metricsUrl, metricsToken, poolMetric, poolWait, poolPollInterval);
    }

    public HttpBenchConfig withPoolCheck(URI metricsUrl, String metricsToken, String poolMetric, Duration poolWait,
                                         Duration poolPollInterval) {
        return new HttpBenchConfig(base, apiKey, model, prompt, maxTokens, clients, duration, requestsPerClient, requestTimeout,
                errorBackoff, metricsUrl, metricsToken, poolMetric, poolWait, poolPollInterval);
    }
}
