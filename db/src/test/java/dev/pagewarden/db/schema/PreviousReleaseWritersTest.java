package dev.pagewarden.db.schema;

import dev.pagewarden.core.kv.KvPool;
import dev.pagewarden.core.lineage.LineageEvent;
import dev.pagewarden.core.receipt.PageEpochRead;
import dev.pagewarden.core.receipt.Receipt;
import dev.pagewarden.core.receipt.ReceiptBody;
import dev.pagewarden.core.receipt.ReceiptIssuer;
import dev.pagewarden.core.receipt.ReceiptKeys;
import dev.pagewarden.core.receipt.ServingIdentity;
import dev.pagewarden.db.audit.BlastRadius;
import dev.pagewarden.db.audit.Exposure;
import dev.pagewarden.db.audit.LineageQueries;
import dev.pagewarden.db.audit.ReceiptAudit;
import dev.pagewarden.db.audit.ReceiptAudit.Status;
import dev.pagewarden.db.audit.ReceiptKeyRegistry;
import dev.pagewarden.db.lineage.PartitionManager;
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
import java.sql.Statement;
import java.time.Duration;
import java.time.Instant;
import java.time.LocalDate;
import java.time.ZoneOffset;
import java.time.temporal.ChronoUnit;
import java.util.ArrayList;
import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.tuple;

