package dev.pagewarden.db.audit;

import dev.pagewarden.core.kv.KvPool;
import dev.pagewarden.core.lineage.LineageEvent;
import dev.pagewarden.core.receipt.PageEpochRead;
import dev.pagewarden.core.receipt.Receipt;
import dev.pagewarden.core.receipt.ReceiptBody;
import dev.pagewarden.core.receipt.ReceiptIssuer;
import dev.pagewarden.core.receipt.ReceiptKeys;
import dev.pagewarden.core.receipt.ServingIdentity;
import dev.pagewarden.db.audit.ReceiptAudit.Status;
import dev.pagewarden.db.audit.ReceiptAudit.Verdict;
import dev.pagewarden.db.lineage.PartitionManager;
import dev.pagewarden.db.schema.Migrations;
import dev.pagewarden.db.testing.Ev;
import dev.pagewarden.db.testing.TestPostgres;
import dev.pagewarden.db.testing.TestShipping;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.api.io.TempDir;

import javax.sql.DataSource;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Instant;
import java.time.temporal.ChronoUnit;
import java.util.ArrayList;
import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Two platform replicas (nodes) on one PostgreSQL, each with pools named prefill-0 / decode-0 and the same
 * page numbers, started in the same microsecond (so with the same page epochs), writing at the same time;
 * and a crash-restart of one of them. Pages are told apart by their node: no replica's write is taken for
 * another's, a real exposure on one replica is found and attributed to it alone, and receipts verify on both.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class MultiReplicaLineageTest {
    private static final String A = "replica-a", B = "replica-b";
    private TestPostgres pg;
    private DataSource ds;
    @TempDir
    Path tmp;

    @BeforeAll
    void startDatabase() throws Exception {
        pg = TestPostgres.start("replicas");
        ds = pg.dataSource();
        Migrations.migrate(ds);
    }

    @AfterAll
    void stopDatabase() throws Exception {
        pg.close();
    }

    /** One request's life on one replica: pages filled by transfer from prefill, read, read to the end, released. */
    private record Served(Ev ev, long request, String tenant, List<Integer> pages, long epoch, List<LineageEvent> binds) {
        Served {
            binds = new ArrayList<>();
        }

        void fill(List<LineageEvent> out, int from, int to) {
            for (int p : pages) {
                out.add(ev.allocate("prefill-0", 50 + p, epoch, request, tenant));
                out.add(ev.write("prefill-0", 50 + p, epoch, request, tenant, from, to));
                out.add(ev.allocate("decode-0", p, epoch, request, tenant));
                out.add(ev.transferOut("prefill-0", 50 + p, epoch, request, tenant, "decode-0", p, epoch, 1, (int) request + p));
                out.add(ev.transferIn("decode-0", p, epoch, request, tenant, from, to, "prefill-0", 50 + p, epoch, 1,
                        (int) request + p));
                out.add(ev.release("prefill-0", 50 + p, epoch, request, tenant));
            }
        }

        void read(List<LineageEvent> out) {
            for (int p : pages) {
                LineageEvent b = ev.read("decode-0", p, epoch, request, tenant, 0, 16);
                binds.add(b);
                out.add(b);
            }
        }

        void finish(List<LineageEvent> out) {
            for (int p : pages) {
                out.add(ev.readFinal("decode-0", p, epoch, request, tenant, 16));
                out.add(ev.release("decode-0", p, epoch, request, tenant));
            }
        }

        /** The receipt the engine of {@code node} signs for this request: every page epoch read, 16 slots each. */
        Receipt receipt(ReceiptKeys keys, String node) {
            List<PageEpochRead> reads = binds.stream().map(b -> new PageEpochRead(b.worker(), b.page(), b.epoch(), 16,
                    request, b.id())).toList();
            return new ReceiptIssuer("glm", keys).sign(ReceiptBody.v2(request, tenant, "glm",
                    new ServingIdentity(node, "r-" + node), reads, new byte[32]));
        }
    }

    @Test
    void replicasSharingPageNumbersAndEpochsAreToldApartAndARealExposureIsFoundOnItsReplicaOnly() throws Exception {
        exec("INSERT INTO tenants VALUES ('acme', 'Acme'), ('globex', 'Globex'), ('initech', 'Initech') ON CONFLICT DO NOTHING");
        ReceiptKeys keys = ReceiptKeys.generate("pw");
        ReceiptAudit audit = new ReceiptAudit(ds, keys::publicKeys);
        LineageQueries q = new LineageQueries(ds);
        long t0 = ChronoUnit.MICROS.between(Instant.EPOCH, Instant.now());
        // both replicas started in the same microsecond: their pools hand out the same epochs
        long epoch = KvPool.bootEpochBase(Instant.EPOCH.plus(t0, ChronoUnit.MICROS)) + 1;
        Ev a = new Ev(A, 21, t0), b = new Ev(B, 22, t0);
        List<LineageEvent> events = new ArrayList<>();

        // 1. request 101 (acme) on A and 201 (globex) on B use decode-0 pages 0..3 in the same epoch; B writes them
        //    after A and before A reads them - one database, so on (worker, page, epoch) alone A read globex's data
        Served a101 = new Served(a, 101, "acme", List.of(0, 1, 2, 3), epoch, null);
        Served b201 = new Served(b, 201, "globex", List.of(0, 1, 2, 3), epoch, null);
        a101.fill(events, 0, 16);
        sync(a, b);
        b201.fill(events, 0, 16);
        sync(a, b);
        a101.read(events);
        b201.read(events);
        a101.finish(events);
        b201.finish(events);

        // 2. a real exposure on B: 202 (globex) fills page 9 and lets it go; 203 (initech) gets page 9 in the next
        //    epoch, is sent one slot only and reads sixteen: fifteen hold globex's data. Meanwhile A's request 104
        //    (acme) writes its own page 9 (same number, same epoch), after 202's write and before 203's read.
        Served b202 = new Served(b, 202, "globex", List.of(9), epoch, null);
        sync(a, b);
        b202.fill(events, 0, 16);
        b202.read(events);
        b202.finish(events);
        long window = b.tick(1_000);
        sync(a, b);
        Served a104 = new Served(a, 104, "acme", List.of(9), epoch + 1, null);
        a104.fill(events, 0, 16);
        Served b203 = new Served(b, 203, "initech", List.of(9), epoch + 1, null);
        sync(a, b);
        b203.fill(events, 0, 1);
        b203.read(events);
        a104.read(events);
        b203.finish(events);
        a104.finish(events);
        long windowEnd = Math.max(a.tick(1), b.tick(1));
        ship(events);
        exec("INSERT INTO requests (id, tenant_id, model, prompt_tokens, generated_tokens, status, received_at) VALUES "
                + "(101, 'acme', 'glm', 64, 1, 'FINISHED', now()), (201, 'globex', 'glm', 64, 1, 'FINISHED', now()), "
                + "(202, 'globex', 'glm', 16, 1, 'FINISHED', now()), (203, 'initech', 'glm', 1, 1, 'FINISHED', now()), "
                + "(104, 'acme', 'glm', 16, 1, 'FINISHED', now())");

        // the exposure finder: only 203's read on B, of 202's data - not A's 104, whose write to "page 9" came later
        List<Exposure> found = q.exposures(instant(t0), instant(windowEnd));
        assertThat(found).singleElement().satisfies(e -> {
            assertThat(List.of(e.node(), e.worker(), e.page(), e.readEpoch())).isEqualTo(List.of(B, "decode-0", 9, epoch + 1));
            assertThat(List.of(e.readerRequest(), e.readerTenant(), e.exposingRequest(), e.exposedTenant()))
                    .isEqualTo(List.of(203L, "initech", 202L, "globex"));
            assertThat(e.writerEpoch()).isEqualTo(epoch);
            assertThat(e.slots()).isEqualTo(15);
        });
        assertThat(q.exposures(instant(t0), instant(window))).isEmpty();

        // last writers: each replica's reads were written by its own request
        for (long r : new long[] {101, 201, 202, 104}) {
            RequestLineage lineage = q.requestLineage(r);
            assertThat(lineage.isolated()).as("request %d", r).isTrue();
            assertThat(lineage.reads()).allSatisfy(p -> {
                assertThat(p.node()).isEqualTo(r / 100 == 2 ? B : A);
                // one transfer into each page epoch read, from its own replica's prefill pool, checksums agreeing
                assertThat(p.transfers()).singleElement().satisfies(h -> {
                    assertThat(h.node()).isEqualTo(p.node());
                    assertThat(h.writerRequest()).isEqualTo(r);
                    assertThat(h.checksumsAgree()).isTrue();
                });
            });
        }
        RequestLineage r203 = q.requestLineage(203);
        assertThat(r203.reads()).singleElement().extracting(PageRead::writers).satisfies(ws -> assertThat(ws)
                .extracting(SlotWriter::slotFrom, SlotWriter::slotTo, SlotWriter::writerRequest, SlotWriter::writerTenant)
                .containsExactly(org.assertj.core.api.Assertions.tuple(0, 1, 203L, "initech"),
                        org.assertj.core.api.Assertions.tuple(1, 16, 202L, "globex")));

        // blast radius: one affected response, on B; none on A
        BlastRadius all = q.blastRadius(instant(t0), instant(windowEnd), null, null);
        assertThat(all.affectedResponses()).isEqualTo(1);
        assertThat(all.deliveredResponses()).isEqualTo(1);
        assertThat(all.readerTenants()).containsExactly("initech");
        assertThat(all.exposedTenants()).containsExactly("globex");
        assertThat(all.responses()).singleElement().satisfies(r -> {
            assertThat(r.readerRequest()).isEqualTo(203);
            assertThat(r.exposingRequests()).containsExactly(202L);
            assertThat(r.pages()).isEqualTo(1);
        });
        assertThat(q.blastRadius(instant(t0), instant(windowEnd), null, A, null).affectedResponses()).isZero();
        assertThat(q.blastRadius(instant(t0), instant(windowEnd), null, B, "decode-0").affectedResponses()).isEqualTo(1);

        // receipts: each verifies against its own replica's lineage; 203's names its foreign writer on B
        for (Served s : List.of(a101, a104)) {
            Verdict v = audit.verify(s.receipt(keys, A));
            assertThat(v.status()).as("%d: %s", s.request(), v).isEqualTo(Status.OK);
        }
        for (Served s : List.of(b201, b202)) {
            Verdict v = audit.verify(s.receipt(keys, B));
            assertThat(v.status()).as("%d: %s", s.request(), v).isEqualTo(Status.OK);
        }
        Verdict v203 = audit.verify(b203.receipt(keys, B));
        assertThat(v203.status()).isEqualTo(Status.VIOLATION);
        assertThat(v203.foreignWrites()).singleElement().satisfies(f -> {
            assertThat(List.of(f.node(), f.worker(), f.page(), f.slotFrom(), f.slotTo(), f.writerRequest(), f.writerTenant()))
                    .isEqualTo(List.of(B, "decode-0", 9, 1, 16, 202L, "globex"));
        });
        // a receipt naming the other replica does not match the lineage of these reads
        Verdict wrongNode = audit.verify(a101.receipt(keys, B));
        assertThat(wrongNode.status()).as("%s", wrongNode).isEqualTo(Status.MISMATCH);
    }

    /**
     * A replica crashes while request 302 still reads page 7, and restarts 20 ms later with the same node id:
     * its pools' epochs start above every epoch of the first start, so the new owner's writes are not taken
     * for writes into 302's page epoch (a false exposure of acme to initech), nor its transfer for 302's.
     */
    @Test
    void aRestartedReplicaNeverReusesAPageEpoch() throws Exception {
        exec("INSERT INTO tenants VALUES ('acme', 'Acme'), ('initech', 'Initech') ON CONFLICT DO NOTHING");
        ReceiptKeys keys = ReceiptKeys.generate("pw");
        ReceiptAudit audit = new ReceiptAudit(ds, keys::publicKeys);
        LineageQueries q = new LineageQueries(ds);
        long t0 = ChronoUnit.MICROS.between(Instant.EPOCH, Instant.now()) + 60_000_000;
        Ev first = new Ev(A, 31, t0);
        long firstEpoch = KvPool.bootEpochBase(Instant.EPOCH.plus(t0, ChronoUnit.MICROS)) + 1;
        List<LineageEvent> events = new ArrayList<>();
        Served crashed = new Served(first, 302, "initech", List.of(7), firstEpoch, null);
        crashed.fill(events, 0, 16);
        crashed.read(events); // then the process dies: no READ_FINAL, no RELEASE
        long restart = first.tick(20_000);
        Ev second = new Ev(A, 32, restart);
        long secondEpoch = KvPool.bootEpochBase(Instant.EPOCH.plus(restart, ChronoUnit.MICROS)) + 1;
        assertThat(secondEpoch).isGreaterThan(firstEpoch);
        Served after = new Served(second, 303, "acme", List.of(7), secondEpoch, null);
        after.fill(events, 0, 16);
        after.read(events);
        after.finish(events);
        ship(events);

        assertThat(q.exposures(instant(t0), instant(second.tick(1)))).isEmpty();
        RequestLineage lineage = q.requestLineage(303);
        assertThat(lineage.isolated()).isTrue();
        assertThat(lineage.reads()).singleElement().satisfies(p -> assertThat(p.transfers()).singleElement()
                .satisfies(h -> assertThat(List.of(h.writerRequest(), h.fromEpoch())).isEqualTo(List.of(303L, secondEpoch))));
        assertThat(q.requestLineage(302).reads()).singleElement()
                .satisfies(p -> assertThat(p.transfers()).singleElement().extracting(TransferHop::writerRequest).isEqualTo(302L));
        Verdict v = audit.verify(after.receipt(keys, A));
        assertThat(v.status()).as("%s", v).isEqualTo(Status.OK);
    }

    /** Rows from before migration V5 name no node: they get 'unknown', and new rows must name theirs. */
    @Test
    void rowsFromBeforeNodesWereRecordedGetTheStatedDefault() throws Exception {
        try (TestPostgres old = TestPostgres.start("pre-v5")) {
            DataSource ods = old.dataSource();
            org.flywaydb.core.Flyway.configure().dataSource(ods).locations("classpath:db/migration").target("4.5").load()
                    .migrate();
            try (Connection c = ods.getConnection(); Statement st = c.createStatement()) {
                st.execute("CREATE TABLE kv_lineage_p20261130 PARTITION OF kv_lineage FOR VALUES FROM ('2026-11-30') TO ('2026-12-01')");
                st.execute("INSERT INTO kv_lineage VALUES (1, '2026-11-30 12:00+00', 1, 'decode-0', 0, 1, 1, 'a', 0, 1, NULL, "
                        + "-1, -1, 0, 0, true)");
                st.execute("INSERT INTO safety_events (event_time, type, severity, worker, request_id, pages, epochs, details) "
                        + "VALUES (now(), 'CHECKSUM_MISMATCH', 'CRITICAL', 'decode-0', 1, '{}', '{}', 'x')");
                st.execute("INSERT INTO incidents (title, worker, status, severity, opened_at, first_event, last_event) "
                        + "VALUES ('t', 'decode-0', 'INVESTIGATING', 'CRITICAL', now(), now(), now())");
            }
            // V5 alone (later migrations add tables of their own and do not touch these rows)
            assertThat(org.flywaydb.core.Flyway.configure().dataSource(ods).locations("classpath:db/migration").target("5")
                    .load().migrate().migrationsExecuted).isEqualTo(1);
            try (Connection c = ods.getConnection(); Statement st = c.createStatement()) {
                for (String table : List.of("kv_lineage", "safety_events", "incidents")) {
                    try (var rs = st.executeQuery("SELECT array_agg(DISTINCT node) FROM " + table)) {
                        rs.next();
                        assertThat((Object[]) rs.getArray(1).getArray()).as(table).containsExactly("unknown");
                    }
                }
                assertThat(org.assertj.core.api.Assertions.catchThrowable(() -> st.execute(
                        "INSERT INTO kv_lineage (event_id, event_time, kind, worker, page, epoch, request_id, slot_from, "
                                + "slot_to, peer_page, peer_epoch, generation, checksum, ok) VALUES (2, '2026-11-30 13:00+00', "
                                + "1, 'decode-0', 0, 1, 1, 0, 1, -1, -1, 0, 0, true)")))
                        .as("a row without its node").hasMessageContaining("node");
            }
        }
    }

    /** Brings both replicas' clocks to the later of the two: what either writes next comes after what both wrote. */
    private static void sync(Ev x, Ev y) {
        long t = Math.max(x.now(), y.now());
        x.tick(t - x.now());
        y.tick(t - y.now());
    }

    private void ship(List<LineageEvent> events) throws Exception {
        TestShipping.ship(ds, tmp.resolve("ship-" + System.nanoTime()), new PartitionManager(2, 30), events);
    }

    private static Instant instant(long micros) {
        return Instant.EPOCH.plus(micros, ChronoUnit.MICROS);
    }

    private void exec(String sql) throws SQLException {
        try (Connection c = ds.getConnection(); Statement s = c.createStatement()) {
            s.execute(sql);
        }
    }
}
