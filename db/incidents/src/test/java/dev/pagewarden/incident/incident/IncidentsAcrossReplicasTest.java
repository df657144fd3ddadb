package dev.pagewarden.incident.incident;

import dev.pagewarden.core.lineage.LineageEvent;
import dev.pagewarden.db.audit.LineageQueries;
import dev.pagewarden.db.lineage.PartitionManager;
import dev.pagewarden.db.schema.Migrations;
import dev.pagewarden.db.testing.Ev;
import dev.pagewarden.db.testing.TestPostgres;
import dev.pagewarden.db.testing.TestShipping;
import dev.pagewarden.incident.AdminProperties;
import dev.pagewarden.incident.PlatformPort;
import dev.pagewarden.incident.audit.TestAuditLogs;
import dev.pagewarden.incident.incident.TestFrozenBlastRadii;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.api.io.TempDir;
import org.springframework.jdbc.core.simple.JdbcClient;
import org.springframework.jdbc.datasource.DataSourceTransactionManager;
import org.springframework.transaction.support.TransactionTemplate;

import javax.sql.DataSource;
import java.lang.reflect.Proxy;
import java.nio.file.Path;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.time.ZoneOffset;
import java.time.temporal.ChronoUnit;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.Callable;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Two platform replicas' incident services and lineage sweeps over one real PostgreSQL, filing at the same
 * moment from two threads: one incident per pool, each exposure filed once, and the sweep's position shared,
 * so a restarted replica continues where the last sweep (of any replica) stopped.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class IncidentsAcrossReplicasTest {
    private TestPostgres pg;
    private DataSource ds;
    private JdbcClient jdbc;
    private final ExecutorService threads = Executors.newFixedThreadPool(2);
    @TempDir
    Path tmp;

    @BeforeAll
    void startDatabase() throws Exception {
        pg = TestPostgres.start("incidents");
        ds = pg.dataSource();
        Migrations.migrate(ds);
        jdbc = JdbcClient.create(ds);
    }

    @AfterAll
    void stopDatabase() throws Exception {
        threads.shutdownNow();
        pg.close();
    }

    /** One replica's admin UI services: its own connections, transactions and node id, the shared database. */
    private record Replica(IncidentService incidents, LineageSweep sweep) {
    }

    private Replica replica(String node, Clock clock) {
        JdbcClient own = JdbcClient.create(ds);
        PlatformPort platform = platform(node);
        IncidentService incidents = new IncidentService(own, platform, TestAuditLogs.over(own), TestIncidents.PROPERTIES, new LineageQueries(ds),
                new TransactionTemplate(new DataSourceTransactionManager(ds)), clock);
        return new Replica(incidents, new LineageSweep(new LineageQueries(ds), incidents, own, platform, clock, TestIncidents.PROPERTIES,
                TestFrozenBlastRadii.over(ds, incidents, platform, clock)));
    }

    /** The engine side of the port: serves model glm on {@code node}; nothing else is asked here. */
    private static PlatformPort platform(String node) {
        return (PlatformPort) Proxy.newProxyInstance(PlatformPort.class.getClassLoader(), new Class<?>[] {PlatformPort.class},
                (proxy, method, args) -> switch (method.getName()) {
                    case "servedModel" -> Optional.of("glm");
                    case "nodeId" -> node;
                    case "toString" -> "platform " + node;
                    default -> throw new UnsupportedOperationException(method.getName());
                });
    }

    /** Runs both calls at once (released together by a latch) and returns their results. */
    private <T> List<T> together(Callable<T> a, Callable<T> b) throws Exception {
        CountDownLatch go = new CountDownLatch(1);
        List<Future<T>> futures = new ArrayList<>();
        for (Callable<T> c : List.of(a, b)) {
            futures.add(threads.submit(() -> {
                go.await();
                return c.call();
            }));
        }
        go.countDown();
        List<T> results = new ArrayList<>();
        for (Future<T> f : futures) {
            results.add(f.get(60, TimeUnit.SECONDS));
        }
        return results;
    }

    @Test
    void twoReplicasFilingTheSameSignalAtOnceOpenOneIncident() throws Exception {
        Replica a = replica("replica-a", Clock.systemUTC()), b = replica("replica-b", Clock.systemUTC());
        for (int round = 0; round < 20; round++) {
            String worker = "decode-race-" + round;
            Instant at = Instant.now();
            IncidentService.Signal s = new IncidentService.Signal("checksum-mismatch", "CRITICAL", "engine-1", worker, 7, "acme",
                    List.of(3), at, "race " + round);
            List<Long> ids = together(() -> a.incidents().file(s), () -> b.incidents().file(s));
            assertThat(ids.get(0)).as("round %d", round).isEqualTo(ids.get(1));
            assertThat(jdbc.sql("SELECT count(*) FROM incidents WHERE worker = :w").param("w", worker).query(Long.class).single())
                    .as("incidents of round %d", round).isEqualTo(1);
            assertThat(a.incidents().get(ids.get(0)).events()).isEqualTo(2);
            assertThat(a.incidents().timeline(ids.get(0))).filteredOn(e -> e.kind().equals("DETECTOR")).hasSize(2);
        }
    }

    @Test
    void sweepsOfTwoReplicasFileEachExposureOnceAndContinueFromTheSharedPosition() throws Exception {
        jdbc.sql("INSERT INTO tenants VALUES ('globex', 'Globex'), ('initech', 'Initech') ON CONFLICT DO NOTHING").update();
        Instant now = Instant.now().truncatedTo(ChronoUnit.MICROS); // PostgreSQL keeps microseconds
        // replica A's last sweep ran half an hour ago, then it stopped
        Replica before = replica("replica-a", Clock.fixed(now.minus(Duration.ofMinutes(30)), ZoneOffset.UTC));
        assertThat(before.sweep().sweep()).isEmpty();
        assertThat(before.sweep().position()).contains(now.minus(Duration.ofMinutes(30)));

        // 25 minutes ago, on node engine-b: 202 (globex) fills page 9 and lets it go; 203 (initech) gets page 9 in
        // the next epoch, is sent one slot and reads sixteen - fifteen hold globex's data
        long t0 = ChronoUnit.MICROS.between(Instant.EPOCH, now.minus(Duration.ofMinutes(25)));
        Ev ev = new Ev("engine-b", 41, t0);
        List<LineageEvent> events = new ArrayList<>();
        serve(ev, events, 202, "globex", 100, 16);
        serve(ev, events, 203, "initech", 101, 1);
        ship(events);
        jdbc.sql("INSERT INTO requests (id, tenant_id, model, prompt_tokens, generated_tokens, status, received_at) VALUES "
                + "(202, 'globex', 'glm', 16, 1, 'FINISHED', now()), (203, 'initech', 'glm', 1, 1, 'FINISHED', now())").update();

        // both replicas (A restarted, so its own memory is gone) sweep at once: further back than their own start,
        // from the shared position, and the exposure is filed once
        Replica a = replica("replica-a", Clock.systemUTC()), b = replica("replica-b", Clock.systemUTC());
        List<List<Long>> filed = together(() -> a.sweep().sweep(), () -> b.sweep().sweep());
        assertThat(filed.stream().flatMap(List::stream).toList()).as("incidents filed by A, B: %s", filed).hasSize(1);
        long incident = filed.stream().flatMap(List::stream).findFirst().orElseThrow();
        assertThat(jdbc.sql("SELECT count(*) FROM incidents WHERE worker = 'decode-0'").query(Long.class).single()).isEqualTo(1);
        assertThat(jdbc.sql("SELECT reader_request, exposing_request, incident_id FROM incident_exposures")
                .query((rs, i) -> List.of(rs.getLong(1), rs.getLong(2), rs.getLong(3))).list())
                .containsExactly(List.of(203L, 202L, incident));
        Incident i = a.incidents().get(incident);
        assertThat(List.of(i.node(), i.worker(), i.events())).isEqualTo(List.of("engine-b", "decode-0", 1));
        assertThat(a.incidents().timeline(incident)).singleElement().satisfies(e -> assertThat(e.text()).contains("readers [203]"));
        assertThat(a.sweep().position()).hasValueSatisfying(p -> assertThat(p).isAfter(now.minusSeconds(1)));

        // sweeping again, on either replica or a fresh one, files nothing more
        assertThat(together(() -> a.sweep().sweep(), () -> b.sweep().sweep())).containsExactly(List.of(), List.of());
        assertThat(replica("replica-c", Clock.systemUTC()).sweep().sweep()).isEmpty();
        assertThat(a.incidents().get(incident).events()).isEqualTo(1);

        // a replica whose clock is behind never moves the shared position back
        Instant position = a.sweep().position().orElseThrow();
        before.sweep().sweep();
        assertThat(b.sweep().position()).contains(position);
    }

    /** A request's life on pool decode-0 of the builder's node: page 9 allocated, {@code written} slots written, 16 read. */
    private static void serve(Ev ev, List<LineageEvent> out, long request, String tenant, long epoch, int written) {
        out.add(ev.allocate("decode-0", 9, epoch, request, tenant));
        ev.tick(1_000);
        out.add(ev.write("decode-0", 9, epoch, request, tenant, 0, written));
        ev.tick(1_000);
        out.add(ev.read("decode-0", 9, epoch, request, tenant, 0, 16));
        ev.tick(1_000);
        out.add(ev.readFinal("decode-0", 9, epoch, request, tenant, 16));
        out.add(ev.release("decode-0", 9, epoch, request, tenant));
        ev.tick(1_000);
    }

    private void ship(List<LineageEvent> events) throws Exception {
        TestShipping.ship(ds, tmp.resolve("ship-" + System.nanoTime()), new PartitionManager(2, 30), events);
    }
}
