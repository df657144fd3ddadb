package dev.pagewarden.incident.disclosure;

import dev.pagewarden.core.lineage.LineageEvent;
import dev.pagewarden.core.receipt.PageEpochRead;
import dev.pagewarden.core.receipt.Receipt;
import dev.pagewarden.core.receipt.ReceiptBody;
import dev.pagewarden.core.receipt.ReceiptIssuer;
import dev.pagewarden.core.receipt.ReceiptKeys;
import dev.pagewarden.core.receipt.ServingIdentity;
import dev.pagewarden.core.testing.ManualClock;
import dev.pagewarden.db.audit.LineageQueries;
import dev.pagewarden.db.audit.ReceiptAudit;
import dev.pagewarden.db.lineage.PartitionManager;
import dev.pagewarden.db.schema.Migrations;
import dev.pagewarden.db.testing.Ev;
import dev.pagewarden.db.testing.TestPostgres;
import dev.pagewarden.db.testing.TestShipping;
import dev.pagewarden.incident.AdminProperties;
import dev.pagewarden.incident.PlatformPort;
import dev.pagewarden.incident.audit.AdminAuditLog;
import dev.pagewarden.incident.audit.TestAuditLogs;
import dev.pagewarden.incident.incident.FrozenBlastRadius;
import dev.pagewarden.incident.incident.FrozenBlastRadiusService;
import dev.pagewarden.incident.incident.Incident;
import dev.pagewarden.incident.incident.IncidentService;
import dev.pagewarden.incident.incident.TestFrozenBlastRadii;
import dev.pagewarden.incident.incident.TestIncidents;
import dev.pagewarden.incident.input.InvalidTextException;
import dev.pagewarden.incident.retention.LegalHold;
import dev.pagewarden.incident.retention.LegalHoldService;
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
import java.sql.Connection;
import java.time.Duration;
import java.time.Instant;
import java.time.LocalDate;
import java.time.ZoneOffset;
import java.time.temporal.ChronoUnit;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * Evidence past the lineage retention, on real PostgreSQL: partition maintenance with the clock aged past the
 * retention keeps what an open incident, a published disclosure or a legal hold still needs and drops the rest,
 * naming each drop in the admin audit; the published disclosure's blast radius is frozen and signed, so its
 * notices keep their request ids and receipts of its window keep a verdict; a recomputation that differs is
 * raised as a safety event and leaves the notices as they were.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class EvidenceRetentionTest {
    static final String NODE = "engine-b";
    private TestPostgres pg;
    private DataSource ds;
    private JdbcClient jdbc;
    @TempDir
    Path tmp;

    @BeforeAll
    void startDatabase() throws Exception {
        pg = TestPostgres.start("retention");
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
    void agedPastRetentionKeepsWhatEvidenceNeedsAndNoticesAndReceiptsStillAnswer() throws Exception {
        LocalDate today = PartitionManager.today();
        LocalDate openDay = today.minusDays(3), disclosedDay = today.minusDays(6), heldDay = today.minusDays(9),
                freeDay = today.minusDays(12);
        ManualClock clock = new ManualClock(noon(disclosedDay).plusSeconds(300));
        TransactionTemplate tx = new TransactionTemplate(new DataSourceTransactionManager(ds));
        AdminAuditLog audit = TestAuditLogs.over(jdbc);
        IncidentService incidents = TestIncidents.over(jdbc, platform(), audit, TestIncidents.PROPERTIES, new LineageQueries(ds), tx, clock);
        ReceiptKeys keys = ReceiptKeys.generate("pw");
        FrozenBlastRadiusService frozen = TestFrozenBlastRadii.over(ds, incidents, platform(), clock, keys);
        DisclosureService disclosures = new DisclosureService(jdbc, incidents, platform(), audit,
                new WebhookService(jdbc, TestIncidents.PROPERTIES, null, null, null, clock),
                new DisclosureReviews(jdbc, audit, tx, clock, false, Duration.ZERO), tx, clock, frozen);
        LegalHoldService holds = new LegalHoldService(ds, audit, tx, clock);
        ReceiptAudit receipts = new ReceiptAudit(ds, keys::publicKeys);

        // disclosed day, at noon on engine-b/decode-0: 301 (globex) fills page 9 and lets it go; 302 (initech) gets it
        // in the next epoch, writes one slot and reads sixteen - fifteen of globex's; 303 (globex) is served cleanly
        Ev ev = new Ev(NODE, 51, micros(noon(disclosedDay)));
        List<LineageEvent> events = new ArrayList<>();
        serve(ev, events, 301, "globex", 9, 100, 16);
        long foreignRead = serve(ev, events, 302, "initech", 9, 101, 1);
        long cleanRead = serve(ev, events, 303, "globex", 10, 200, 16);
        ship(events);
        requests(noon(disclosedDay), 301, "globex", 302, "initech", 303, "globex");
        Receipt foreignReceipt = receipt(keys, 302, "initech", 9, 101, foreignRead);
        Receipt cleanReceipt = receipt(keys, 303, "globex", 10, 200, cleanRead);

        // its incident is detected, resolved and disclosed that day
        long disclosed = incidents.file(new IncidentService.Signal("checksum-mismatch", "CRITICAL", NODE, "decode-0", 302, "initech",
                List.of(9), noon(disclosedDay).plusSeconds(1), "disclosed"));
        clock.set(noon(disclosedDay).plusSeconds(600));
        incidents.setStatus(disclosed, Incident.Status.RESOLVED, "alice");
        clock.set(noon(disclosedDay).plusSeconds(1200));
        Disclosure draft = disclosures.draft(disclosed, "alice");
        long version = draft.id();
        disclosures.edit(version, draft.title(), draft.body().replaceAll("_Describe[^_\n]*_", "Filled in."), "alice");
        disclosures.submitForReview(version, "bob");
        disclosures.publish(version, "bob");
        FrozenBlastRadius set = frozen.get(version).orElseThrow();
        assertThat(set.signatureOk()).isTrue();
        assertThat(set.readers()).extracting(FrozenBlastRadius.Row::request).containsExactly(302L);
        assertThat(set.readers().getFirst().counterparts()).containsExactly(301L);
        assertThat(set.exposed()).extracting(FrozenBlastRadius.Row::request).containsExactly(301L);

        // three days ago: 401 (globex) and 402 (acme) the same way, under an incident still open
        clock.set(noon(openDay).plusSeconds(300));
        Ev ev1 = new Ev(NODE, 52, micros(noon(openDay)));
        List<LineageEvent> more = new ArrayList<>();
        serve(ev1, more, 401, "globex", 11, 300, 16);
        serve(ev1, more, 402, "acme", 11, 301, 1);
        ship(more);
        requests(noon(openDay), 401, "globex", 402, "acme", 0, null);
        long open = incidents.file(new IncidentService.Signal("checksum-mismatch", "CRITICAL", NODE, "decode-0", 402, "acme",
                List.of(11), noon(openDay).plusSeconds(1), "open"));
        assertThat(open).isNotEqualTo(disclosed);

        // a legal hold on an otherwise unneeded day, and a day nothing holds
        PartitionManager partitions = new PartitionManager(2, 30, TestIncidents.PROPERTIES.incidentLookback());
        try (Connection c = ds.getConnection()) {
            partitions.ensure(c, freeDay, freeDay);
            partitions.ensure(c, heldDay, heldDay);
        }
        LegalHold hold = holds.add(noon(heldDay), noon(heldDay).plus(Duration.ofHours(2)), "subpoena 2026-17", "carol");

        // the clock aged 45 days: retention 30 makes every day so far past it
        LocalDate aged = today.plusDays(45);
        try (Connection c = ds.getConnection()) {
            assertThat(partitions.maintain(c, aged)).containsExactly(freeDay);
            assertThat(PartitionManager.existing(c)).contains(heldDay, disclosedDay, openDay, today).doesNotContain(freeDay);
        }
        assertThat(auditDetails("lineage.partition-dropped", freeDay)).singleElement().asString()
                .contains("past the retention of 30 days");
        assertThat(auditDetails("lineage.partition-held", heldDay)).singleElement().asString()
                .contains("legal hold " + hold.id() + " (subpoena 2026-17)");
        assertThat(auditDetails("lineage.partition-held", disclosedDay)).singleElement().asString()
                .contains("published disclosure " + version).doesNotContain("open incident");
        assertThat(auditDetails("lineage.partition-held", openDay)).singleElement().asString().contains("open incident " + open);
        long heldRows = auditCount("lineage.partition-held");
        try (Connection c = ds.getConnection()) {
            assertThat(partitions.maintain(c, aged)).isEmpty();
        }
        assertThat(auditCount("lineage.partition-held")).as("an unchanged hold is not written again").isEqualTo(heldRows);

        // the notices still list their requests; the receipts of the held window still verify against the lineage
        assertThat(disclosures.notices("initech")).singleElement().satisfies(n -> assertThat(n.requests()).containsExactly(302L));
        assertThat(disclosures.notices("globex")).singleElement().satisfies(n -> assertThat(n.exposedRequests()).containsExactly(301L));
        assertThat(receipts.verify(cleanReceipt).status()).isEqualTo(ReceiptAudit.Status.OK);
        ReceiptAudit.Verdict violation = receipts.verify(foreignReceipt);
        assertThat(violation.status()).isEqualTo(ReceiptAudit.Status.VIOLATION);
        assertThat(violation.foreignWriters()).containsExactly(301L);
        assertThat(frozen.recheck(version)).isEqualTo(FrozenBlastRadiusService.Recheck.SAME);

        // releasing the hold lets the next maintenance drop its day, and the audit names the drop
        holds.release(hold.id(), "carol");
        assertThatThrownBy(() -> holds.release(hold.id(), "carol")).hasMessageContaining("already released");
        try (Connection c = ds.getConnection()) {
            assertThat(partitions.maintain(c, aged)).containsExactly(heldDay);
        }
        assertThat(auditDetails("lineage.partition-dropped", heldDay)).hasSize(1);
        assertThat(jdbc.sql("SELECT action FROM admin_audit WHERE target = :t ORDER BY id").param("t", "legal hold " + hold.id())
                .query(String.class).list()).containsExactly("legal-hold.add", "legal-hold.release");

        // late lineage in the disclosed window: 304 (acme) read globex's data too. The sweep that finds it rechecks the
        // frozen set: it differs. One safety event (not one per look), shown with the frozen set; the notices keep it
        // (the same engine start as the reads above: attribution never crosses a restart)
        ev.tick(micros(noon(disclosedDay).plusSeconds(120)) - ev.now());
        List<LineageEvent> lateEvents = new ArrayList<>();
        serve(ev, lateEvents, 304, "acme", 9, 102, 1);
        ship(lateEvents);
        requests(noon(disclosedDay), 304, "acme", 0, null, 0, null);
        clock.set(noon(disclosedDay).plusSeconds(180));
        TestIncidents.sweep(new LineageQueries(ds), incidents, jdbc, platform(), clock, TestIncidents.PROPERTIES, frozen).sweep();
        assertThat(jdbc.sql("SELECT count(*) FROM frozen_blast_radius_drift").query(Long.class).single()).isEqualTo(1);
        assertThat(frozen.recheck(version)).isEqualTo(FrozenBlastRadiusService.Recheck.DIFFERS);
        assertThat(frozen.recheck(version)).isEqualTo(FrozenBlastRadiusService.Recheck.DIFFERS);
        assertThat(jdbc.sql("SELECT details FROM safety_events WHERE type = :t").param("t", FrozenBlastRadiusService.DRIFT_TYPE)
                .query(String.class).list()).singleElement().asString().contains("reader 304");
        assertThat(frozen.get(version).orElseThrow().drifts()).singleElement()
                .satisfies(d -> assertThat(d.details()).contains("added").contains("reader 304"));
        assertThat(disclosures.notices("initech")).singleElement().satisfies(n -> assertThat(n.requests()).containsExactly(302L));
        assertThat(disclosures.notices("acme")).isEmpty();

        // lineage dropped under the published disclosure (as a drop from before holds did): receipts answer from the
        // frozen set instead of "pending", and the recomputation stands down
        try (Connection c = ds.getConnection(); var s = c.createStatement()) {
            s.execute("DROP TABLE kv_lineage_p" + disclosedDay.toString().replace("-", ""));
        }
        ReceiptAudit.Verdict clean = receipts.verify(cleanReceipt);
        assertThat(clean.status()).as("%s", clean).isEqualTo(ReceiptAudit.Status.OK);
        assertThat(clean.detail()).contains("frozen with disclosure " + version);
        ReceiptAudit.Verdict foreign = receipts.verify(foreignReceipt);
        assertThat(foreign.status()).as("%s", foreign).isEqualTo(ReceiptAudit.Status.VIOLATION);
        assertThat(foreign.foreignWriters()).containsExactly(301L);
        assertThat(frozen.recheck(version)).isEqualTo(FrozenBlastRadiusService.Recheck.LINEAGE_GONE);
        assertThat(disclosures.notices("initech")).singleElement().satisfies(n -> assertThat(n.requests()).containsExactly(302L));
    }

    @Test
    void legalHoldsRefuseBadInputNamingTheField() {
        LegalHoldService holds = new LegalHoldService(ds, TestAuditLogs.over(jdbc),
                new TransactionTemplate(new DataSourceTransactionManager(ds)), new ManualClock(Instant.parse("2026-03-01T00:00:00Z")));
        Instant a = Instant.parse("2026-02-01T00:00:00Z"), b = Instant.parse("2026-02-02T00:00:00Z");
        assertThatThrownBy(() -> holds.add(b, a, "case", "carol")).isInstanceOfSatisfying(InvalidTextException.class,
                e -> assertThat(e.field()).isEqualTo("to")).hasMessageContaining("must be after from");
        assertThatThrownBy(() -> holds.add(a, b, " ", "carol")).isInstanceOfSatisfying(InvalidTextException.class,
                e -> assertThat(e.field()).isEqualTo("reason"));
        assertThatThrownBy(() -> holds.add(null, b, "case", "carol")).isInstanceOfSatisfying(InvalidTextException.class,
                e -> assertThat(e.field()).isEqualTo("from"));
        assertThatThrownBy(() -> LegalHoldService.parseTime("from", "yesterday")).isInstanceOfSatisfying(InvalidTextException.class,
                e -> assertThat(e.field()).isEqualTo("from")).hasMessageContaining("ISO-8601");
        assertThat(LegalHoldService.parseTime("to", "2026-02-02")).isEqualTo(b);
        assertThat(LegalHoldService.parseTime("to", "2026-02-02T01:00:00+01:00")).isEqualTo(b);
        assertThatThrownBy(() -> holds.release(987_654, "carol")).isInstanceOf(java.util.NoSuchElementException.class);
    }

    /** A request's life on one page: allocated, {@code written} slots written by it, 16 read; returns the read's event id. */
    static long serve(Ev ev, List<LineageEvent> out, long request, String tenant, int page, long epoch, int written) {
        out.add(ev.allocate("decode-0", page, epoch, request, tenant));
        ev.tick(1_000);
        out.add(ev.write("decode-0", page, epoch, request, tenant, 0, written));
        ev.tick(1_000);
        LineageEvent read = ev.read("decode-0", page, epoch, request, tenant, 0, 16);
        out.add(read);
        ev.tick(1_000);
        out.add(ev.readFinal("decode-0", page, epoch, request, tenant, 16));
        out.add(ev.release("decode-0", page, epoch, request, tenant));
        ev.tick(1_000);
        return read.id();
    }

    /** The receipt the engine would sign for a request that read 16 slots of one page epoch. */
    static Receipt receipt(ReceiptKeys keys, long request, String tenant, int page, long epoch, long readEvent) {
        ReceiptBody body = ReceiptBody.v2(request, tenant, "glm", new ServingIdentity(NODE, "r1"),
                List.of(new PageEpochRead("decode-0", page, epoch, 16, request, readEvent)), new byte[32]);
        return Receipt.fromCompact(new ReceiptIssuer("glm", keys).sign(body).toCompact());
    }

    /** Up to three (id, tenant) request rows of model glm received at {@code at}; an id of 0 is skipped. */
    private void requests(Instant at, long a, String ta, long b, String tb, long c, String tc) {
        long[] ids = {a, b, c};
        String[] tenants = {ta, tb, tc};
        for (int i = 0; i < 3; i++) {
            if (ids[i] != 0) {
                jdbc.sql("INSERT INTO requests (id, tenant_id, model, prompt_tokens, generated_tokens, status, received_at) "
                        + "VALUES (:id, :t, 'glm', 16, 1, 'FINISHED', :at)").param("id", ids[i]).param("t", tenants[i])
                        .param("at", java.sql.Timestamp.from(at)).update();
            }
        }
    }

    private List<String> auditDetails(String action, LocalDate day) {
        return jdbc.sql("SELECT details FROM admin_audit WHERE actor = 'retention' AND action = :a AND target = :t ORDER BY id")
                .param("a", action).param("t", "kv_lineage_p" + day.toString().replace("-", "")).query(String.class).list();
    }

    private long auditCount(String action) {
        return jdbc.sql("SELECT count(*) FROM admin_audit WHERE action = :a").param("a", action).query(Long.class).single();
    }

    static Instant noon(LocalDate day) {
        return day.atTime(12, 0).toInstant(ZoneOffset.UTC);
    }

    static long micros(Instant t) {
        return ChronoUnit.MICROS.between(Instant.EPOCH, t);
    }

    /** The platform side: serves model glm on {@value #NODE}, knows the three tenants. */
    static PlatformPort platform() {
        return (PlatformPort) Proxy.newProxyInstance(PlatformPort.class.getClassLoader(), new Class<?>[] {PlatformPort.class},
                (proxy, method, args) -> switch (method.getName()) {
                    case "servedModel" -> Optional.of("glm");
                    case "nodeId" -> NODE;
                    case "tenants" -> List.of("globex", "initech", "acme").stream()
                            .map(t -> new PlatformPort.Tenant(t, t, Instant.EPOCH, true, null, null, null, null)).toList();
                    case "toString" -> "platform " + NODE;
                    default -> throw new UnsupportedOperationException(method.getName());
                });
    }

    private void ship(List<LineageEvent> events) throws Exception {
        TestShipping.ship(ds, tmp.resolve("ship-" + System.nanoTime()), new PartitionManager(2, 30), events);
    }
}
