package dev.pagewarden.incident.disclosure;

import dev.pagewarden.core.lineage.LineageEvent;
import dev.pagewarden.core.receipt.ReceiptKeys;
import dev.pagewarden.core.testing.ManualClock;
import dev.pagewarden.db.audit.LineageQueries;
import dev.pagewarden.db.schema.OldWriters;
import dev.pagewarden.db.schema.RollingUpgrade;
import dev.pagewarden.db.testing.Ev;
import dev.pagewarden.db.testing.TestPostgres;
import dev.pagewarden.incident.audit.AdminAuditLog;
import dev.pagewarden.incident.audit.TestAuditLogs;
import dev.pagewarden.incident.incident.FrozenBlastRadius;
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
import java.time.Duration;
import java.time.Instant;
import java.time.temporal.ChronoUnit;
import java.util.ArrayList;
import java.util.List;

import static dev.pagewarden.incident.disclosure.EvidenceRetentionTest.NODE;
import static dev.pagewarden.incident.incident.TestIncidents.PROPERTIES;
import static dev.pagewarden.incident.disclosure.EvidenceRetentionTest.micros;
import static dev.pagewarden.incident.disclosure.EvidenceRetentionTest.platform;
import static dev.pagewarden.incident.disclosure.EvidenceRetentionTest.serve;
import static org.assertj.core.api.Assertions.assertThat;

