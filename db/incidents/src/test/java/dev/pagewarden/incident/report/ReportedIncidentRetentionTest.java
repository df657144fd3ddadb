package dev.pagewarden.incident.report;

import dev.pagewarden.core.testing.ManualClock;
import dev.pagewarden.db.audit.LineageQueries;
import dev.pagewarden.db.lineage.PartitionManager;
import dev.pagewarden.db.schema.Migrations;
import dev.pagewarden.db.testing.TestPostgres;
import dev.pagewarden.incident.PlatformPort;
import dev.pagewarden.incident.audit.AdminAuditLog;
import dev.pagewarden.incident.audit.TestAuditLogs;
import dev.pagewarden.incident.incident.Incident;
import dev.pagewarden.incident.incident.IncidentService;
import dev.pagewarden.incident.incident.TestIncidents;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.springframework.jdbc.datasource.DataSourceTransactionManager;
import org.springframework.jdbc.core.simple.JdbcClient;
import org.springframework.transaction.support.TransactionTemplate;

import javax.sql.DataSource;
import java.lang.reflect.Proxy;
import java.sql.Connection;
import java.time.Duration;
import java.time.Instant;
import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * What an outside report keeps of the lineage, on real PostgreSQL: nothing until a responder triages its incident,
 * then only the reported window with the incident lookback on both sides (a detector's open incident still holds
 * from its first event on, open-ended); and a report nobody triages within the expiry is closed.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class ReportedIncidentRetentionTest {
    private static final Duration LOOKBACK = TestIncidents.PROPERTIES.incidentLookback();
    private TestPostgres pg;
    private DataSource ds;
    private JdbcClient jdbc;

    @BeforeAll
    void startDatabase() throws Exception {
        pg = TestPostgres.start("reported-retention");
        ds = pg.dataSource();
        Migrations.migrate(ds);
        jdbc = JdbcClient.create(ds);
    }

    @AfterAll
    void stopDatabase() throws Exception {
        pg.close();
    }

    @Test
    void aReportHoldsOnlyItsTriagedWindowAndExpiresUntriaged() throws Exception {
        Instant now = Instant.parse("2026-12-01T10:00:00Z");
        ManualClock clock = new ManualClock(now);
        TransactionTemplate tx = new TransactionTemplate(new DataSourceTransactionManager(ds));
        AdminAuditLog audit = TestAuditLogs.over(jdbc);
        IncidentService incidents = TestIncidents.over(jdbc, platform(), audit, TestIncidents.PROPERTIES,
                new LineageQueries(ds), tx, clock);
        OutsideReports reports = new OutsideReports(jdbc, incidents, audit, properties(), tx, clock);
        PartitionManager partitions = new PartitionManager(2, 30, LOOKBACK);

        // a report naming a window 300 days back
        Instant from = now.minus(Duration.ofDays(300)), to = from.plus(Duration.ofHours(2));
        long reported = report(reports, from, to, "old@example.org");
        assertThat(holds(partitions)).as("untriaged: nothing held").noneMatch(h -> h.reason().equals("open incident " + reported));

        // a responder triages it: only the window, the lookback on both sides
        incidents.setStatus(reported, Incident.Status.INVESTIGATING, "alice");
        assertThat(holds(partitions)).filteredOn(h -> h.reason().equals("open incident " + reported)).singleElement()
                .satisfies(h -> {
                    assertThat(h.from()).isEqualTo(from.minus(LOOKBACK));
                    assertThat(h.to()).isEqualTo(to.plus(LOOKBACK));
                });

        // a detector's incident still holds from before its first event on, with no end
        long detected = incidents.file(new IncidentService.Signal("checksum-mismatch", "CRITICAL", "engine-a", "decode-0", 7,
                "acme", List.of(3), now.minusSeconds(60), "detected"));
        assertThat(holds(partitions)).filteredOn(h -> h.reason().equals("open incident " + detected)).singleElement()
                .satisfies(h -> {
                    assertThat(h.from()).isEqualTo(now.minusSeconds(60).minus(LOOKBACK));
                    assertThat(h.to()).isNull();
                });

        // an untriaged report is closed once the expiry has passed, a triaged one is not
        long untriaged = report(reports, null, null, "new@example.org");
        clock.set(now.plus(Duration.ofDays(13)));
        assertThat(reports.expireUntriaged()).isEmpty();
        assertThat(incidents.get(untriaged).status()).isEqualTo(Incident.Status.REPORTED);
        clock.set(now.plus(Duration.ofDays(15)));
        assertThat(reports.expireUntriaged()).containsExactly(untriaged);
        assertThat(incidents.get(untriaged).status()).isEqualTo(Incident.Status.RESOLVED);
        assertThat(incidents.get(reported).status()).isEqualTo(Incident.Status.INVESTIGATING);
        assertThat(incidents.timeline(untriaged)).extracting(e -> e.text())
                .anySatisfy(t -> assertThat(t).contains("no responder triaged the report within 14 days"));
    }

    /** Files a report the way the form does (difficulty 0: any nonce solves); returns its incident. */
    private long report(OutsideReports reports, Instant from, Instant to, String contact) {
        String client = "203.0.113.9";
        ProofOfWork.Challenge c = reports.challenge(client);
        reports.submit(new OutsideReports.Submission(contact, "seen", null, from, to, c.value(), "1", client));
        return jdbc.sql("SELECT incident_id FROM outside_reports WHERE contact = :c").param("c", contact)
                .query(Long.class).single();
    }

    private List<PartitionManager.Hold> holds(PartitionManager partitions) throws Exception {
        try (Connection c = ds.getConnection()) {
            return partitions.holds(c);
        }
    }

    private static ReportProperties properties() {
        return new ReportProperties(null, List.of(), null, Duration.ofDays(180), "en", 0, Duration.ofDays(14),
                Duration.ofMinutes(10), 5, 30, 20_000);
    }

    private static PlatformPort platform() {
        return (PlatformPort) Proxy.newProxyInstance(PlatformPort.class.getClassLoader(), new Class<?>[]{PlatformPort.class},
                (proxy, method, args) -> switch (method.getName()) {
                    case "servedModel" -> java.util.Optional.of("glm");
                    case "nodeId" -> "engine-a";
                    case "tenants" -> List.of();
                    case "toString" -> "platform";
                    default -> throw new UnsupportedOperationException(method.getName());
                });
    }
}