/**
 * A rolling upgrade seen from the database: replicas of the previous release write their rows with their own
 * statements ({@code upgrade/previous-release-writers.sql}, from {@link RollingUpgrade#PREVIOUS_RELEASE_COMMIT}),
 * the first new replica migrates to the latest schema, the old replicas keep writing with the same statements
 * next to a new replica, and the new code's readers answer correctly over rows of both (old rows hold NULL or
 * the default in every column added since).
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class PreviousReleaseWritersTest {
    private static final String OLD = "old-replica", NEW = "new-replica";
    private final OldWriters old = OldWriters.load();
    private TestPostgres pg;
    private DataSource ds;
    @TempDir
    Path tmp;

    @BeforeAll
    void start() throws Exception {
        pg = TestPostgres.start("old-writers");
        ds = RollingUpgrade.newDatabase(pg, "rolling_upgrade");
        RollingUpgrade.flyway(ds, RollingUpgrade.PREVIOUS_RELEASE_LAST_MIGRATION, "classpath:db/migration").migrate();
    }

    @AfterAll
    void stop() throws Exception {
        pg.close();
    }

    /** One request on one pool's page: filled by transfer from prefill ({@code written} slots), 16 slots read, released. */
    private record Served(Ev ev, long request, String tenant, int page, long epoch, LineageEvent[] bind) {
        Served(Ev ev, long request, String tenant, int page, long epoch) {
            this(ev, request, tenant, page, epoch, new LineageEvent[1]);
        }

        Served run(List<LineageEvent> out, int written) {
            out.add(ev.allocate("prefill-0", 50 + page, epoch, request, tenant));
            out.add(ev.write("prefill-0", 50 + page, epoch, request, tenant, 0, written));
            out.add(ev.allocate("decode-0", page, epoch, request, tenant));
            out.add(ev.transferOut("prefill-0", 50 + page, epoch, request, tenant, "decode-0", page, epoch, 1, (int) request));
            out.add(ev.transferIn("decode-0", page, epoch, request, tenant, 0, written, "prefill-0", 50 + page, epoch, 1,
                    (int) request));
            out.add(ev.release("prefill-0", 50 + page, epoch, request, tenant));
            bind[0] = ev.read("decode-0", page, epoch, request, tenant, 0, 16);
            out.add(bind[0]);
            out.add(ev.readFinal("decode-0", page, epoch, request, tenant, 16));
            out.add(ev.release("decode-0", page, epoch, request, tenant));
            return this;
        }

        Receipt receipt(ReceiptKeys keys, String node) {
            LineageEvent b = bind[0];
            return new ReceiptIssuer("glm", keys).sign(ReceiptBody.v2(request, tenant, "glm", new ServingIdentity(node, "r-" + node),
                    List.of(new PageEpochRead(b.worker(), b.page(), b.epoch(), 16, request, b.id())), new byte[32]));
        }
    }

    @Test
    void theOldReleasesWritersKeepWorkingAndTheNewReadersAnswerOverTheirRows() throws Exception {
        long t0 = ChronoUnit.MICROS.between(Instant.EPOCH, Instant.now());
        long epoch = KvPool.bootEpochBase(Instant.EPOCH.plus(t0, ChronoUnit.MICROS)) + 1;
        ReceiptKeys oldKeys = ReceiptKeys.generate("pw-old"), newKeys = ReceiptKeys.generate("pw-new");
        Ev oldEv = new Ev(OLD, 41, t0);
        Instant now = Instant.now();

        // 1. the previous release, on its own schema: request 2 (globex) gets page 3 after request 1 (acme), is sent one
        //    slot and reads sixteen (an exposure of acme); request 3 (acme) is clean. Incident, disclosure, keys, ...
        List<LineageEvent> before = new ArrayList<>();
        Served r1 = new Served(oldEv, 1, "acme", 3, epoch).run(before, 16);
        Served r2 = new Served(oldEv, 2, "globex", 3, epoch + 1).run(before, 1);
        Served r3 = new Served(oldEv, 3, "acme", 4, epoch).run(before, 16);
        // what happens after the migration, prepared now: the old replica's second batch is streamed in the binary
        // form of the previous release's column types
        Ev oldAfter = new Ev(OLD, 42, oldEv.tick(1_000)), newEv = new Ev(NEW, 43, oldEv.now());
        List<LineageEvent> afterOld = new ArrayList<>(), afterNew = new ArrayList<>();
        Served r11 = new Served(oldAfter, 11, "initech", 5, epoch + 2).run(afterOld, 16);
        Served r12 = new Served(oldAfter, 12, "acme", 5, epoch + 3).run(afterOld, 1);
        Served r21 = new Served(newEv, 21, "globex", 3, epoch).run(afterNew, 16);
        Served r22 = new Served(newEv, 22, "initech", 3, epoch + 1).run(afterNew, 16);
        byte[] beforeStream, afterOldStream;
        long incident;
        try (Connection c = ds.getConnection()) {
            beforeStream = old.lineageCopyStream(c, before);
            afterOldStream = old.lineageCopyStream(c, afterOld);
            exec(c, "INSERT INTO tenants VALUES ('acme', 'Acme'), ('globex', 'Globex'), ('initech', 'Initech')");
            assertThat(old.shipLineage(c, beforeStream, before)).isEqualTo(before.size());
            for (Served s : List.of(r1, r2, r3)) {
                insertRequest(c, s, now, oldKeys);
            }
            assertThat(old.run(c, "receipt_keys.register", oldKeys.currentKeyId(), ReceiptKeyRegistry.ED25519,
                    oldKeys.publicKeys().get(oldKeys.currentKeyId()).getEncoded(), OLD)).isEqualTo(1);
            incident = writeIncident(c, r2, r1, now);
            long disclosure = (Long) old.run(c, "disclosures.draft", "i", incident, "v", 1, "t", "Cross-tenant read",
                    "b", "Request 2 read KV data of another tenant.", "now", now, "by", "alice");
            old.run(c, "disclosures.review", "by", "bob", "id", disclosure);
            old.run(c, "disclosures.publish", "now", now, "by", "bob", "id", disclosure);
            old.run(c, "tenant_notices.insert", "d", disclosure, "t", "acme", "now", now, "rel", "exposed");
            writeTheRest(c, now, "before");
        }

        // 2. the first new replica migrates; the old replica keeps writing with the same statements, a new one ships
        //    with the new shipper - same node-local page numbers and epochs on a different node
        assertThat(RollingUpgrade.flyway(ds, "latest", "classpath:db/migration").migrate().success).isTrue();
        try (Connection c = ds.getConnection()) {
            assertThat(old.shipLineage(c, afterOldStream, afterOld)).isEqualTo(afterOld.size());
            assertThat(old.shipLineage(c, beforeStream, before)).as("a re-shipped batch").isZero();
            for (Served s : List.of(r11, r12, r21, r22)) {
                insertRequest(c, s, now, s.ev() == newEv ? newKeys : oldKeys);
            }
            assertThat(old.run(c, "receipt_keys.register", oldKeys.currentKeyId(), ReceiptKeyRegistry.ED25519,
                    oldKeys.publicKeys().get(oldKeys.currentKeyId()).getEncoded(), OLD)).isEqualTo(0);
            assertThat(old.run(c, "incidents.find-open", "model", "glm", "node", OLD, "worker", "decode-0",
                    "since", now.minusSeconds(60))).isEqualTo(incident);
            old.run(c, "incidents.attach", "t", now, "sev", "CRITICAL", "id", incident);
            old.run(c, "incident_entries.insert", "i", incident, "at", now, "k", "DETECTOR", "a", "detector:lineage-exposure",
                    "t", "request 12 read initech's KV data");
            assertThat(claim(c, r12, r11, now)).isEqualTo(1);
            assertThat(claim(c, r2, r1, now)).as("claimed before the upgrade").isEqualTo(0);
            old.run(c, "incident_exposures.file", "id", incident, "node", OLD, "worker", "decode-0", "page", 5,
                    "epoch", r12.epoch(), "reader", 12L, "exposing", 11L);
            writeTheRest(c, now, "after");
        }
        ship(afterNew);
        ReceiptKeyRegistry registry = new ReceiptKeyRegistry(ds, Duration.ofSeconds(10), Duration.ZERO);
        registry.registerAll(newKeys, NEW);

        // 3. the new readers over both releases' rows
        LineageQueries q = new LineageQueries(ds);
        Instant from = Instant.EPOCH.plus(t0, ChronoUnit.MICROS), to = Instant.EPOCH.plus(newEv.tick(1), ChronoUnit.MICROS);
        assertThat(q.exposures(from, to))
                .extracting(Exposure::node, Exposure::page, Exposure::readerRequest, Exposure::readerTenant,
                        Exposure::exposingRequest, Exposure::exposedTenant, Exposure::slots)
                .containsExactly(tuple(OLD, 3, 2L, "globex", 1L, "acme", 15), tuple(OLD, 5, 12L, "acme", 11L, "initech", 15));
        for (long clean : new long[] {1, 3, 11, 21, 22}) {
            assertThat(q.requestLineage(clean).isolated()).as("request %d", clean).isTrue();
        }
        BlastRadius radius = q.blastRadius(from, to, "glm", null);
        assertThat(List.of(radius.affectedResponses(), radius.deliveredResponses())).isEqualTo(List.of(2, 2));
        assertThat(radius.readerTenants()).containsExactlyInAnyOrder("globex", "acme");
        assertThat(radius.exposedTenants()).containsExactlyInAnyOrder("acme", "initech");
        assertThat(q.blastRadius(from, to, null, NEW, null).affectedResponses()).isZero();

        ReceiptAudit audit = new ReceiptAudit(ds, id -> registry.find(id).orElse(null));
        for (Served s : List.of(r1, r3, r11)) {
            assertThat(audit.verify(s.receipt(oldKeys, OLD)).status()).as("request %d", s.request()).isEqualTo(Status.OK);
        }
        for (Served s : List.of(r21, r22)) {
            assertThat(audit.verify(s.receipt(newKeys, NEW)).status()).as("request %d", s.request()).isEqualTo(Status.OK);
        }
        for (Served s : List.of(r2, r12)) {
            assertThat(audit.verify(s.receipt(oldKeys, OLD)).status()).as("request %d", s.request()).isEqualTo(Status.VIOLATION);
        }
        assertThat(registry.all()).extracting(ReceiptKeyRegistry.RegisteredKey::keyId, ReceiptKeyRegistry.RegisteredKey::node)
                .containsExactlyInAnyOrder(tuple(oldKeys.currentKeyId(), OLD), tuple(newKeys.currentKeyId(), NEW));

        // retention over the old release's incident and disclosure (published before frozen blast radii existed):
        // both hold the lineage
        try (Connection c = ds.getConnection()) {
            assertThat(new PartitionManager(1, 30).holds(c)).extracting(PartitionManager.Hold::reason)
                    .anySatisfy(r -> assertThat(r).startsWith("open incident " + incident))
                    .anySatisfy(r -> assertThat(r).startsWith("published disclosure ").contains("(incident " + incident + " v1)"));
            LocalDate today = LocalDate.now(ZoneOffset.UTC);
            assertThat(new PartitionManager(1, 0).maintain(c, today.plusDays(2))).as("held, not dropped").isEmpty();
        }
    }

    private void insertRequest(Connection c, Served s, Instant now, ReceiptKeys keys) throws Exception {
        Receipt receipt = s.receipt(keys, s.bind()[0].node());
        old.run(c, "requests.insert", "admitted", now, "error", null, "finish", "stop", "finished", now, "first", now,
                "generated", 4, "model", "glm", "prompt", 16, "public", "pub" + s.request(), "receipt", receipt.toCompact(),
                "hash", receipt.digest(), "received", now, "status", "FINISHED", "stream", false, "tenant", s.tenant(),
                "id", s.request());
    }

    private long writeIncident(Connection c, Served reader, Served exposing, Instant now) throws Exception {
        old.run(c, "safety_events.insert", "time", now, "type", "UNWRITTEN_SLOT_READ", "severity", "CRITICAL", "node", OLD,
                "worker", "decode-0", "request", reader.request(), "tenant", reader.tenant(), "pages", new int[] {reader.page()},
                "epochs", new long[] {reader.epoch()}, "details", "slots 1..16 never written");
        long id = (Long) old.run(c, "incidents.open", "title", "lineage-exposure on " + OLD + "/decode-0 (glm)", "model", "glm",
                "node", OLD, "worker", "decode-0", "sev", "CRITICAL", "now", now, "t", now);
        old.run(c, "incident_entries.insert", "i", id, "at", now, "k", "DETECTOR", "a", "detector:lineage-exposure",
                "t", "request 2 read acme's KV data");
        assertThat(claim(c, reader, exposing, now)).isEqualTo(1);
        old.run(c, "incident_exposures.file", "id", id, "node", OLD, "worker", "decode-0", "page", reader.page(),
                "epoch", reader.epoch(), "reader", reader.request(), "exposing", exposing.request());
        return id;
    }

    private Object claim(Connection c, Served reader, Served exposing, Instant now) throws Exception {
        return old.run(c, "incident_exposures.claim", "node", OLD, "worker", "decode-0", "page", reader.page(),
                "epoch", reader.epoch(), "reader", reader.request(), "exposing", exposing.request(), "now", now, "by", OLD);
    }

    /** The small tables: sweep position, admin audit, sessions, model visibility, quota buckets (Bucket4j's statements). */
    private void writeTheRest(Connection c, Instant now, String round) throws Exception {
        old.run(c, "lineage_sweep_position.advance", "to", now.plusSeconds(round.equals("before") ? 0 : 1), "node", OLD);
        old.run(c, "admin_audit.insert", "actor", "alice", "action", "model.visibility", "target", "glm", "details", round);
        old.run(c, "admin_sessions.insert", "h", round.getBytes(), "created", now, "access", now, "idle", 1800,
                "expires", now.plusSeconds(1800), "data", new byte[] {1, 2, 3});
        assertThat(old.run(c, "model_visibility.set", "glm", round.equals("before"), now, "alice", "pagewarden_changes",
                "model-visibility:glm")).isNotNull();
        String bucket = "acme:rpm:10:" + round;
        assertThat(old.run(c, "quota_buckets.insert", bucket)).isEqualTo(1);
        c.setAutoCommit(false);
        old.run(c, "quota_buckets.lock", bucket);
        assertThat(old.run(c, "quota_buckets.update", new byte[] {9, 9}, bucket)).isEqualTo(1);
        c.commit();
        c.setAutoCommit(true);
    }

    private void ship(List<LineageEvent> events) throws Exception {
        TestShipping.ship(ds, tmp.resolve("ship-" + System.nanoTime()), new PartitionManager(1, 30), events);
    }

    private static void exec(Connection c, String sql) throws Exception {
        try (Statement st = c.createStatement()) {
            st.setQueryTimeout(30);
            st.execute(sql);
        }
    }
}