/**
 * An incident filed and disclosed by the previous release (its own statements, before a rolling upgrade), then
 * read and continued by the new admin UI on the migrated schema: the incident and its blast radius, the notices
 * of a version published before frozen blast radii existed (answered from the lineage), a correction published
 * by the new code (frozen), and a sweep that does not file the old release's exposure a second time.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class PreviousReleaseIncidentsTest {
    private TestPostgres pg;
    private DataSource ds;

    @BeforeAll
    void start() throws Exception {
        pg = TestPostgres.start("old-incidents");
        ds = RollingUpgrade.newDatabase(pg, "rolling_upgrade");
        RollingUpgrade.flyway(ds, RollingUpgrade.PREVIOUS_RELEASE_LAST_MIGRATION, "classpath:db/migration").migrate();
    }

    @AfterAll
    void stop() throws Exception {
        pg.close();
    }

    @Test
    void theNewAdminUiContinuesAnIncidentTheOldReleaseFiledAndDisclosed() throws Exception {
        OldWriters old = OldWriters.load();
        JdbcClient jdbc = JdbcClient.create(ds);
        jdbc.sql("INSERT INTO tenants VALUES ('globex', 'Globex'), ('initech', 'Initech'), ('acme', 'Acme')").update();
        Instant start = Instant.now().truncatedTo(ChronoUnit.MICROS).minusSeconds(120);
        // 302 (initech) gets page 9 after 301 (globex), writes one slot and reads sixteen: fifteen of globex's
        Ev ev = new Ev(NODE, 61, micros(start));
        List<LineageEvent> events = new ArrayList<>();
        serve(ev, events, 301, "globex", 9, 100, 16);
        serve(ev, events, 302, "initech", 9, 101, 1);
        serve(ev, events, 303, "globex", 10, 200, 16);
        Instant read = Instant.EPOCH.plus(ev.now(), ChronoUnit.MICROS), published = read.plusSeconds(30);
        long incident, v1;
        try (var c = ds.getConnection()) {
            assertThat(old.shipLineage(c, events)).isEqualTo(events.size());
            for (long[] r : new long[][] {{301, 0}, {302, 1}, {303, 0}}) {
                old.run(c, "requests.insert", "admitted", start, "error", null, "finish", "stop", "finished", read, "first", read,
                        "generated", 1, "model", "glm", "prompt", 16, "public", "p" + r[0], "receipt", null, "hash", null,
                        "received", start, "status", "FINISHED", "stream", false, "tenant", r[1] == 1 ? "initech" : "globex",
                        "id", r[0]);
            }
            // the old sweep claimed and filed the exposure, and its replica stopped before it moved the shared position
            old.run(c, "lineage_sweep_position.advance", "to", start.minusSeconds(1), "node", NODE);
            incident = (Long) old.run(c, "incidents.open", "title", "lineage-exposure on " + NODE + "/decode-0 (glm)",
                    "model", "glm", "node", NODE, "worker", "decode-0", "sev", "CRITICAL", "now", read, "t", read);
            old.run(c, "incident_entries.insert", "i", incident, "at", read, "k", "DETECTOR", "a", "detector:lineage-exposure",
                    "t", "1 request(s) read KV data written by another tenant: readers [302]");
            assertThat(old.run(c, "incident_exposures.claim", "node", NODE, "worker", "decode-0", "page", 9, "epoch", 101L,
                    "reader", 302L, "exposing", 301L, "now", read, "by", NODE)).isEqualTo(1);
            old.run(c, "incident_exposures.file", "id", incident, "node", NODE, "worker", "decode-0", "page", 9, "epoch", 101L,
                    "reader", 302L, "exposing", 301L);
            v1 = (Long) old.run(c, "disclosures.draft", "i", incident, "v", 1, "t", "Cross-tenant KV read", "b", "Disclosed.",
                    "now", published, "by", "alice");
            old.run(c, "disclosures.review", "by", "bob", "id", v1);
            old.run(c, "disclosures.publish", "now", published, "by", "bob", "id", v1);
            old.run(c, "tenant_notices.insert", "d", v1, "t", "globex", "now", published, "rel", "exposed");
            old.run(c, "tenant_notices.insert", "d", v1, "t", "initech", "now", published, "rel", "received");
            old.run(c, "admin_audit.insert", "actor", "bob", "action", "disclosure.publish", "target", "disclosure " + v1,
                    "details", "incident " + incident + " v1, 2 tenant notice(s)");
        }

        assertThat(RollingUpgrade.flyway(ds, "latest", "classpath:db/migration").migrate().success).isTrue();

        ManualClock clock = new ManualClock(published.plusSeconds(60));
        TransactionTemplate tx = new TransactionTemplate(new DataSourceTransactionManager(ds));
        AdminAuditLog audit = TestAuditLogs.over(jdbc);
        IncidentService incidents = TestIncidents.over(jdbc, platform(), audit, PROPERTIES, new LineageQueries(ds), tx, clock);
        FrozenBlastRadiusService frozen = TestFrozenBlastRadii.over(ds, incidents, platform(), clock, ReceiptKeys.generate("pw"));
        DisclosureService disclosures = new DisclosureService(jdbc, incidents, platform(), audit,
                new WebhookService(jdbc, PROPERTIES, null, null, null, clock),
                new DisclosureReviews(jdbc, audit, tx, clock, false, Duration.ZERO), tx, clock, frozen);

        Incident i = incidents.get(incident);
        assertThat(List.of(i.node(), i.worker(), i.status(), i.events())).isEqualTo(List.of(NODE, "decode-0", Incident.Status.INVESTIGATING, 1));
        assertThat(incidents.list()).extracting(Incident::id).containsExactly(incident);
        assertThat(incidents.blastRadius(i).responses()).singleElement().satisfies(r -> {
            assertThat(r.readerRequest()).isEqualTo(302);
            assertThat(r.exposingRequests()).containsExactly(301L);
        });

        // version 1 was published without a frozen set: its notices come from the lineage
        assertThat(frozen.get(v1)).isEmpty();
        assertThat(frozen.ofIncident(incident)).isEmpty();
        frozen.recheckIncident(incident);
        assertThat(disclosures.notices("initech")).singleElement().satisfies(n -> {
            assertThat(n.requests()).containsExactly(302L);
            assertThat(n.exposedRequests()).isEmpty();
        });
        assertThat(disclosures.notices("globex")).singleElement().satisfies(n -> assertThat(n.exposedRequests()).containsExactly(301L));
        assertThat(disclosures.notices("acme")).isEmpty();

        // the sweep of a new replica, from before the old one's stale position, does not file the exposure again
        assertThat(TestIncidents.sweep(new LineageQueries(ds), incidents, jdbc, platform(), clock, PROPERTIES, frozen).sweep()).isEmpty();
        assertThat(jdbc.sql("SELECT count(*) FROM incident_exposures").query(Long.class).single()).isEqualTo(1);

        // a correction published by the new code is frozen and lists the same requests
        long v2 = disclosures.draft(incident, "alice").id();
        assertThat(disclosures.get(v2).version()).isEqualTo(2);
        disclosures.submitForReview(v2, "bob");
        disclosures.publish(v2, "bob");
        assertThat(frozen.get(v2)).hasValueSatisfying(f -> {
            assertThat(f.readers()).extracting(FrozenBlastRadius.Row::request).containsExactly(302L);
            assertThat(f.exposed()).extracting(FrozenBlastRadius.Row::request).containsExactly(301L);
        });
        assertThat(disclosures.notices("initech")).extracting(DisclosureService.Notice::version, DisclosureService.Notice::requests)
                .containsExactly(org.assertj.core.api.Assertions.tuple(2, List.of(302L)), org.assertj.core.api.Assertions.tuple(1, List.of(302L)));
    }
}
