package dev.pagewarden.incident.disclosure;

import dev.pagewarden.core.lineage.LineageEvent;
import dev.pagewarden.core.receipt.ReceiptKeys;
import dev.pagewarden.core.testing.ManualClock;
import dev.pagewarden.db.audit.LineageQueries;
import dev.pagewarden.db.lineage.PartitionManager;
import dev.pagewarden.db.schema.Migrations;
import dev.pagewarden.db.testing.Ev;
import dev.pagewarden.db.testing.TestPostgres;
import dev.pagewarden.db.testing.TestShipping;
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
import org.junit.jupiter.api.io.TempDir;
import org.springframework.jdbc.core.simple.JdbcClient;
import org.springframework.jdbc.datasource.DataSourceTransactionManager;
import org.springframework.transaction.support.TransactionTemplate;

import javax.sql.DataSource;
import java.nio.file.Path;
import java.sql.Timestamp;
import java.time.Duration;
import java.time.Instant;
import java.time.temporal.ChronoUnit;
import java.util.ArrayList;
import java.util.List;

import static dev.pagewarden.incident.disclosure.EvidenceRetentionTest.NODE;
import static dev.pagewarden.incident.disclosure.EvidenceRetentionTest.micros;
import static dev.pagewarden.incident.disclosure.EvidenceRetentionTest.platform;
import static dev.pagewarden.incident.disclosure.EvidenceRetentionTest.serve;
import static org.assertj.core.api.Assertions.assertThat;

