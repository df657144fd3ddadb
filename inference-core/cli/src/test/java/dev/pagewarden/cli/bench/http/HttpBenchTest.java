package dev.pagewarden.cli.bench.http;

import dev.pagewarden.cli.bench.http.FakeOpenAiServer.Mode;
import dev.pagewarden.cli.bench.http.PoolGauges.Pool;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import java.io.IOException;
import java.net.URI;
import java.time.Duration;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.Random;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

class HttpBenchTest {
    private FakeOpenAiServer server;

    @BeforeEach
    void start() throws IOException {
        server = new FakeOpenAiServer();
    }

    @AfterEach
    void stop() {
        server.close();
    }

    /** Exactly {@code requests} per client, no pauses, pool polled without waiting between scrapes. */
    private HttpBenchConfig config(int clients, int requests) {
        HttpBenchConfig d = HttpBenchConfig.defaults(server.base(), FakeOpenAiServer.KEY);
        return d.withLoad(clients, Duration.ZERO, requests).withTimeouts(Duration.ofSeconds(10), Duration.ZERO)
                .withPoolCheck(URI.create(server.base() + "/actuator/prometheus"), FakeOpenAiServer.METRICS_TOKEN,
                        d.poolMetric(), Duration.ofSeconds(10), Duration.ZERO);
    }

    @Test
    void aCleanRunCountsRequestsTokensAndLatencies() throws Exception {
        HttpBenchReport r = new HttpBench(config(3, 5)).run(done -> { });
        assertThat(r.model()).isEqualTo("fake-model");
        assertThat(r.completed()).isEqualTo(15);
        assertThat(r.errors()).isEmpty();
        assertThat(r.outputTokens()).isEqualTo(15L * FakeOpenAiServer.TOKENS.size());
        assertThat(r.itlSamples()).isEqualTo(15L * (FakeOpenAiServer.TOKENS.size() - 1));
        assertThat(r.ttftP50Ms()).isPositive().isLessThanOrEqualTo(r.ttftP99Ms());
        assertThat(r.itlP50Ms()).isGreaterThanOrEqualTo(0).isLessThanOrEqualTo(r.itlP99Ms());
        assertThat(r.tokensPerSecond()).isPositive();
        assertThat(r.poolBackToFree()).isTrue();
        assertThat(r.poolAfter()).containsEntry("decode-0", new Pool(1024, 1024)).containsEntry("prefill-0", new Pool(512, 512));
        assertThat(r.clean()).isTrue();
        assertThat(server.bodies).hasSize(15).allSatisfy(b -> {
            assertThat(b.get("model")).isEqualTo("fake-model");
            assertThat(b.get("stream")).isEqualTo(true);
            assertThat(b.get("temperature")).isEqualTo(0.0);
            assertThat(b.get("max_tokens")).isEqualTo(64.0);
            assertThat(b.get("prompt")).isEqualTo("Once upon a time");
        });
    }

    @Test
    void receiptsOfCompletedRequestsAreAskedForUntilTheyAreNoLongerPending() throws Exception {
        server.behaviour = n -> n == 3 ? Mode.HTTP_503 : Mode.OK;
        // request 2's lineage arrives late (pending at its first two lookups); request 5's receipt was moved
        server.receipt = (n, k) -> n == 2 && k <= 2 ? "pending" : n == 5 ? "mismatch" : "ok";
        HttpBench bench = new HttpBench(config(2, 3));
        HttpBenchReport r = bench.run(done -> { });
        assertThat(r.completed()).isEqualTo(5);
        assertThat(bench.completedIds()).containsExactlyInAnyOrder("cmpl-1", "cmpl-2", "cmpl-4", "cmpl-5", "cmpl-6");
        assertThat(bench.verifyReceipts(bench.completedIds(), Duration.ofSeconds(30)))
                .isEqualTo(Map.of("ok", 4L, "mismatch", 1L));
        assertThat(server.lookups.get("cmpl-2")).hasValue(3);
        assertThat(bench.verifyReceipts(List.of("cmpl-2", "cmpl-9"), Duration.ZERO)).as("no wait: asked once each")
                .isEqualTo(Map.of("ok", 1L, "unreadable", 1L));
        assertThat(BenchHttpCommand.sample(List.of("a", "b", "c", "d", "e", "f"), 3)).containsExactly("a", "c", "e");
    }

    @Test
    void errorsAreCountedByKindAndOnlyCompletedRequestsAreTimed() throws Exception {
        Mode[] cycle = {Mode.HTTP_503, Mode.ERROR_CHUNK, Mode.NO_DONE, Mode.OK};
        server.behaviour = n -> cycle[(n - 1) % cycle.length];
        HttpBenchReport r = new HttpBench(config(2, 4)).run(done -> { });
        assertThat(r.errors()).isEqualTo(Map.of("http_503:overloaded", 2L, "stream_error:kv_transfer_failed", 2L,
                "incomplete_stream", 2L));
        assertThat(r.completed()).isEqualTo(2);
        assertThat(r.outputTokens()).isEqualTo(2L * FakeOpenAiServer.TOKENS.size());
        assertThat(r.itlSamples()).isEqualTo(2L * (FakeOpenAiServer.TOKENS.size() - 1));
        assertThat(r.clean()).isFalse();
        assertThat(r.toText()).contains("2 completed, 6 errors");
    }

    @Test
    void aWrongKeyIsA401Error() throws Exception {
        HttpBenchConfig c = config(1, 2);
        HttpBenchReport r = new HttpBench(new HttpBenchConfig(c.base(), "sk-wrong", "fake-model", c.prompt(), c.maxTokens(),
                1, c.duration(), 2, c.requestTimeout(), c.errorBackoff(), null, null, c.poolMetric(), c.poolWait(),
                c.poolPollInterval())).run(done -> { });
        assertThat(r.errors()).isEqualTo(Map.of("http_401:invalid_api_key", 2L));
        assertThat(r.poolBefore()).isNull();
        assertThat(r.toText()).contains("pool         not checked");
    }

