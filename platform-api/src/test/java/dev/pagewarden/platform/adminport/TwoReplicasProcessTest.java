package dev.pagewarden.platform.adminport;

import dev.pagewarden.core.testing.TestModels;
import dev.pagewarden.db.audit.Exposure;
import dev.pagewarden.db.audit.LineageQueries;
import dev.pagewarden.db.embedded.EmbeddedPostgresServer;
import dev.pagewarden.platform.testing.ModelRequired;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.io.TempDir;
import org.springframework.jdbc.core.simple.JdbcClient;
import tools.jackson.databind.json.JsonMapper;

import java.io.IOException;
import java.net.ServerSocket;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Two platform replicas as two processes of their own (each its node id, home folder and journal, with
 * {@code PAGEWARDEN_REPLICAS=2}) on one embedded PostgreSQL, as behind a load balancer. A randomized multi-tenant
 * load is split across both and each replica is restarted once in the middle of it (stopped, started again on
 * the same home) while the other serves. Then: the exposure finder finds no exposure and every receipt verifies
 * on both replicas (also after one replica rotated its signing key and the old key was retired on the other); a
 * model taken private on one is refused by the other within 2 s; a quota of 10 requests a minute serves 10 across
 * both; an admin UI session started on one works on the other, before and after the restarts; wrong passwords
 * spread over both lock the account on both after the 5th; and two lab
 * replays of the 2026 incident, with every replica's lineage sweep running each second, file each exposure once
 * and one incident per pool.
 */
@ExtendWith(ModelRequired.class)
class TwoReplicasProcessTest {
    private static final JsonMapper JSON = JsonMapper.builder().build();
    private static final String ADMIN_TOKEN = "replicas-admin-token-0123456789";
    private static final String PASSWORD = "correct-horse-battery";
    private static final String MODEL = "stories260K";
    private static final List<String> PROMPTS = List.of("Once upon a time", "The cat sat", "Lily went to the park",
            "One day a little bird", "Tom had a red ball", "The sun was");

    @TempDir
    Path tmp;