/**
 * When an exposure happened is the first and last read of another tenant's data in the lineage: not the detector's
 * event (which came after the first read, and before the last), nor the searched window (which reaches back five
 * minutes before detection and on to the draft). The incident says it, and so do the draft and the notices.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class ExposureWindowTest {
    private TestPostgres pg;
    private DataSource ds;
    private JdbcClient jdbc;
    @TempDir
    Path tmp;

    @BeforeAll
    void startDatabase() throws Exception {
        pg = TestPostgres.start("exposure-window");
        ds = pg.dataSource();
        Migrations.migrate(ds);
        jdbc = JdbcClient.create(ds);
        jdbc.sql("INSERT INTO tenants VALUES ('globex', 'Globex'), ('initech', 'Initech'), ('acme', 'Acme')").update();
    }

    @AfterAll
    void stopDatabase() throws Exception {
        pg.close();
    }

    @Test
    void theIncidentAndItsDisclosureCarryTheFirstAndLastExposedRead() throws Exception {
        Instant start = Instant.now().truncatedTo(ChronoUnit.MICROS).minusSeconds(120);
        Instant detected = start.plusSeconds(1);
        // three foreign reads after the detector's event, seconds apart: initech (302, 304) and acme (306) each get a
        // page globex filled and read fifteen of its slots
        Ev ev = new Ev(NODE, 81, micros(start));
        List<LineageEvent> events = new ArrayList<>();
        List<Long> reads = new ArrayList<>();
        long[][] pairs = {{301, 302, 9}, {303, 304, 10}, {305, 306, 11}};
        for (long[] p : pairs) {
            ev.tick(2_000_000 + 1_000_000 * p[2]);
            serve(ev, events, p[0], "globex", (int) p[2], 100 * p[2], 16);
            reads.add(serve(ev, events, p[1], p[1] == 306 ? "acme" : "initech", (int) p[2], 100 * p[2] + 1, 1));
        }
        TestShipping.ship(ds, tmp.resolve("ship"), new PartitionManager(2, 30), events);
        for (long id = 301; id <= 306; id++) {
            jdbc.sql("INSERT INTO requests (id, tenant_id, model, prompt_tokens, generated_tokens, status, received_at) "
                    + "VALUES (:id, :t, 'glm', 16, 1, 'FINISHED', :at)").param("id", id)
                    .param("t", id % 2 == 1 ? "globex" : id == 306 ? "acme" : "initech").param("at", Timestamp.from(start))
                    .update();
        }
        List<Instant> readTimes = reads.stream().map(r -> events.stream().filter(e -> e.id() == r).findFirst().orElseThrow())
                .map(e -> Instant.EPOCH.plus(e.timeMicros(), ChronoUnit.MICROS)).toList();
        Instant first = readTimes.getFirst(), last = readTimes.getLast();
        assertThat(first).isAfter(detected);
        assertThat(Duration.between(first, last)).isGreaterThan(Duration.ofSeconds(7));

        ManualClock clock = new ManualClock(start.plusSeconds(60));
        TransactionTemplate tx = new TransactionTemplate(new DataSourceTransactionManager(ds));
        AdminAuditLog audit = TestAuditLogs.over(jdbc);
        IncidentService incidents = TestIncidents.over(jdbc, platform(), audit, TestIncidents.PROPERTIES, new LineageQueries(ds),
                tx, clock);
        FrozenBlastRadiusService frozen = TestFrozenBlastRadii.over(ds, incidents, platform(), clock, ReceiptKeys.generate("pw"));
        DisclosureService disclosures = new DisclosureService(jdbc, incidents, platform(), audit,
                new WebhookService(jdbc, TestIncidents.PROPERTIES, null, null, null, clock),
                new DisclosureReviews(jdbc, audit, tx, clock, false, Duration.ZERO), tx, clock, frozen);

        long id = incidents.file(new IncidentService.Signal("checksum-mismatch", "CRITICAL", NODE, "decode-0", 302, "initech",
                List.of(9), detected, "detected"));
        Incident incident = incidents.get(id);
        assertThat(List.of(incident.firstEvent(), incident.lastEvent())).containsOnly(detected);
        assertThat(incidents.blastRadius(incident).affectedResponses()).isEqualTo(3);
        assertThat(incidents.exposureWindow(incident)).contains(new Incident.ExposureWindow(first, last));

        Disclosure draft = disclosures.draft(id, "alice");
        String body = draft.body();
        assertThat(body).contains("Between " + first + " and " + last + " (UTC)");
        assertThat(body).doesNotContain(detected.minus(TestIncidents.PROPERTIES.incidentLookback()).toString())
                .doesNotContain(clock.instant().toString());

        // the notices state the same window
        long version = disclosures.versions(id).getFirst().id();
        disclosures.edit(version, draft.title(), body.replaceAll("_Describe[^_\n]*_", "Filled in."), "alice");
        disclosures.submitForReview(version, "bob");
        disclosures.publish(version, "bob");
        assertThat(disclosures.notices("acme")).singleElement()
                .satisfies(n -> assertThat(n.body()).contains("Between " + first + " and " + last + " (UTC)"));
    }

    @Test
    void withoutAnExposedReadTheWindowIsEmptyAndTheDraftNamesTheSearchedWindow() {
        Instant at = Instant.now().truncatedTo(ChronoUnit.MICROS).minus(Duration.ofDays(2));
        ManualClock clock = new ManualClock(at.plusSeconds(60));
        TransactionTemplate tx = new TransactionTemplate(new DataSourceTransactionManager(ds));
        AdminAuditLog audit = TestAuditLogs.over(jdbc);
        IncidentService incidents = TestIncidents.over(jdbc, platform(), audit, TestIncidents.PROPERTIES, new LineageQueries(ds),
                tx, clock);
        long id = incidents.file(new IncidentService.Signal("checksum-mismatch", "WARNING", "engine-quiet", "decode-1", 0, null,
                List.of(), at, "nothing read"));
        Incident incident = incidents.get(id);
        assertThat(incidents.exposureWindow(incident)).isEmpty();
        DisclosureService disclosures = new DisclosureService(jdbc, incidents, platform(), audit,
                new WebhookService(jdbc, TestIncidents.PROPERTIES, null, null, null, clock),
                new DisclosureReviews(jdbc, audit, tx, clock, false, Duration.ZERO), tx, clock,
                TestFrozenBlastRadii.over(ds, incidents, platform(), clock, ReceiptKeys.generate("pw")));
        Instant[] searched = incidents.window(incident);
        assertThat(disclosures.prefill(incident)).contains("Between " + searched[0] + " and " + searched[1] + " (UTC)");
    }
}
