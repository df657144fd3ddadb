package dev.pagewarden.db.audit;

import dev.pagewarden.core.lineage.LineageEvent;
import dev.pagewarden.db.journal.Journal;
import dev.pagewarden.db.journal.JournalCorruptedException;
import dev.pagewarden.db.journal.KindCodes;
import dev.pagewarden.db.lineage.AuditHealth;
import dev.pagewarden.db.lineage.JournalingLineageSink;
import dev.pagewarden.db.lineage.LineageShipper;
import dev.pagewarden.db.lineage.PartitionManager;
import dev.pagewarden.db.schema.Migrations;
import dev.pagewarden.db.testing.TestPostgres;
import dev.pagewarden.db.testing.Ev;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.api.io.TempDir;

import javax.sql.DataSource;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.sql.Timestamp;
import java.time.Instant;
import java.time.LocalDate;
import java.time.temporal.ChronoUnit;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.tuple;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/** Schema, partitions, shipping and the audit queries on a real embedded PostgreSQL 17. */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class LineageDbTest {
    private TestPostgres pg;
    private DataSource ds;
    @TempDir
    Path tmp;

    @BeforeAll
    void startDatabase() throws Exception {
        pg = TestPostgres.start("lineage");
        ds = pg.dataSource();
        Migrations.migrate(ds);
    }

    @AfterAll
    void stopDatabase() throws Exception {
        pg.close();
    }

    @BeforeEach
    void empty() throws SQLException {
        exec("TRUNCATE kv_lineage, requests, api_keys, tenants, safety_events");
    }

    @Test
    void migrationCreatesCommentedPartitionedSchema() throws SQLException {
        assertThat(queryLong("SELECT count(*) FROM pg_partitioned_table WHERE partrelid = 'kv_lineage'::regclass")).isEqualTo(1);
        assertThat(queryLong("SELECT count(*) FROM information_schema.tables WHERE table_schema = 'public' AND table_name IN "
                + "('tenants', 'requests', 'kv_lineage', 'safety_events')")).isEqualTo(4);
        long columns = queryLong("SELECT count(*) FROM information_schema.columns WHERE table_schema = 'public' "
                + "AND table_name = 'kv_lineage'");
        assertThat(columns).isGreaterThanOrEqualTo(17);
        assertThat(queryLong("SELECT count(*) FROM pg_description d JOIN pg_class c ON c.oid = d.objoid "
                + "WHERE c.relname = 'kv_lineage' AND d.objsubid > 0")).isEqualTo(columns); // every column commented
        for (LineageEvent.Kind kind : LineageEvent.Kind.values()) { // every kind named, with the journal's code
            assertThat(queryLong("SELECT count(*) FROM lineage_kinds WHERE code = " + KindCodes.code(kind)
                    + " AND name = '" + kind.name() + "'")).as("%s", kind).isEqualTo(1);
        }
    }

    @Test
    void partitionsAreCreatedAheadAndDroppedPastRetention() throws SQLException {
        LocalDate today = LocalDate.of(2026, 9, 10);
        PartitionManager pm = new PartitionManager(3, 7);
        try (Connection c = ds.getConnection()) {
            pm.ensure(c, today.minusDays(12), today.minusDays(6)); // history, e.g. shipped after an outage
            exec("INSERT INTO kv_lineage VALUES (1, '2026-08-29 12:00+00', 1, 'decode-0', 0, 1, 1, 'a', 0, 1, NULL, -1, -1, 0, 0, true, 'node-a'),"
                    + " (2, '2026-09-04 12:00+00', 1, 'decode-0', 0, 1, 1, 'a', 0, 1, NULL, -1, -1, 0, 0, true, 'node-a')");
            List<LocalDate> dropped = pm.maintain(c, today);
            assertThat(dropped).containsExactly(LocalDate.of(2026, 8, 29), LocalDate.of(2026, 8, 30),
                    LocalDate.of(2026, 8, 31), LocalDate.of(2026, 9, 1), LocalDate.of(2026, 9, 2));
            List<LocalDate> left = PartitionManager.existing(c);
            assertThat(left.getFirst()).isEqualTo(LocalDate.of(2026, 9, 3));
            assertThat(left).contains(today, today.plusDays(3)).doesNotContain(today.plusDays(4));
            assertThat(queryLong("SELECT count(*) FROM kv_lineage")).isEqualTo(1); // the 4 Sep row survives
            pm.maintain(c, PartitionManager.today()); // leave the real days for the other tests
        }
    }

    @Test
    void shippingIsExactlyOnceAcrossReshipping() throws Exception {
        Ev ev = new Ev(11, nowMicros());
        List<LineageEvent> events = cleanWorkload(ev, 50);
        Path dir = tmp.resolve("j1");
        try (Journal j = Journal.open(new Journal.Config(dir, 64 * 1024, 1L << 30))) {
            j.append(events.subList(0, events.size() / 2));
            j.append(events.subList(0, events.size())); // an engine replaying after a crash: the first half twice
            LineageShipper s = shipper(j);
            assertThat(s.shipAvailable()).isEqualTo(events.size() / 2 + events.size());
            assertThat(s.insertedRows()).isEqualTo(events.size());
            s.close();
        }
        // Crash between ship and acknowledge: the reopened journal still holds everything and ships it again.
        try (Journal j = Journal.open(new Journal.Config(dir, 64 * 1024, 1L << 30))) {
            LineageShipper s = shipper(j);
            s.shipAvailable();
            assertThat(s.insertedRows()).isZero();
            assertThat(j.segments()).hasSize(1); // sealed segments acknowledged and deleted; the new active one stays
            s.close();
        }
        assertThat(queryLong("SELECT count(*) FROM kv_lineage")).isEqualTo(events.size());
        assertThat(queryLong("SELECT count(DISTINCT event_id) FROM kv_lineage")).isEqualTo(events.size());
        // Field by field: a transfer-in row round-trips through journal and binary COPY.
        LineageEvent ti = events.stream().filter(e -> e.kind() == LineageEvent.Kind.TRANSFER_IN).findFirst().orElseThrow();
        try (Connection c = ds.getConnection(); PreparedStatement ps = c.prepareStatement(
                "SELECT event_time, l.kind, k.name, worker, page, epoch, request_id, tenant_id, slot_from, slot_to, peer_worker, "
                        + "peer_page, peer_epoch, generation, checksum, ok, node FROM kv_lineage l JOIN lineage_kinds k ON k.code = l.kind "
                        + "WHERE event_id = ?")) {
            ps.setLong(1, ti.id());
            try (ResultSet rs = ps.executeQuery()) {
                assertThat(rs.next()).isTrue();
                Instant t = rs.getTimestamp(1).toInstant();
                assertThat(ChronoUnit.MICROS.between(Instant.EPOCH, t)).isEqualTo(ti.timeMicros());
                assertThat(rs.getString(3)).isEqualTo("TRANSFER_IN");
                assertThat(new Object[] {rs.getString(4), rs.getInt(5), rs.getLong(6), rs.getLong(7), rs.getString(8),
                        rs.getInt(9), rs.getInt(10), rs.getString(11), rs.getInt(12), rs.getLong(13), rs.getInt(14),
                        rs.getInt(15), rs.getBoolean(16)}).containsExactly(ti.worker(), ti.page(), ti.epoch(), ti.requestId(),
                        ti.tenant(), ti.slotFrom(), ti.slotTo(), ti.peerWorker(), ti.peerPage(), ti.peerEpoch(),
                        ti.generation(), ti.checksum(), ti.ok());
                assertThat(rs.getString(17)).isEqualTo(ti.node()).isEqualTo(Ev.NODE);
            }
        }
    }

    @Test
    void corruptedJournalStopsTheShipperWithAClearError() throws Exception {
        Ev ev = new Ev(12, nowMicros());
        Path dir = tmp.resolve("j2");
        Path first;
        try (Journal j = Journal.open(new Journal.Config(dir, 4096, 1L << 30))) {
            for (int i = 0; i < 10; i++) {
                j.append(cleanWorkload(ev, 2));
            }
            first = j.segments().get(1).path();
        }
        try (FileChannel ch = FileChannel.open(first, StandardOpenOption.WRITE)) {
            ch.write(ByteBuffer.wrap(new byte[] {1, 2, 3}), 40);
        }
        try (Journal j = Journal.open(new Journal.Config(dir, 4096, 1L << 30))) {
            LineageShipper s = shipper(j);
            assertThatThrownBy(s::shipAvailable).isInstanceOf(JournalCorruptedException.class)
                    .hasMessageContaining(first.getFileName().toString());
            JournalingLineageSink sink = new JournalingLineageSink(j, 1024, 64);
            s.start();
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
            while (s.health().state() != LineageShipper.State.CORRUPTED && System.nanoTime() < deadline) {
                Thread.sleep(20);
            }
            LineageShipper.Health h = s.health();
            assertThat(h.state()).isEqualTo(LineageShipper.State.CORRUPTED);
            assertThat(h.up()).isFalse();
            assertThat(h.detail()).contains("lineage journal corrupted");
            assertThat(h.lastError()).contains(first.getFileName().toString());
            assertThat(h.lastErrorTime()).isNotNull();
            // the first segment shipped before the damage; the rest waits, and the lag says how much
            assertThat(h.lagBytes()).isPositive();
            assertThat(h.lagEvents()).isPositive();
            AuditHealth audit = AuditHealth.of(sink, s);
            assertThat(audit.up()).isFalse();
            assertThat(audit.reasons()).anySatisfy(r -> assertThat(r).contains("CORRUPTED").contains("shipping stopped"));
            sink.close();
            s.close();
            assertThat(j.segments().getFirst().path()).isEqualTo(first); // nothing past the damage was acknowledged
        }
    }

    @Test
    void cleanWorkloadHasNoExposureAndFullLineage() throws Exception {
        Ev ev = new Ev(13, nowMicros());
        long from = ev.now();
        ship(cleanWorkload(ev, 20));
        assertThat(new LineageQueries(ds).exposures(instant(from), instant(ev.tick(1)))).isEmpty();
        RequestLineage lineage = new LineageQueries(ds).requestLineage(1005);
        assertThat(lineage.reads()).hasSize(4);
        assertThat(lineage.isolated()).isTrue();
        PageRead r = lineage.reads().getFirst();
        assertThat(r.writers()).singleElement().satisfies(w -> {
            assertThat(w.kind()).isEqualTo("TRANSFER_IN");
            assertThat(w.writerRequest()).isEqualTo(1005);
            assertThat(w.slotFrom()).isZero();
            assertThat(w.slotTo()).isEqualTo(16);
        });
        assertThat(r.transfers()).singleElement().satisfies(h -> {
            assertThat(h.fromWorker()).isEqualTo("prefill-0");
            assertThat(h.toWorker()).isEqualTo("decode-0");
            assertThat(h.checksumsAgree()).isTrue();
        });
    }

    @Test
    void findsExactlyThe2026StaleEpochReads() throws Exception {
        Ev ev = new Ev(14, nowMicros());
        exec("INSERT INTO tenants VALUES ('acme', 'Acme'), ('globex', 'Globex')");
        List<LineageEvent> events = new ArrayList<>();
        // Request 1 (acme): 9 decode pages filled by transfer from prefill, then decoded and released.
        for (int p = 0; p < 9; p++) {
            events.add(ev.allocate("prefill-0", 100 + p, 1, 1, "acme"));
            events.add(ev.write("prefill-0", 100 + p, 1, 1, "acme", 0, 16));
            events.add(ev.allocate("decode-0", p, 1, 1, "acme"));
            events.add(ev.transferOut("prefill-0", 100 + p, 1, 1, "acme", "decode-0", p, 1, 1, 77 + p));
            events.add(ev.transferIn("decode-0", p, 1, 1, "acme", 0, 16, "prefill-0", 100 + p, 1, 1, 77 + p));
        }
        for (int p = 0; p < 9; p++) {
            events.add(ev.read("decode-0", p, 1, 1, "acme", 0, 16));
            events.add(ev.release("decode-0", p, 1, 1, "acme"));
        }
        events.add(ev.scrub("decode-0", 8, 1)); // page 8 was zeroed: nobody's data afterwards
        long windowStart = ev.tick(1_000);
        // Request 2 (acme again) reuses page 0: same tenant, not a cross-tenant exposure.
        events.add(ev.allocate("decode-0", 0, 2, 2, "acme"));
        events.add(ev.read("decode-0", 0, 2, 2, "acme", 0, 16));
        events.add(ev.release("decode-0", 0, 2, 2, "acme"));
        // Request 3 (globex): a rejected long prompt. Decode reserves 9 pages (new epochs), prefill sends one
        // placeholder page covering 1 slot, decode reads all 9 pages: 8 of them still hold acme's request 1.
        for (int p = 0; p < 9; p++) {
            events.add(ev.allocate("decode-0", p, p == 0 ? 3 : 2, 3, "globex"));
        }
        events.add(ev.allocate("prefill-0", 200, 1, 3, "globex"));
        events.add(ev.write("prefill-0", 200, 1, 3, "globex", 0, 1));
        events.add(ev.transferOut("prefill-0", 200, 1, 3, "globex", "decode-0", 0, 3, 1, 5));
        events.add(ev.transferIn("decode-0", 0, 3, 3, "globex", 0, 1, "prefill-0", 200, 1, 1, 5));
        for (int p = 0; p < 9; p++) {
            events.add(ev.read("decode-0", p, p == 0 ? 3 : 2, 3, "globex", 0, 16));
        }
        long windowEnd = ev.tick(1);
        ship(events);
        exec("INSERT INTO requests (id, tenant_id, model, prompt_tokens, generated_tokens, status, received_at) VALUES "
                + "(1, 'acme', 'glm', 144, 10, 'FINISHED', now()), (2, 'acme', 'glm', 16, 3, 'FINISHED', now()), "
                + "(3, 'globex', 'glm', 900000, 12, 'FINISHED', now())");

        LineageQueries q = new LineageQueries(ds);
        List<Exposure> found = q.exposures(instant(windowStart), instant(windowEnd));
        assertThat(found).hasSize(8);
        assertThat(found).allSatisfy(e -> {
            assertThat(e.readerRequest()).isEqualTo(3);
            assertThat(e.readerTenant()).isEqualTo("globex");
            assertThat(e.exposingRequest()).isEqualTo(1);
            assertThat(e.exposedTenant()).isEqualTo("acme");
            assertThat(e.writerEpoch()).isEqualTo(1);
        });
        assertThat(found.stream().map(Exposure::page).toList()).containsExactly(0, 1, 2, 3, 4, 5, 6, 7);
        assertThat(found.getFirst().slots()).isEqualTo(15); // slot 0 was overwritten by globex's placeholder
        assertThat(found.stream().skip(1).mapToInt(Exposure::slots).distinct()).containsExactly(16);
        // Before the window: request 1's own reads are clean.
        assertThat(q.exposures(instant(windowStart - 1_000_000), instant(windowStart))).isEmpty();

        RequestLineage r3 = q.requestLineage(3);
        assertThat(r3.isolated()).isFalse();
        assertThat(r3.reads().getFirst().writers()).extracting(SlotWriter::writerRequest).containsExactly(3L, 1L);
        assertThat(r3.reads().getLast().writers()).singleElement().extracting(SlotWriter::kind).isEqualTo("SCRUB");

        BlastRadius br = q.blastRadius(instant(windowStart), instant(windowEnd), null, null);
        assertThat(br.affectedResponses()).isEqualTo(1);
        assertThat(br.deliveredResponses()).isEqualTo(1);
        assertThat(br.readerTenants()).containsExactly("globex");
        assertThat(br.exposedTenants()).containsExactly("acme");
        assertThat(br.responses().getFirst().pages()).isEqualTo(8);
        assertThat(q.blastRadius(instant(windowStart), instant(windowEnd), "other-model", null).affectedResponses()).isZero();
    }

    /**
     * A request's lineage lists every page epoch it read with its final range (READ_FINAL) and the writer
     * of every slot as of the end of its reading - its own decode writes included, a foreign write into
     * a page it still read named; a read recorded before READ_FINAL existed keeps its first-read range,
     * and a read of no slot is listed rather than dropped.
     */
    @Test
    void requestLineageListsEveryPageEpochReadWithItsFinalRange() throws Exception {
        Ev ev = new Ev(16, nowMicros());
        List<LineageEvent> events = new ArrayList<>();
        // request 7 (acme): a 6-token prompt transferred into page 20, then 11 decode steps over 8-slot pages
        for (int p = 20; p < 23; p++) {
            events.add(ev.allocate("decode-0", p, 1, 7, "acme"));
        }
        events.add(ev.transferIn("decode-0", 20, 1, 7, "acme", 0, 6, "prefill-0", 60, 1, 1, 21));
        LineageEvent bind20 = ev.read("decode-0", 20, 1, 7, "acme", 0, 6);
        events.add(bind20);
        LineageEvent bind21 = null, bind22 = null;
        for (int pos = 6; pos < 17; pos++) { // each step writes its own slot
            int page = 20 + pos / 8;
            if (pos == 8) {
                events.add(bind21 = ev.read("decode-0", 21, 1, 7, "acme", 0, 0));
            }
            if (pos == 16) {
                events.add(bind22 = ev.read("decode-0", 22, 1, 7, "acme", 0, 0));
            }
            events.add(ev.write("decode-0", page, 1, 7, "acme", pos % 8, pos % 8 + 1));
            if (pos == 12) { // a late foreign write over slot 3 of page 21, which request 7 read on
                events.add(ev.transferIn("decode-0", 21, 1, 9, "globex", 3, 4, "prefill-0", 61, 1, 1, 22));
            }
        }
        for (int p = 20; p < 23; p++) {
            events.add(ev.readFinal("decode-0", p, 1, 7, "acme", p == 22 ? 1 : 8));
            events.add(ev.release("decode-0", p, 1, 7, "acme"));
        }
        // request 8 (globex), lineage from before READ_FINAL: a page read before it held any slot
        events.add(ev.allocate("decode-0", 30, 1, 8, "globex"));
        events.add(ev.read("decode-0", 30, 1, 8, "globex", 0, 0));
        events.add(ev.write("decode-0", 30, 1, 8, "globex", 0, 1));
        events.add(ev.release("decode-0", 30, 1, 8, "globex"));
        ship(events);

        LineageQueries q = new LineageQueries(ds);
        RequestLineage r7 = q.requestLineage(7);
        assertThat(r7.reads()).extracting(PageRead::page, PageRead::slotFrom, PageRead::slotTo, PageRead::readEventId)
                .containsExactly(tuple(20, 0, 8, bind20.id()), tuple(21, 0, 8, bind21.id()), tuple(22, 0, 1, bind22.id()));
        PageRead p20 = r7.reads().getFirst();
        assertThat(p20.writers().getFirst()).satisfies(w -> {
            assertThat(w.kind()).isEqualTo("TRANSFER_IN");
            assertThat(List.of(w.slotFrom(), w.slotTo(), w.writerRequest())).isEqualTo(List.of(0, 6, 7L));
        });
        assertThat(p20.writers()).allMatch(w -> w.writerRequest() == 7).last()
                .satisfies(w -> assertThat(w.slotTo()).isEqualTo(8));
        assertThat(r7.reads().get(1).writers()).filteredOn(w -> w.writerRequest() != 7).singleElement().satisfies(w -> {
            assertThat(List.of(w.slotFrom(), w.slotTo(), w.kind(), w.writerTenant()))
                    .isEqualTo(List.of(3, 4, "TRANSFER_IN", "globex"));
        });
        assertThat(r7.reads().get(2).writers()).singleElement().satisfies(w ->
                assertThat(List.of(w.slotFrom(), w.slotTo(), w.writerRequest())).isEqualTo(List.of(0, 1, 7L)));
        assertThat(r7.isolated()).isFalse();

        RequestLineage r8 = q.requestLineage(8);
        assertThat(r8.reads()).singleElement().satisfies(p -> {
            assertThat(p.page()).isEqualTo(30);
            assertThat(p.slotTo()).isZero();
            assertThat(p.writers()).isEmpty();
        });
    }

    /**
     * A late transfer write of another tenant (an aborted request's copy landing in a page that was
     * released early and reused) is foreign data under a reader that still holds the page epoch, and
     * nobody's exposure once the reader has released it: the page is free, the reader reads it no
     * more.
     */
    @Test
    void aLateForeignWriteExposesTheReaderOnlyWhileItHoldsThePage() throws Exception {
        Ev ev = new Ev(15, nowMicros());
        long from = ev.now();
        List<LineageEvent> events = new ArrayList<>();
        // request 1 (acme) reads page 5 and still holds it when request 2's (globex) copy lands there
        events.add(ev.allocate("decode-0", 5, 1, 1, "acme"));
        events.add(ev.transferIn("decode-0", 5, 1, 1, "acme", 0, 8, "prefill-0", 50, 1, 1, 11));
        events.add(ev.read("decode-0", 5, 1, 1, "acme", 0, 8));
        events.add(ev.transferIn("decode-0", 5, 1, 2, "globex", 0, 12, "prefill-0", 51, 1, 1, 12));
        events.add(ev.release("decode-0", 5, 1, 1, "acme"));
        // request 3 (acme) reads page 6 and releases it before request 4's (initech) copy lands there
        events.add(ev.allocate("decode-0", 6, 1, 3, "acme"));
        events.add(ev.transferIn("decode-0", 6, 1, 3, "acme", 0, 8, "prefill-0", 52, 1, 1, 13));
        events.add(ev.read("decode-0", 6, 1, 3, "acme", 0, 8));
        events.add(ev.release("decode-0", 6, 1, 3, "acme"));
        events.add(ev.transferIn("decode-0", 6, 1, 4, "initech", 0, 12, "prefill-0", 53, 1, 1, 14));
        ship(events);

        List<Exposure> found = new LineageQueries(ds).exposures(instant(from), instant(ev.tick(1)));
        assertThat(found).singleElement().satisfies(e -> {
            assertThat(e.readerRequest()).isEqualTo(1);
            assertThat(e.exposingRequest()).isEqualTo(2);
            assertThat(e.exposedTenant()).isEqualTo("globex");
            assertThat(e.page()).isEqualTo(5);
            assertThat(e.slots()).isEqualTo(12);
        });
    }

    /**
     * After an engine restart a page the new start never wrote holds nobody's data: the last writer of an
     * earlier start (another id prefix) is not its writer, neither for the exposure finder nor the lineage.
     */
    @Test
    void aRestartEndsAttribution() throws Exception {
        Ev before = new Ev(21, nowMicros());
        long from = before.now();
        List<LineageEvent> events = new ArrayList<>();
        events.add(before.allocate("decode-0", 5, 101, 1, "acme"));
        events.add(before.write("decode-0", 5, 101, 1, "acme", 0, 16));
        events.add(before.read("decode-0", 5, 101, 1, "acme", 0, 16));
        events.add(before.release("decode-0", 5, 101, 1, "acme"));
        // the engine restarts: new id prefix, new epoch base; request 2 (globex) reads page 5 before writing it
        Ev after = new Ev(22, before.tick(1_000));
        events.add(after.allocate("decode-0", 5, 201, 2, "globex"));
        LineageEvent read = after.read("decode-0", 5, 201, 2, "globex", 0, 8);
        events.add(read);
        events.add(after.write("decode-0", 5, 201, 2, "globex", 8, 9));
        events.add(after.release("decode-0", 5, 201, 2, "globex"));
        // and in the same new start, request 3 (initech) reads what request 2 wrote: still attributed
        events.add(after.allocate("decode-0", 5, 202, 3, "initech"));
        events.add(after.read("decode-0", 5, 202, 3, "initech", 8, 9));
        events.add(after.release("decode-0", 5, 202, 3, "initech"));
        ship(events);

        LineageQueries q = new LineageQueries(ds);
        assertThat(q.exposures(instant(from), instant(after.tick(1))))
                .extracting(Exposure::readerRequest, Exposure::exposingRequest)
                .containsExactly(tuple(3L, 2L));
        PageRead r2 = q.requestLineage(2).reads().getFirst();
        assertThat(r2.readEventId()).isEqualTo(read.id());
        assertThat(r2.writers()).extracting(SlotWriter::kind, SlotWriter::writerRequest)
                .containsExactly(tuple("NONE", 0L));
    }

    /** The engine records a scrub with the quarantined page's last owner; the scrub still leaves nobody's data. */
    @Test
    void aScrubEndsAttributionWhateverTenantItNames() throws Exception {
        Ev ev = new Ev(23, nowMicros());
        long from = ev.now();
        List<LineageEvent> events = new ArrayList<>();
        events.add(ev.allocate("decode-0", 9, 1, 1, "acme"));
        events.add(ev.write("decode-0", 9, 1, 1, "acme", 0, 16));
        events.add(ev.scrub("decode-0", 9, 1, 1, "acme"));
        events.add(ev.allocate("decode-0", 9, 2, 2, "globex"));
        events.add(ev.read("decode-0", 9, 2, 2, "globex", 0, 4));
        events.add(ev.release("decode-0", 9, 2, 2, "globex"));
        ship(events);

        LineageQueries q = new LineageQueries(ds);
        assertThat(q.exposures(instant(from), instant(ev.tick(1)))).isEmpty();
        assertThat(q.requestLineage(2).reads().getFirst().writers())
                .extracting(SlotWriter::kind, SlotWriter::writerRequest, SlotWriter::writerTenant)
                .containsExactly(tuple("SCRUB", 0L, null));
    }

    @Test
    void aPrefixReuseInsideItsScopeIsNoExposureAndAReadAcrossScopesIs() throws Exception {
        Ev ev = new Ev(16, nowMicros());
        long from = ev.now();
        long scopeA = 0x1234_5678_9abc_def0L;
        long scopeAKeyed = 0x0fed_cba9_8765_4321L;
        List<LineageEvent> events = new ArrayList<>();
        // request 1 (tenant a) writes a prompt page and leaves it cached in scope a
        events.add(ev.allocate("prefill-0", 3, 7, 1, "a"));
        events.add(ev.write("prefill-0", 3, 7, 1, "a", 0, 16));
        events.add(ev.cache("prefill-0", 3, 7, 1, "a", 16, scopeA));
        // request 2 of the same scope reuses it: legitimate
        events.add(ev.reuse("prefill-0", 3, 7, 2, "a", 16, scopeA));
        // request 3 of tenant b, and request 4 of tenant a under another prompt cache key, read it: exposures
        events.add(ev.reuse("prefill-0", 3, 7, 3, "b", 16, scopeA));
        events.add(ev.reuse("prefill-0", 3, 7, 4, "a", 16, scopeAKeyed));
        ship(events);
        List<Exposure> found = new LineageQueries(ds).exposures(instant(from), instant(ev.tick(1)));
        assertThat(found).extracting(Exposure::readerRequest, Exposure::readerTenant, Exposure::exposingRequest,
                Exposure::exposedTenant, Exposure::page, Exposure::readEpoch, Exposure::slots)
                .containsExactly(tuple(3L, "b", 1L, "a", 3, 7L, 16), tuple(4L, "a", 1L, "a", 3, 7L, 16));
    }

    @Test
    void hotQueriesUseTheIndexes() throws Exception {
        Ev ev = new Ev(15, nowMicros());
        long start = ev.now();
        List<LineageEvent> bulk = cleanWorkload(ev, 4_000); // ~100k rows
        ship(bulk);
        exec("ANALYZE kv_lineage");
        String exposurePlan = explain(LineageSql.EXPOSURES, instant(start + 1_000), instant(start + 2_000), null, null,
                null, null, instant(start + 1_000), instant(start + 2_000), null, null, null, null,
                instant(start + 1_000), instant(start + 2_000), null, null, null, null);
        String lineagePlan = explain(LineageSql.REQUEST_READS, 1500L);
        System.out.println("EXPOSURES plan:\n" + exposurePlan + "\nREQUEST_READS plan:\n" + lineagePlan);
        // Only the partition holding the data counts: empty day partitions ahead (never analyzed) may show a
        // zero-cost Seq Scan, and run-time pruning (event_time <= the read's time) removes them anyway.
        String dataPartition = "kv_lineage_p" + PartitionManager.dayOf(start).toString().replace("-", "");
        for (String plan : List.of(exposurePlan, lineagePlan)) {
            assertThat(plan).doesNotContain("Seq Scan on " + dataPartition + " ");
            assertThat(plan).contains("Index Only Scan Backward using " + dataPartition + "_node_worker_page_event_time_event_id"); // the last-writer walk
        }
        assertThat(exposurePlan).contains("kv_lineage_p").contains("_event_time_idx");
        assertThat(lineagePlan).contains("request_id_event_time_idx");
    }

    /** Requests 1000+i (tenant by i % 3): 4 prefill pages written, transferred to decode, read, released. */
    static List<LineageEvent> cleanWorkload(Ev ev, int requests) {
        List<LineageEvent> out = new ArrayList<>();
        for (int i = 0; i < requests; i++) {
            long req = 1000 + i;
            String tenant = "tenant-" + (i % 3);
            long epoch = i + 1;
            for (int k = 0; k < 4; k++) {
                int pp = (i * 4 + k) % 4096, dp = (i * 4 + k) % 8192;
                out.add(ev.allocate("prefill-0", pp, epoch, req, tenant));
                out.add(ev.write("prefill-0", pp, epoch, req, tenant, 0, 16));
                out.add(ev.allocate("decode-0", dp, epoch, req, tenant));
                out.add(ev.transferOut("prefill-0", pp, epoch, req, tenant, "decode-0", dp, epoch, 1, (int) (req * 31 + k)));
                out.add(ev.transferIn("decode-0", dp, epoch, req, tenant, 0, 16, "prefill-0", pp, epoch, 1, (int) (req * 31 + k)));
                out.add(ev.verify("decode-0", dp, epoch, req, tenant, true));
                out.add(ev.release("prefill-0", pp, epoch, req, tenant));
            }
            for (int k = 0; k < 4; k++) {
                int dp = (i * 4 + k) % 8192;
                out.add(ev.read("decode-0", dp, epoch, req, tenant, 0, 16));
            }
            for (int k = 0; k < 4; k++) {
                out.add(ev.release("decode-0", (i * 4 + k) % 8192, epoch, req, tenant));
            }
            ev.tick(100);
        }
        return out;
    }

    private void ship(List<LineageEvent> events) throws Exception {
        Path dir = tmp.resolve("ship-" + System.nanoTime());
        try (Journal j = Journal.open(new Journal.Config(dir, 8 << 20, 1L << 32))) {
            for (int i = 0; i < events.size(); i += 10_000) {
                j.append(events.subList(i, Math.min(events.size(), i + 10_000)));
            }
            LineageShipper s = shipper(j);
            s.shipAvailable();
            s.close();
        }
    }

    private LineageShipper shipper(Journal j) {
        return new LineageShipper(j, ds, new PartitionManager(2, 30), LineageShipper.Config.defaults());
    }

    private String explain(String sql, Object... params) throws SQLException {
        try (Connection c = ds.getConnection(); PreparedStatement ps = c.prepareStatement("EXPLAIN " + sql)) {
            for (int i = 0; i < params.length; i++) {
                Object p = params[i];
                if (p instanceof Instant t) {
                    ps.setTimestamp(i + 1, Timestamp.from(t));
                } else if (p == null) {
                    ps.setString(i + 1, null);
                } else {
                    ps.setObject(i + 1, p);
                }
            }
            StringBuilder sb = new StringBuilder();
            try (ResultSet rs = ps.executeQuery()) {
                while (rs.next()) {
                    sb.append(rs.getString(1)).append('\n');
                }
            }
            return sb.toString();
        }
    }

    private static long nowMicros() {
        return ChronoUnit.MICROS.between(Instant.EPOCH, Instant.now());
    }

    private static Instant instant(long micros) {
        return Instant.EPOCH.plus(micros, ChronoUnit.MICROS);
    }

    private void exec(String sql) throws SQLException {
        try (Connection c = ds.getConnection(); Statement s = c.createStatement()) {
            s.execute(sql);
        }
    }

    private long queryLong(String sql) throws SQLException {
        try (Connection c = ds.getConnection(); Statement s = c.createStatement(); ResultSet rs = s.executeQuery(sql)) {
            rs.next();
            return rs.getLong(1);
        }
    }
}
