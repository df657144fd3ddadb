package dev.pagewarden.incident.report;

import dev.pagewarden.core.lineage.LineageEvent;
import dev.pagewarden.core.testing.ManualClock;
import dev.pagewarden.db.audit.LineageQueries;
import dev.pagewarden.db.lineage.PartitionManager;
import dev.pagewarden.db.schema.Migrations;
import dev.pagewarden.db.testing.Ev;
import dev.pagewarden.db.testing.TestPostgres;
import dev.pagewarden.db.testing.TestShipping;
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
import org.junit.jupiter.api.io.TempDir;
import org.springframework.jdbc.core.simple.JdbcClient;
import org.springframework.jdbc.datasource.DataSourceTransactionManager;
import org.springframework.transaction.support.TransactionTemplate;

import javax.sql.DataSource;
import java.lang.reflect.Proxy;
import java.nio.file.Path;
import java.sql.Timestamp;
import java.time.Duration;
import java.time.Instant;
import java.time.temporal.ChronoUnit;
import java.util.List;
import java.util.Optional;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * An outside report naming responses by the ids tenants were given, on real PostgreSQL: each id resolved to the
 * engine's request and to the incident whose blast radius covers it (as reader or as the one read), or left
 * unexplained; the report's incident merged into the covering one, both timelines and the admin audit saying so,
 * and the reporter's status following the incident it was merged into.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class ReportCoverageTest {
    private static final String NODE = "engine-r";
    private TestPostgres pg;
    private DataSource ds;
    private JdbcClient jdbc;
    @TempDir
    Path tmp;

    @BeforeAll
    void startDatabase() throws Exception {
        pg = TestPostgres.start("report-coverage");
        ds = pg.dataSource();
        Migrations.migrate(ds);
        jdbc = JdbcClient.create(ds);
        jdbc.sql("INSERT INTO tenants VALUES ('globex', 'Globex'), ('initech', 'Initech')").update();
    }

    @AfterAll
    void stopDatabase() throws Exception {
        pg.close();
    }

    @Test
    void namedIdsLinkTheCoveringIncidentAndTheReportMergesIntoIt() throws Exception {
        Instant start = Instant.now().truncatedTo(ChronoUnit.MICROS).minusSeconds(120);
        // 501 (globex) fills page 4 and lets it go; 502 (initech) gets it, writes one slot and reads sixteen;
        // 503 (globex) is served on a page of its own
        Ev ev = new Ev(NODE, 91, ChronoUnit.MICROS.between(Instant.EPOCH, start));
        List<LineageEvent> events = List.of(
                ev.allocate("decode-0", 4, 1, 501, "globex"), ev.write("decode-0", 4, 1, 501, "globex", 0, 16),
                ev.read("decode-0", 4, 1, 501, "globex", 0, 16), ev.release("decode-0", 4, 1, 501, "globex"),
                ev.allocate("decode-0", 4, 2, 502, "initech"), ev.write("decode-0", 4, 2, 502, "initech", 0, 1),
                ev.read("decode-0", 4, 2, 502, "initech", 0, 16), ev.release("decode-0", 4, 2, 502, "initech"),
                ev.allocate("decode-0", 5, 1, 503, "globex"), ev.write("decode-0", 5, 1, 503, "globex", 0, 16),
                ev.read("decode-0", 5, 1, 503, "globex", 0, 16), ev.release("decode-0", 5, 1, 503, "globex"));
        TestShipping.ship(ds, tmp.resolve("ship"), new PartitionManager(2, 30), events);
        for (long id = 501; id <= 503; id++) {
            jdbc.sql("INSERT INTO requests (id, tenant_id, model, prompt_tokens, generated_tokens, status, received_at, public_id) "
                    + "VALUES (:id, :t, 'glm', 16, 1, 'FINISHED', :at, :p)").param("id", id)
                    .param("t", id == 502 ? "initech" : "globex").param("at", Timestamp.from(start)).param("p", publicId(id))
                    .update();
        }

        ManualClock clock = new ManualClock(start.plusSeconds(60));
        TransactionTemplate tx = new TransactionTemplate(new DataSourceTransactionManager(ds));
        AdminAuditLog audit = TestAuditLogs.over(jdbc);
        IncidentService incidents = TestIncidents.over(jdbc, platform(), audit, TestIncidents.PROPERTIES, new LineageQueries(ds),
                tx, clock);
        OutsideReports reports = new OutsideReports(jdbc, incidents, audit, properties(), tx, clock);
        ReportCoverage coverage = new ReportCoverage(jdbc, incidents, reports);

        long a = incidents.file(new IncidentService.Signal("checksum-mismatch", "CRITICAL", NODE, "decode-0", 502, "initech",
                List.of(4), start.plusSeconds(1), "detected"));
        // an hour later a report names the reader, the one read, a clean response and an id nobody was given
        clock.set(start.plus(Duration.ofHours(1)));
        String token = report(reports, "chatcmpl-" + publicId(502) + " cmpl-" + publicId(501) + " cmpl-" + publicId(503)
                + " cmpl-" + "Z".repeat(24), "reporter@example.org");
        long reported = reportedIncident("reporter@example.org");
        assertThat(incidents.blastRadius(incidents.get(reported)).affectedResponses()).as("the reporter's window is an hour later").isZero();

        List<ReportCoverage.CoveredReport> found = coverage.forIncident(reported);
        assertThat(found).singleElement().satisfies(c -> {
            assertThat(c.ids()).containsExactly(
                    new ReportCoverage.NamedId("chatcmpl-" + publicId(502), 502L, a),
                    new ReportCoverage.NamedId("cmpl-" + publicId(501), 501L, a),
                    new ReportCoverage.NamedId("cmpl-" + publicId(503), 503L, null),
                    new ReportCoverage.NamedId("cmpl-" + "Z".repeat(24), null, null));
            assertThat(c.coveringIncidents()).containsExactly(a);
        });

        // a report naming only what no incident covers cannot be merged into one
        report(reports, "cmpl-" + publicId(503), "other@example.org");
        long uncovered = reportedIncident("other@example.org");
        assertThat(coverage.forIncident(uncovered).getFirst().coveringIncidents()).isEmpty();
        assertThatThrownBy(() -> coverage.merge(uncovered, a, "root")).isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("blast radius");
        assertThatThrownBy(() -> coverage.merge(a, reported, "root")).isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("not opened by an outside report");

        Incident merged = coverage.merge(reported, a, "root");
        assertThat(merged.status()).isEqualTo(Incident.Status.RESOLVED);
        assertThat(merged.mergedInto()).isEqualTo(a);
        assertThat(incidents.get(a).open()).isTrue();
        assertThat(jdbc.sql("SELECT actor || ' ' || target || ' ' || details FROM admin_audit WHERE action = 'incident.merge'")
                .query(String.class).list()).containsExactly("root incident " + reported + " into incident " + a);
        assertThat(incidents.timeline(a)).filteredOn(e -> e.kind().equals("ACTION")).singleElement().satisfies(e -> {
            assertThat(e.actor()).isEqualTo("root");
            assertThat(e.text()).contains("incident " + reported + " merged into this one")
                    .contains("chatcmpl-" + publicId(502)).contains("cmpl-" + publicId(501)).doesNotContain(publicId(503));
        });
        assertThat(incidents.timeline(reported)).last().satisfies(e -> assertThat(e.text())
                .isEqualTo("status reported -> resolved: merged into incident " + a));
        // the reporter is told what the incident carrying the report is at, not "closed"
        assertThat(reports.status(token)).hasValueSatisfying(s -> assertThat(s.status()).isEqualTo("under investigation"));
        assertThatThrownBy(() -> coverage.merge(reported, a, "root")).isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("already merged");
    }

    /** A tenant-facing id: 24 base62 characters. */
    private static String publicId(long request) {
        return "pub" + request + "x".repeat(24 - 3 - Long.toString(request).length());
    }

    /** Files a report the way the form does (difficulty 0: any nonce solves); returns the reporter's token. */
    private static String report(OutsideReports reports, String ids, String contact) {
        String client = "203.0.113.7";
        ProofOfWork.Challenge c = reports.challenge(client);
        return reports.submit(new OutsideReports.Submission(contact, "another customer's text", ids, null, null, c.value(), "1",
                client)).token();
    }

    private long reportedIncident(String contact) {
        return jdbc.sql("SELECT incident_id FROM outside_reports WHERE contact = :c").param("c", contact).query(Long.class).single();
    }

    private static ReportProperties properties() {
        return new ReportProperties(null, List.of(), null, Duration.ofDays(180), "en", 0, Duration.ofDays(14),
                Duration.ofMinutes(10), 5, 30, 20_000);
    }

    private static PlatformPort platform() {
        return (PlatformPort) Proxy.newProxyInstance(PlatformPort.class.getClassLoader(), new Class<?>[]{PlatformPort.class},
                (proxy, method, args) -> switch (method.getName()) {
                    case "servedModel" -> Optional.of("glm");
                    case "nodeId" -> NODE;
                    case "tenants" -> List.of();
                    case "toString" -> "platform";
                    default -> throw new UnsupportedOperationException(method.getName());
                });
    }
}
