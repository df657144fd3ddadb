package dev.pagewarden.platform.cluster;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.pagewarden.core.cluster.DecodeNode;
import dev.pagewarden.core.cluster.NodeOptions;
import dev.pagewarden.core.cluster.PrefillNode;
import dev.pagewarden.core.engine.Engine;
import dev.pagewarden.core.engine.EngineConfig;
import dev.pagewarden.core.lineage.LineageEvent;
import dev.pagewarden.core.model.load.LoadedModel;
import dev.pagewarden.core.model.load.ModelLoader;
import dev.pagewarden.core.receipt.PageEpochRead;
import dev.pagewarden.core.receipt.Receipt;
import dev.pagewarden.core.request.GenerationRequest;
import dev.pagewarden.core.request.TokenListener;
import dev.pagewarden.core.sampling.SamplingParams;
import dev.pagewarden.core.testing.TestModels;
import dev.pagewarden.core.transfer.net.CertificateAuthority;
import dev.pagewarden.core.transfer.net.ClusterTls;
import dev.pagewarden.db.audit.LineageQueries;
import dev.pagewarden.platform.testing.ModelRequired;
import dev.pagewarden.platform.testing.PlainHttp;
import dev.pagewarden.platform.testing.StandalonePlatform;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.MethodOrderer;
import org.junit.jupiter.api.Order;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestMethodOrder;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.io.TempDir;
import org.springframework.context.ConfigurableApplicationContext;