    @Test
    void theScrapeSendsTheMetricsTokenAndARefusedScrapeIsReported() throws Exception {
        HttpBenchConfig c = config(1, 1);
        assertThat(new HttpBench(c).run(done -> { }).poolBefore()).as("scraped with the token").isNotEmpty();
        HttpBenchReport r = new HttpBench(c.withPoolCheck(c.metricsUrl(), null, c.poolMetric(), Duration.ZERO, Duration.ZERO))
                .run(done -> { });
        assertThat(r.poolBefore()).isEmpty();
        assertThat(r.poolProblem()).contains("HTTP 401");
        assertThat(r.clean()).isFalse();
    }

    @Test
    void thePoolIsPolledUntilEveryPageIsFreeAgain() throws Exception {
        // scrape 1 is before the run; 2 and 3 still see pages held (deferred release); 4 sees all free
        server.metrics = n -> n == 2 || n == 3 ? FakeOpenAiServer.pools(1000, 1024) : FakeOpenAiServer.pools(1024, 1024);
        HttpBenchReport r = new HttpBench(config(1, 1)).run(done -> { });
        assertThat(r.poolBackToFree()).isTrue();
        assertThat(server.scrapes.get()).isEqualTo(4);
        assertThat(r.clean()).isTrue();
    }

    @Test
    void aPoolThatStaysShortIsReportedAndTheRunIsNotClean() throws Exception {
        server.metrics = n -> n == 1 ? FakeOpenAiServer.pools(1024, 1024) : FakeOpenAiServer.pools(1000, 1024);
        HttpBenchConfig c = config(1, 1);
        HttpBenchReport r = new HttpBench(c.withPoolCheck(c.metricsUrl(), c.metricsToken(), c.poolMetric(), Duration.ZERO, Duration.ZERO))
                .run(done -> { });
        assertThat(server.scrapes.get()).isEqualTo(2);
        assertThat(r.poolBackToFree()).isFalse();
        assertThat(r.clean()).isFalse();
        assertThat(r.poolLine()).contains("NOT all-free").contains("decode-0 1000/1024 free (before 1024/1024)");
        assertThat(r.toMarkdown()).contains("| KV pools after the run | NOT all-free");
    }

    @Test
    void aMissingPoolMetricIsAProblemNotASuccess() throws Exception {
        server.metrics = n -> "# nothing here\nprocess_uptime_seconds 12.0\n";
        HttpBenchReport r = new HttpBench(config(1, 1)).run(done -> { });
        assertThat(r.poolBackToFree()).isNull();
        assertThat(r.poolProblem()).contains("no kv_pool_pages samples at " + server.base() + "/actuator/prometheus");
        assertThat(r.clean()).isFalse();
    }

    @Test
    void prometheusTextIsParsedPerWorker() {
        String text = """
                # HELP kv_pool_pages pages
                # TYPE kv_pool_pages gauge
                kv_pool_pages{application="pw",state="free",worker="decode-0",} 10.0
                kv_pool_pages{worker="decode-0",state="owned"} 5
                kv_pool_pages{state="quarantined", worker="decode-0"} 1.0 1712345678000
                kv_pool_pages_total{worker="decode-0"} 999
                kv_pool_pages{worker="we\\"ird",state="free"} 3.0
                kv_pool_pages{state="free"} 7.0
                other_metric{worker="decode-0",state="free"} 100
                """;
        Map<String, Pool> p = PoolGauges.parse(text, "kv_pool_pages");
        assertThat(p).containsExactly(Map.entry("", new Pool(7, 7)), Map.entry("decode-0", new Pool(10, 16)),
                Map.entry("we\"ird", new Pool(3, 3)));
        assertThat(p.get("decode-0").allFree()).isFalse();
        assertThat(PoolGauges.parse("up 1\n", "kv_pool_pages")).isEmpty();
        assertThatThrownBy(() -> PoolGauges.parse("kv_pool_pages{worker=\"x 1\n", "kv_pool_pages"))
                .hasMessageContaining("unterminated");
    }

    /** The definition itself: the smallest sample with at least p% of the samples at or below it. */
    private static double naivePercentile(long[] samples, double p) {
        for (long candidate : Arrays.stream(samples).sorted().toArray()) {
            long atOrBelow = Arrays.stream(samples).filter(s -> s <= candidate).count();
            if (atOrBelow * 100.0 >= p * samples.length) {
                return candidate;
            }
        }
        throw new AssertionError();
    }

    @Test
    void percentilesMatchTheNaiveDefinition() {
        Random rnd = new Random(7);
        for (int trial = 0; trial < 200; trial++) {
            long[] s = new long[1 + rnd.nextInt(300)];
            for (int i = 0; i < s.length; i++) {
                s[i] = rnd.nextInt(50);   // many ties on purpose
            }
            long[] copy = s.clone();
            for (double p : new double[]{1, 50, 90, 99, 99.9, 100}) {
                assertThat(Percentiles.of(s, p)).as("p%s of %s", p, Arrays.toString(s)).isEqualTo(naivePercentile(s, p));
            }
            assertThat(s).isEqualTo(copy);
        }
        assertThat(Percentiles.of(new long[]{1, 2, 3, 4}, 50)).isEqualTo(2);
        assertThat(Percentiles.of(new long[]{5}, 99)).isEqualTo(5);
        assertThat(Percentiles.of(new long[0], 50)).isNaN();
        assertThatThrownBy(() -> Percentiles.of(new long[]{1}, 0)).hasMessageContaining("(0, 100]");
    }
}
