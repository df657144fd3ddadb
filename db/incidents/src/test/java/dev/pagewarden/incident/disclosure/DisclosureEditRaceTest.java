package dev.pagewarden.incident.disclosure;

import dev.pagewarden.core.receipt.ReceiptKeys;
import dev.pagewarden.core.testing.ManualClock;
import dev.pagewarden.db.audit.LineageQueries;
import dev.pagewarden.db.schema.Migrations;
import dev.pagewarden.db.testing.TestPostgres;
import dev.pagewarden.incident.PlatformPort;
import dev.pagewarden.incident.audit.AdminAuditLog;
import dev.pagewarden.incident.audit.TestAuditLogs;
import dev.pagewarden.incident.incident.FrozenBlastRadiusService;
import dev.pagewarden.incident.incident.Incident;
import dev.pagewarden.incident.incident.IncidentService;
import dev.pagewarden.incident.incident.TestFrozenBlastRadii;
import dev.pagewarden.incident.incident.TestIncidents;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.springframework.jdbc.core.simple.JdbcClient;
import org.springframework.jdbc.datasource.DataSourceTransactionManager;
import org.springframework.transaction.support.TransactionTemplate;

import javax.sql.DataSource;
import java.lang.reflect.Proxy;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * An edit racing a publish on real PostgreSQL: the edit waits for the publish's row lock and is then refused
 * because the version is published; it never turns the published version back into a draft.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class DisclosureEditRaceTest {
    private TestPostgres pg;
    private DataSource ds;
    private JdbcClient jdbc;

    @BeforeAll
    void startDatabase() throws Exception {
        pg = TestPostgres.start("edit-race");
        ds = pg.dataSource();
        Migrations.migrate(ds);
        jdbc = JdbcClient.create(ds);
    }

    @AfterAll
    void stopDatabase() throws Exception {
        pg.close();
    }

    @Test
    void anEditWaitingOnAPublishIsRefusedAndThePublishStands() throws Exception {
        ManualClock clock = new ManualClock(Instant.parse("2026-12-01T10:00:00Z"));
        TransactionTemplate tx = new TransactionTemplate(new DataSourceTransactionManager(ds));
        AdminAuditLog audit = TestAuditLogs.over(jdbc);
        IncidentService incidents = TestIncidents.over(jdbc, platform(), audit, TestIncidents.PROPERTIES, new LineageQueries(ds),
                tx, clock);
        FrozenBlastRadiusService frozen = TestFrozenBlastRadii.over(ds, incidents, platform(), clock, ReceiptKeys.generate("pw"));
        DisclosureService disclosures = new DisclosureService(jdbc, incidents, platform(), audit,
                new WebhookService(jdbc, TestIncidents.PROPERTIES, null, null, null, clock),
                new DisclosureReviews(jdbc, audit, tx, clock, false, Duration.ZERO), tx, clock, frozen);
        long incident = incidents.file(new IncidentService.Signal("checksum-mismatch", "CRITICAL", "engine-r", "decode-0", 5,
                "acme", List.of(1), clock.instant(), "race"));
        incidents.setStatus(incident, Incident.Status.RESOLVED, "alice");
        Disclosure draft = disclosures.draft(incident, "alice");
        long id = draft.id();
        disclosures.edit(id, draft.title(), draft.body().replaceAll("_Describe[^_\n]*_", "Filled in."), "alice");
        disclosures.submitForReview(id, "alice");

        // the publish's transaction stays open (holding the row) until the edit is seen waiting on a lock
        CountDownLatch published = new CountDownLatch(1);
        CountDownLatch release = new CountDownLatch(1);
        ExecutorService threads = Executors.newFixedThreadPool(2); // its own threads: the common pool may have one
        CompletableFuture<Void> publish = CompletableFuture.runAsync(() -> tx.executeWithoutResult(s -> {
            disclosures.publish(id, "bob");
            published.countDown();
            try {
                assertThat(release.await(60, TimeUnit.SECONDS)).isTrue();
            } catch (InterruptedException e) {
                throw new IllegalStateException(e);
            }
        }), threads);
        assertThat(published.await(60, TimeUnit.SECONDS)).isTrue();
        CompletableFuture<Throwable> edit = CompletableFuture.supplyAsync(() -> {
            try {
                disclosures.edit(id, "changed", "changed while publishing", "carol");
                return null;
            } catch (RuntimeException e) {
                return e;
            }
        }, threads);
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
        while (jdbc.sql("SELECT count(*) FROM pg_stat_activity WHERE wait_event_type = 'Lock'").query(Long.class).single() == 0
                && !edit.isDone() && System.nanoTime() < deadline) {
            Thread.onSpinWait();
        }
        release.countDown();
        publish.get(60, TimeUnit.SECONDS);
        assertThat(edit.get(60, TimeUnit.SECONDS)).isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("is published and cannot change");
        assertThat(disclosures.get(id).status()).isEqualTo(Disclosure.Status.PUBLISHED);
        assertThat(disclosures.get(id).title()).isNotEqualTo("changed");
        threads.shutdown();
    }

    private static PlatformPort platform() {
        return (PlatformPort) Proxy.newProxyInstance(PlatformPort.class.getClassLoader(), new Class<?>[]{PlatformPort.class},
                (proxy, method, args) -> switch (method.getName()) {
                    case "servedModel" -> Optional.of("glm");
                    case "nodeId" -> "engine-r";
                    case "tenants" -> List.of();
                    case "toString" -> "platform";
                    default -> throw new UnsupportedOperationException(method.getName());
                });
    }
}