    private final HttpClient http = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(5)).build();
    private EmbeddedPostgresServer pg;

    /** One replica: a platform process of its own. */
    private final class Replica {
        final String node;
        final Path home;
        final int port;
        final int management;
        final List<String> settings;
        Process process;

        Replica(String node, List<String> settings) throws IOException {
            this.node = node;
            this.home = tmp.resolve(node);
            this.port = freePort();
            this.management = freePort();
            this.settings = settings;
        }

        String url() {
            return "http://localhost:" + port;
        }

        Path log() {
            return tmp.resolve(node + ".log");
        }

        void start() throws IOException {
            List<String> cmd = new ArrayList<>(List.of(Path.of(System.getProperty("java.home"), "bin", "java").toString(),
                    "--add-modules", "jdk.incubator.vector", "--enable-native-access=ALL-UNNAMED", "-Xmx512m",
                    "-XX:TieredStopAtLevel=1", "-cp", System.getProperty("java.class.path"),
                    "dev.pagewarden.platform.PagewardenApplication",
                    "--server.port=" + port, "--management.server.port=" + management, "--pagewarden.home=" + home,
                    "--spring.datasource.url=" + pg.jdbcUrl(), "--spring.datasource.username=" + pg.user(),
                    "--spring.datasource.password=" + pg.password(),
                    "--pagewarden.model.path=" + TestModels.stories260K(), "--pagewarden.model.tokenizer=" + TestModels.tok512(),
                    "--pagewarden.admin-token=" + ADMIN_TOKEN, "--pagewarden.admin.initial-password=" + PASSWORD,
                    "--pagewarden.engine.canary-interval=0s", "--pagewarden.shutdown.grace=2s",
                    "--pagewarden.admin.lineage-sweep=1s",
                    // one trust file for both, as docs/evidence.md asks of replicas: each pins its root there
                    "--pagewarden.audit.trust-file=" + tmp.resolve("receipt-trust")));
            settings.forEach(s -> cmd.add("--" + s));
            ProcessBuilder pb = new ProcessBuilder(cmd).redirectErrorStream(true)
                    .redirectOutput(ProcessBuilder.Redirect.appendTo(log().toFile()));
            pb.environment().keySet().removeIf(k -> k.startsWith("PAGEWARDEN_") || k.equals("SERVER_PORT"));
            pb.environment().put("PAGEWARDEN_NODE_ID", node);
            pb.environment().put("PAGEWARDEN_REPLICAS", "2");
            process = pb.start();
        }

        void awaitReady() throws Exception {
            long deadline = System.nanoTime() + Duration.ofSeconds(180).toNanos();
            while (System.nanoTime() < deadline) {
                if (!process.isAlive()) {
                    throw new AssertionError(node + " exited with " + process.exitValue() + ":\n" + tail());
                }
                try {
                    HttpResponse<String> r = http.send(HttpRequest.newBuilder(URI.create("http://localhost:" + management
                            + "/actuator/health/readiness")).timeout(Duration.ofSeconds(5)).build(), HttpResponse.BodyHandlers.ofString());
                    if (r.statusCode() == 200) {
                        return;
                    }
                } catch (IOException notYet) {
                    // not listening yet
                }
                Thread.sleep(250);
            }
            throw new AssertionError(node + " not ready within 180 s:\n" + tail());
        }

        void stop() throws Exception {
            process.destroy(); // SIGTERM: the graceful shutdown an orchestrator asks for
            if (!process.waitFor(60, TimeUnit.SECONDS)) {
                process.destroyForcibly().waitFor(10, TimeUnit.SECONDS);
                throw new AssertionError(node + " did not stop within 60 s of SIGTERM:\n" + tail());
            }
        }

        void restart() throws Exception {
            long t0 = System.nanoTime();
            stop();
            start();
            awaitReady();
            System.out.printf("%s restarted in %.1f s%n", node, (System.nanoTime() - t0) / 1e9);
        }

        String tail() {
            try {
                List<String> lines = Files.readAllLines(log());
                return String.join("\n", lines.subList(Math.max(0, lines.size() - 60), lines.size()));
            } catch (IOException e) {
                return "(no log: " + e + ")";
            }
        }
    }

    private record Tenant(String id, String key) {
    }

    /** A completion that was served: by which replica, for which tenant, its id and receipt. */
    private record Served(Replica on, Tenant tenant, String id, String receipt) {
        String keyId() {
            return receipt.split("\\.")[2];
        }
    }

    private static int freePort() throws IOException {
        try (ServerSocket s = new ServerSocket(0)) {
            return s.getLocalPort();
        }
    }

    private HttpResponse<String> call(String method, String url, String bearer, Object body) throws Exception {
        HttpRequest.Builder b = HttpRequest.newBuilder(URI.create(url)).timeout(Duration.ofSeconds(90))
                .header("Authorization", "Bearer " + bearer);
        if (body == null) {
            b.method(method, HttpRequest.BodyPublishers.noBody());
        } else {
            b.header("Content-Type", "application/json").method(method, HttpRequest.BodyPublishers.ofString(JSON.writeValueAsString(body)));
        }
        return http.send(b.build(), HttpResponse.BodyHandlers.ofString());
    }

    @SuppressWarnings("unchecked")
    private static Map<String, Object> json(HttpResponse<String> r) {
        return JSON.readValue(r.body(), Map.class);
    }

    private Tenant newTenant(Replica on, String name) throws Exception {
        HttpResponse<String> t = call("POST", on.url() + "/admin/api/tenants", ADMIN_TOKEN, Map.of("name", name));
        assertThat(t.statusCode()).as(t.body()).isEqualTo(201);
        String id = (String) json(t).get("id");
        HttpResponse<String> k = call("POST", on.url() + "/admin/api/tenants/" + id + "/keys", ADMIN_TOKEN, Map.of());
        assertThat(k.statusCode()).as(k.body()).isEqualTo(201);
        return new Tenant(id, (String) json(k).get("key"));
    }

    private HttpResponse<String> complete(Replica on, Tenant t, String prompt, int maxTokens, double temperature) throws Exception {
        return call("POST", on.url() + "/v1/completions", t.key(), Map.of("model", MODEL, "prompt", prompt,
                "max_tokens", maxTokens, "temperature", temperature));
    }

    /** {@code n} random requests of random tenants, two at a time, each to a random one of {@code to}. */
    private List<Served> load(Random random, int n, List<Tenant> tenants, Replica... to) throws Exception {
        ExecutorService pool = Executors.newFixedThreadPool(2);
        try {
            List<Future<Served>> sent = new ArrayList<>();
            for (int i = 0; i < n; i++) {
                Replica on = to[random.nextInt(to.length)];
                Tenant t = tenants.get(random.nextInt(tenants.size()));
                String prompt = PROMPTS.get(random.nextInt(PROMPTS.size()));
                int maxTokens = 2 + random.nextInt(14);
                double temperature = random.nextBoolean() ? 0 : 0.8;
                sent.add(pool.submit(() -> {
                    HttpResponse<String> r = complete(on, t, prompt, maxTokens, temperature);
                    assertThat(r.statusCode()).as(on.node + ": " + r.body()).isEqualTo(200);
                    String receipt = r.headers().firstValue("X-Pagewarden-Receipt").orElseThrow();
                    return new Served(on, t, (String) json(r).get("id"), receipt);
                }));
            }
            List<Served> out = new ArrayList<>();
            for (Future<Served> f : sent) {
                out.add(f.get());
            }
            return out;
        } finally {
            pool.shutdownNow();
        }
    }

    /**
     * A fresh JVM's first key lookup (JPA's first query) can outlast the 5 s lookup wait on a busy machine and answer
     * 503 auth_unavailable ("retry shortly"): like a load balancer's warm-up, one request is retried until served
     * before the replica takes the load.
     */
    private void warm(Replica r) throws Exception {
        long deadline = System.nanoTime() + Duration.ofSeconds(60).toNanos();
        HttpResponse<String> last = complete(r, warmup, "Once", 1, 0);
        while (last.statusCode() == 503 && System.nanoTime() < deadline) {
            Thread.sleep(200);
            last = complete(r, warmup, "Once", 1, 0);
        }
        assertThat(last.statusCode()).as(r.node + " warm-up: " + last.body()).isEqualTo(200);
    }

    private Tenant warmup;

    /** Restarts {@code which} while {@code n} requests go to {@code other}; returns those. */
    private List<Served> restartUnderLoad(Replica which, Replica other, Random random, int n, List<Tenant> tenants) throws Exception {
        CompletableFuture<Void> restart = CompletableFuture.runAsync(() -> {
            try {
                which.restart();
                warm(which);
            } catch (Exception e) {
                throw new IllegalStateException(e);
            }
        });
        List<Served> served = load(random, n, tenants, other);
        restart.get(240, TimeUnit.SECONDS);
        return served;
    }

    /** Polls until the receipt verifies on {@code on} (its lineage may still be on its way into PostgreSQL). */
    @SuppressWarnings("unchecked")
    private void awaitVerified(Served s, Replica on, long deadline) throws Exception {
        String last = null;
        while (System.nanoTime() < deadline) {
            HttpResponse<String> r = call("GET", on.url() + "/v1/audit/requests/" + s.id(), s.tenant().key(), null);
            assertThat(r.statusCode()).as(r.body()).isEqualTo(200);
            Map<String, Object> v = (Map<String, Object>) json(r).get("receipt_verification");
            last = v.get("status") + ": " + v.get("detail");
            if ("ok".equals(v.get("status"))) {
                return;
            }
            assertThat(v.get("status")).as("receipt of " + s.id() + " served by " + s.on().node + ", checked on " + on.node
                    + ": " + last).isEqualTo("pending");
            Thread.sleep(100);
        }
        throw new AssertionError("receipt of " + s.id() + " (" + s.on().node + ") not verified on " + on.node + ": " + last);
    }

    @Test
    @SuppressWarnings("unchecked")
    void twoReplicasOnOneDatabaseGiveOneAnswer() throws Exception {
        long seed = System.nanoTime();
        Random random = new Random(seed);
        System.out.println("TwoReplicasProcessTest seed " + seed);
        pg = EmbeddedPostgresServer.start(EmbeddedPostgresServer.Config.defaults().withDataDirectory(tmp.resolve("pg")));
        // the 2026 incident's lab setting on both (window 320 over a 192-token prefill pool, detectors off); the
        // load's prompts are short, so only the replays go over the pool
        List<String> lab = List.of("pagewarden.lab.enabled=true",
                "pagewarden.lab.faults=skip-capacity-check,legacy-finished-check,detectors-off",
                "pagewarden.engine.context-window=320", "pagewarden.engine.prefill-pool-tokens=192",
                "pagewarden.engine.decode-pool-tokens=1024");
        Replica a = new Replica("replica-a", lab);
        Replica b = new Replica("replica-b", lab);
        long testStart = System.nanoTime();
        try {
            a.start();
            a.awaitReady(); // first alone: it creates the schema and the first admin
            b.start();
            b.awaitReady();
            System.out.printf("both replicas up after %.1f s%n", (System.nanoTime() - testStart) / 1e9);
            JdbcClient db = JdbcClient.create(pg.dataSource());
            Instant loadStart = Instant.now().minusSeconds(1);

            warmup = newTenant(a, "warm-up");
            warm(a);
            warm(b);
            List<Tenant> tenants = List.of(newTenant(a, "acme"), newTenant(b, "globex"), newTenant(a, "initech"));
            UiSession onA = new UiSession(a.url()).login("admin", PASSWORD);
            assertThat(onA.sameBrowserOn(b.url()).get("/admin").getStatus().value())
                    .as("the session started on A is known to B").isEqualTo(200);

            List<Served> served = new CopyOnWriteArrayList<>(load(random, 8, tenants, a, b));
            served.addAll(restartUnderLoad(a, b, random, 6, tenants));
            served.addAll(load(random, 6, tenants, a, b));
            // A rotates its signing key mid-run; B restarts next
            Map<String, Object> rotated = json(call("POST", a.url() + "/admin/api/receipt-keys/rotate", ADMIN_TOKEN,
                    Map.of("reason", "scheduled")));
            served.addAll(restartUnderLoad(b, a, random, 6, tenants));
            served.addAll(load(random, 8, tenants, a, b));
            assertThat(served).extracting(s -> s.on().node).contains("replica-a", "replica-b");
            assertThat(served).filteredOn(s -> s.on() == a).extracting(Served::keyId).contains(
                    (String) rotated.get("previous"), (String) rotated.get("current"));

            // the old key retired through B: it signs nothing more, and what it signed verifies on both
            HttpResponse<String> retired = call("POST", b.url() + "/admin/api/receipt-keys/" + rotated.get("previous")
                    + "/retire", ADMIN_TOKEN, null);
            assertThat(retired.statusCode()).as(retired.body()).isEqualTo(200);
            assertThat(json(retired).get("retired_at")).isNotNull();
            HttpResponse<String> stillSigning = call("POST", b.url() + "/admin/api/receipt-keys/" + rotated.get("current")
                    + "/retire", ADMIN_TOKEN, null);
            assertThat(stillSigning.statusCode()).as(stillSigning.body()).isEqualTo(400);
            assertThat(stillSigning.body()).contains("key_still_signing");
            assertThat(db.sql("SELECT action FROM admin_audit WHERE action LIKE 'receipt_key.%'").query(String.class).list())
                    .contains("receipt_key.rotate", "receipt_key.retire");
            Map<String, Object> listed = json(call("GET", a.url() + "/admin/api/receipt-keys", ADMIN_TOKEN, null));
            assertThat(listed.get("current")).isEqualTo(rotated.get("current"));
            assertThat((List<Map<String, Object>>) listed.get("keys")).filteredOn(k -> k.get("kid").equals(rotated.get("previous")))
                    .singleElement().satisfies(k -> {
                        assertThat(k.get("node")).isEqualTo("replica-a");
                        assertThat(k.get("superseded_at")).isNotNull();
                        assertThat(k.get("retired_at")).isNotNull();
                    });
            Map<String, Object> published = json(call("GET", b.url() + "/.well-known/pagewarden-receipt-keys", ADMIN_TOKEN, null));
            assertThat((List<Map<String, Object>>) published.get("keys")).extracting(k -> k.get("kid"))
                    .as("B publishes both of A's keys, the retired one too").contains(rotated.get("previous"), rotated.get("current"));

            long deadline = System.nanoTime() + Duration.ofSeconds(90).toNanos();
            for (Served s : served) {
                awaitVerified(s, a, deadline);
                awaitVerified(s, b, deadline);
            }
            List<Exposure> exposures = new LineageQueries(pg.dataSource()).exposures(loadStart, Instant.now());
            assertThat(exposures).as("exposures in the lineage of %d requests on two replicas", served.size()).isEmpty();

            UiSession onB = onA.sameBrowserOn(b.url());
            assertThat(onB.get("/admin").getStatus().value()).as("the session survived both restarts, on B").isEqualTo(200);
            assertThat(onA.get("/admin").getStatus().value()).as("and on A").isEqualTo(200);

            // password guessing spread over both replicas counts against one limit (5 per account)
            UiSession guessA = new UiSession(a.url());
            UiSession guessB = new UiSession(b.url());
            for (int i = 0; i < 5; i++) {
                UiSession g = i % 2 == 0 ? guessA : guessB;
                g.get("/admin/login");
                assertThat(g.post("/admin/login", "username", "admin", "password", "wrong-" + i).getStatus().value())
                        .as("wrong password %d", i).isEqualTo(302);
            }
            guessB.get("/admin/login");
            assertThat(guessB.post("/admin/login", "username", "admin", "password", PASSWORD).getStatus().value())
                    .as("the 6th attempt, on B: locked out even with the right password").isEqualTo(429);
            guessA.get("/admin/login");
            assertThat(guessA.post("/admin/login", "username", "admin", "password", PASSWORD).getStatus().value())
                    .as("and on A").isEqualTo(429);

            // a model taken private on A is refused by B within 2 s, and made public on B is served by A again
            Tenant t0 = tenants.getFirst();
            assertThat(call("PUT", a.url() + "/admin/api/models/" + MODEL + "/visibility", ADMIN_TOKEN,
                    Map.of("private", true)).statusCode()).isEqualTo(200);
            long madePrivate = System.nanoTime();
            HttpResponse<String> refused = complete(b, t0, "Once", 2, 0);
            while (refused.statusCode() == 200 && System.nanoTime() - madePrivate < Duration.ofSeconds(5).toNanos()) {
                refused = complete(b, t0, "Once", 2, 0);
            }
            Duration seen = Duration.ofNanos(System.nanoTime() - madePrivate);
            assertThat(refused.statusCode()).as(refused.body()).isEqualTo(503);
            assertThat(refused.body()).contains("model_unavailable");
            assertThat(seen).as("B refuses the model taken private on A").isLessThan(Duration.ofSeconds(2));
            assertThat(call("PUT", b.url() + "/admin/api/models/" + MODEL + "/visibility", ADMIN_TOKEN,
                    Map.of("private", false)).statusCode()).isEqualTo(200);
            long madePublic = System.nanoTime();
            HttpResponse<String> back = complete(a, t0, "Once", 2, 0);
            while (back.statusCode() != 200 && System.nanoTime() - madePublic < Duration.ofSeconds(5).toNanos()) {
                back = complete(a, t0, "Once", 2, 0);
            }
            assertThat(back.statusCode()).as(back.body()).isEqualTo(200);
            assertThat(Duration.ofNanos(System.nanoTime() - madePublic)).isLessThan(Duration.ofSeconds(2));

            // 10 requests a minute across both replicas
            Tenant limited = newTenant(b, "limited");
            assertThat(call("PUT", a.url() + "/admin/api/tenants/" + limited.id() + "/limits", ADMIN_TOKEN,
                    Map.of("requests_per_minute", 10)).statusCode()).isEqualTo(200);
            long quotaStart = System.nanoTime();
            int ok = 0;
            for (int i = 0; i < 16; i++) {
                HttpResponse<String> r = complete(i % 2 == 0 ? a : b, limited, "Once", 1, 0);
                assertThat(r.statusCode()).as(r.body()).isIn(200, 429);
                ok += r.statusCode() == 200 ? 1 : 0;
            }
            long refills = Duration.ofNanos(System.nanoTime() - quotaStart).toSeconds() / 6; // one more each 6 s
            assertThat(ok).as("served of 16 at 10 a minute across both").isBetween(10, 10 + (int) refills);

            // the 2026 incident replayed twice on B while both replicas' sweeps run each second
            Instant labStart = Instant.now().minusSeconds(1);
            for (int i = 0; i < 2; i++) {
                HttpResponse<String> replay = call("POST", b.url() + "/admin/api/lab/replay", ADMIN_TOKEN,
                        Map.of("scenario", "incident-2026-undetected"));
                assertThat(replay.statusCode()).as(replay.body()).isEqualTo(200);
            }
            LineageQueries lineage = new LineageQueries(pg.dataSource());
            long labDeadline = System.nanoTime() + Duration.ofSeconds(60).toNanos();
            Set<List<Object>> found = Set.of();
            int filed = -1;
            while (System.nanoTime() < labDeadline) {
                found = new HashSet<>();
                for (Exposure e : lineage.exposures(labStart, Instant.now())) {
                    found.add(List.of(e.node(), e.worker(), e.page(), e.readEpoch(), e.readerRequest(), e.exposingRequest()));
                }
                filed = db.sql("SELECT count(*) FROM incident_exposures WHERE incident_id IS NOT NULL").query(Integer.class).single();
                if (!found.isEmpty() && filed == found.size()) {
                    break;
                }
                Thread.sleep(200);
            }
            assertThat(found).as("the replays exposed someone").isNotEmpty();
            assertThat(filed).as("each exposure filed once, whichever sweep saw it").isEqualTo(found.size());
            List<Map<String, Object>> perPool = db.sql("SELECT node, worker, count(*) AS n FROM incidents "
                    + "WHERE id IN (SELECT incident_id FROM incident_exposures) GROUP BY node, worker").query().listOfRows();
            assertThat(perPool).isNotEmpty().allSatisfy(row -> assertThat(((Number) row.get("n")).intValue())
                    .as("incidents of pool " + row).isEqualTo(1));
            System.out.printf("%d requests served, %d lab exposures filed into %d incident(s); %.1f s in all%n",
                    served.size(), filed, perPool.size(), (System.nanoTime() - testStart) / 1e9);
        } catch (Throwable e) {
            System.out.println("replica-a log tail:\n" + a.tail() + "\nreplica-b log tail:\n" + b.tail());
            throw e;
        } finally {
            for (Replica r : List.of(a, b)) {
                if (r.process != null && r.process.isAlive()) {
                    r.process.destroyForcibly().waitFor(10, TimeUnit.SECONDS);
                }
            }
            pg.close();
        }
    }
}