import java.net.http.HttpResponse;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The platform serving from one prefill and one decode engine node (started in this JVM, with certificates
 * from the cluster's own CA code in a pki folder), set up as an operator does: {@code PAGEWARDEN_ENGINE_NODES}
 * and {@code PAGEWARDEN_ENGINE_TLS_DIR}. Oracle: an engine in this process on the same model file, run on its
 * own, decodes the same prompt greedily.
 */
@ExtendWith(ModelRequired.class)
@TestMethodOrder(MethodOrderer.OrderAnnotation.class)
class ClusterServingTest {
    static final String ADMIN = "cluster-serving-admin-token-0123456789";
    static final ObjectMapper JSON = new ObjectMapper();
    static final int MAX_TOKENS = 24;
    static final int[] PROMPT = {1, 403, 407, 261, 378, 432, 296, 269, 301, 402, 262, 437, 295};

    @TempDir
    static Path dir;
    static LoadedModel model;
    static PrefillNode prefill;
    static DecodeNode decode;
    static ConfigurableApplicationContext app;
    static PlainHttp http;
    static String key;

    @BeforeAll
    static void serve() throws Exception {
        Path pki = dir.resolve("pki");
        java.nio.file.Files.createDirectories(pki);
        Instant now = Instant.now();
        CertificateAuthority ca = CertificateAuthority.create("cluster-ca", now.minus(Duration.ofHours(1)),
                now.plus(Duration.ofDays(1)));
        ca.write(pki.resolve("ca.crt"), pki.resolve("ca.key"));
        for (String name : new String[] {"prefill-a", "decode-a", "platform"}) {
            ca.issue(name, now.minus(Duration.ofHours(1)), now.plus(Duration.ofDays(1)))
                    .write(pki.resolve(name + ".crt"), pki.resolve(name + ".key"));
        }
        model = ModelLoader.load(TestModels.stories260K(), TestModels.tok512());
        prefill = PrefillNode.start(model, config(), options("prefill-a"), ClusterTls.load(pki, "prefill-a"), e -> { });
        decode = DecodeNode.start(model, config(), options("decode-a"), ClusterTls.load(pki, "decode-a"), e -> { });
        app = StandalonePlatform.start("pagewarden.home=" + dir.resolve("home"), "pagewarden.admin-token=" + ADMIN,
                "pagewarden.model.path=" + TestModels.stories260K(), "pagewarden.model.tokenizer=" + TestModels.tok512(),
                "pagewarden.engine.canary-interval=0s",
                "pagewarden.engine.nodes=prefill@127.0.0.1:" + prefill.port() + ",decode@127.0.0.1:" + decode.port(),
                "pagewarden.engine.tls-dir=" + pki);
        http = new PlainHttp("http://localhost:" + app.getEnvironment().getProperty("local.server.port"));
        key = http.newTenantKey(ADMIN, "cluster-user");
        // the platform connects to its nodes in the background: the window is 0 until both are live
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
        while (window() == 0 && System.nanoTime() < deadline) {
            Thread.sleep(50);
        }
    }

    private static EngineConfig config() {
        return EngineConfig.builder().backend("cpu").threads(1).build();
    }

    private static NodeOptions options(String name) {
        return new NodeOptions(name, "127.0.0.1", 0, "127.0.0.1", NodeOptions.DEFAULT_HEARTBEAT, NodeOptions.DEFAULT_TIMEOUT);
    }

    private static int window() throws Exception {
        for (JsonNode m : JSON.readTree(http.get("/v1/models", key).body()).path("data")) {
            if (m.path("id").asText().equals("stories260K")) {
                return m.path("context_window").asInt();
            }
        }
        return -1;
    }

    @AfterAll
    static void stop() throws Exception {
        if (app != null) {
            app.close();
        }
        for (AutoCloseable c : new AutoCloseable[] {prefill, decode, model}) {
            if (c != null) {
                c.close();
            }
        }
    }

    @Test
    @Order(1)
    void theModelListShowsTheNodesWindow() throws Exception {
        assertThat(window()).isEqualTo(decode.contextWindow()).isEqualTo(prefill.contextWindow()).isPositive();
    }

    @Test
    @Order(2)
    void plainAndStreamedCompletionsAreTheInProcessEnginesGreedyTokensWithAReceiptTheLineageBacks() throws Exception {
        int[] want;
        try (Engine local = Engine.builder(model, config()).build()) {
            want = local.submit(new GenerationRequest("oracle", PROMPT, MAX_TOKENS, SamplingParams.greedy()),
                    TokenListener.NONE).result().get(120, TimeUnit.SECONDS).outputTokens();
        }
        assertThat(want).isNotEmpty();
        String text = model.tokenizer().decode(want);

        HttpResponse<String> plain = complete(false);
        assertThat(plain.statusCode()).as(plain.body()).isEqualTo(200);
        JsonNode body = JSON.readTree(plain.body());
        assertThat(body.path("choices").get(0).path("text").asText()).isEqualTo(text);
        assertUsage(body.path("usage"), want.length);
        // the platform signs what the decode node read: a receipt naming that node, as in one process
        assertThat(plain.headers().firstValue("X-Pagewarden-Receipt")).isPresent();
        Receipt receipt = Receipt.fromCompact(body.path("pagewarden_receipt").asText());
        assertThat(receipt.body().version()).isEqualTo(3);
        assertThat(receipt.body().nodeId()).isEqualTo("decode-a");
        assertThat(receipt.body().reads()).isNotEmpty().extracting(PageEpochRead::worker).containsOnly("decode-a");
        // oracle: the prompt and every output token but the last were read, each position once
        assertThat(receipt.body().reads().stream().mapToInt(PageEpochRead::slots).sum())
                .isEqualTo(PROMPT.length + want.length - 1);
        // and the audit view checks it against the nodes' lineage: "pending" until shipped, then "ok"
        String audit = "/v1/audit/requests/" + body.path("id").asText();
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
        HttpResponse<String> a = http.get(audit, key);
        while ((a.statusCode() == 404 || JSON.readTree(a.body()).path("receipt_verification").path("status").asText()
                .equals("pending")) && System.nanoTime() < deadline) {
            Thread.sleep(50);
            a = http.get(audit, key);
        }
        assertThat(a.statusCode()).as(a.body()).isEqualTo(200);
        JsonNode view = JSON.readTree(a.body());
        assertThat(view.path("status").asText()).isEqualTo("FINISHED");
        assertThat(view.path("receipt_verification").path("status").asText()).as(a.body()).isEqualTo("ok");
        assertThat(view.path("lineage").path("isolated").asBoolean()).as(a.body()).isTrue();

        HttpResponse<String> streamed = complete(true);
        assertThat(streamed.statusCode()).as(streamed.body()).isEqualTo(200);
        StringBuilder got = new StringBuilder();
        JsonNode usage = null;
        JsonNode last = null;
        for (String line : streamed.body().split("\n")) {
            if (!line.startsWith("data: ") || line.equals("data: [DONE]")) {
                continue;
            }
            JsonNode chunk = JSON.readTree(line.substring(6));
            for (JsonNode c : chunk.path("choices")) {
                got.append(c.path("text").asText(""));
                last = chunk;
            }
            if (chunk.hasNonNull("usage")) {
                usage = chunk.get("usage");
            }
        }
        assertThat(got.toString()).isEqualTo(text);
        assertThat(usage).as(streamed.body()).isNotNull();
        assertUsage(usage, want.length);
        assertThat(Receipt.fromCompact(last.path("pagewarden_receipt").asText()).body().nodeId()).isEqualTo("decode-a");
    }

    @Test
    @Order(3)
    void theNodesLineageReachesKvLineageNamingEachNodeAndTheExposureSweepFindsNothing() throws Exception {
        javax.sql.DataSource db = app.getBean(javax.sql.DataSource.class);
        org.springframework.jdbc.core.JdbcTemplate jdbc = new org.springframework.jdbc.core.JdbcTemplate(db);
        int out = LineageEvent.Kind.TRANSFER_OUT.ordinal();
        int in = LineageEvent.Kind.TRANSFER_IN.ordinal();
        int bind = LineageEvent.Kind.BIND_READ.ordinal();
        String count = "SELECT count(*) FROM kv_lineage WHERE node = ? AND kind = ?";
        // the nodes forward their steps, the platform journals them and its shipper writes them: a little behind
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
        while (System.nanoTime() < deadline && (jdbc.queryForObject(count, Long.class, "prefill-a", out) == 0
                || jdbc.queryForObject(count, Long.class, "decode-a", bind) == 0
                || !jdbc.queryForObject(count, Long.class, "prefill-a", out)
                        .equals(jdbc.queryForObject(count, Long.class, "decode-a", in)))) {
            Thread.sleep(100);
        }
        // two completions of PROMPT went through: each page of the prompt left prefill-a and landed on decode-a
        assertThat(jdbc.queryForObject(count, Long.class, "prefill-a", out)).isPositive()
                .isEqualTo(jdbc.queryForObject(count, Long.class, "decode-a", in));
        assertThat(jdbc.queryForObject(count, Long.class, "decode-a", bind)).isPositive();
        assertThat(jdbc.queryForList("SELECT DISTINCT node FROM kv_lineage", String.class))
                .containsExactlyInAnyOrder("prefill-a", "decode-a");
        assertThat(jdbc.queryForList("SELECT DISTINCT worker FROM kv_lineage WHERE node = 'decode-a'", String.class))
                .containsExactly("decode-a");
        // and each node's own figures are on the platform's metrics, as the node last reported them
        PlainHttp management = new PlainHttp("http://localhost:" + app.getEnvironment().getProperty("local.management.port"));
        // once both nodes are idle again (a prefill node's pages come back on the transfer's ack, after the result)
        List<String> idle = List.of(
                "kv_node_pool_pages\\{[^}]*node=\"decode-a\",state=\"free\"[^}]*\\} " + decode.pool().capacityPages() + "(\\.0)?\\s",
                "kv_node_pool_pages\\{[^}]*node=\"prefill-a\",state=\"free\"[^}]*\\} " + prefill.pool().capacityPages() + "(\\.0)?\\s",
                "kv_node_transfers_in_flight\\{[^}]*node=\"prefill-a\"[^}]*\\} 0(\\.0)?\\s",
                "engine_node_queue_depth\\{[^}]*node=\"decode-a\"[^}]*\\} 0(\\.0)?\\s",
                "lineage_node_backlog_events\\{[^}]*node=\"prefill-a\"[^}]*\\} 0(\\.0)?\\s",
                "lineage_node_accepting\\{[^}]*node=\"decode-a\"[^}]*\\} 1(\\.0)?\\s");
        long scrapeDeadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
        String metrics = management.get("/actuator/prometheus", ADMIN).body();
        while (System.nanoTime() < scrapeDeadline && !allFound(idle, metrics)) {
            Thread.sleep(100);
            metrics = management.get("/actuator/prometheus", ADMIN).body();
        }
        for (String pattern : idle) {
            assertThat(metrics).containsPattern(pattern);
        }
        Instant now = Instant.now();
        assertThat(new LineageQueries(db).exposures(now.minus(Duration.ofHours(1)), now.plus(Duration.ofHours(1))))
                .isEmpty();
    }

    @Test
    @Order(4)
    void aStoppedNodeFailsTheNextRequestAtOnceAndThePlatformKeepsRunning() throws Exception {
        decode.close();
        HttpResponse<String> r = http.sendAsync(http.post("/v1/completions", key, request(false)))
                .get(60, TimeUnit.SECONDS);
        assertThat(r.statusCode()).as(r.body()).isEqualTo(503);
        assertThat(JSON.readTree(r.body()).path("error").path("code").asText()).isIn("engine_unavailable", "engine_node_lost");
        assertThat(r.headers().firstValue("Retry-After")).isPresent();
        assertThat(http.get("/v1/models", key).statusCode()).isEqualTo(200);
        // and says it is not ready, so that a load balancer sends requests elsewhere until the node is back
        PlainHttp management = new PlainHttp("http://localhost:" + app.getEnvironment().getProperty("local.management.port"));
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
        HttpResponse<String> ready = management.get("/actuator/health/readiness", ADMIN);
        while (ready.statusCode() == 200 && System.nanoTime() < deadline) {
            Thread.sleep(50);
            ready = management.get("/actuator/health/readiness", ADMIN);
        }
        assertThat(ready.statusCode()).as(ready.body()).isEqualTo(503);
        assertThat(ready.body()).contains("no prefill node and decode node are both up");
    }

    @Test
    @Order(1)
    void readinessIsUpWhileBothNodesAre() throws Exception {
        PlainHttp management = new PlainHttp("http://localhost:" + app.getEnvironment().getProperty("local.management.port"));
        HttpResponse<String> ready = management.get("/actuator/health/readiness", ADMIN);
        assertThat(ready.statusCode()).as(ready.body()).isEqualTo(200);
        assertThat(ready.body()).contains("checked by each engine node at its start");
    }

    private static boolean allFound(List<String> patterns, String text) {
        return patterns.stream().allMatch(p -> java.util.regex.Pattern.compile(p).matcher(text).find());
    }

    private static void assertUsage(JsonNode usage, int completion) {
        assertThat(usage.path("prompt_tokens").asInt()).isEqualTo(PROMPT.length);
        assertThat(usage.path("completion_tokens").asInt()).isEqualTo(completion);
        assertThat(usage.path("total_tokens").asInt()).isEqualTo(PROMPT.length + completion);
    }

    private static HttpResponse<String> complete(boolean stream) throws Exception {
        return http.send(http.post("/v1/completions", key, request(stream)));
    }

    private static String request(boolean stream) throws Exception {
        Map<String, Object> body = new LinkedHashMap<>();
        body.put("model", "stories260K");
        body.put("prompt", Arrays.stream(PROMPT).boxed().toList());
        body.put("max_tokens", MAX_TOKENS);
        body.put("temperature", 0);
        body.put("stream", stream);
        if (stream) {
            body.put("stream_options", Map.of("include_usage", true));
        }
        return JSON.writeValueAsString(body);
    }
}
