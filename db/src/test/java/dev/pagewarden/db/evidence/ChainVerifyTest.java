package dev.pagewarden.db.evidence;

import dev.pagewarden.core.lineage.LineageEvent;
import dev.pagewarden.core.receipt.ReceiptKeys;
import dev.pagewarden.db.journal.Journal;
import dev.pagewarden.db.lineage.LineageShipper;
import dev.pagewarden.db.lineage.PartitionManager;
import dev.pagewarden.db.schema.Migrations;
import dev.pagewarden.db.testing.Ev;
import dev.pagewarden.db.testing.TestPostgres;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import javax.sql.DataSource;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.time.LocalDate;
import java.time.ZoneOffset;
import java.time.temporal.ChronoUnit;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.List;
import java.util.Set;
import java.util.stream.Collectors;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Lineage shipped in batches by a chained shipper and admin-audit rows linked by their writer, then tampered
 * with directly in PostgreSQL: the verifier names exactly the links that were changed, deleted or reordered.
 * The row hashes it recomputes are checked against an encoding built here from the documented rules.
 */
class ChainVerifyTest {
    private static TestPostgres pg;
    private static DataSource ds;
    private static final ReceiptKeys KEYS = ReceiptKeys.generate("pw");

    @TempDir
    static Path tmp;

    @BeforeAll
    static void start() throws Exception {
        pg = TestPostgres.start("chains");
        ds = pg.dataSource();
        Migrations.migrate(ds);
    }

    @AfterAll
    static void stop() throws Exception {
        pg.close();
    }

    private static ChainVerifier verifier() {
        return new ChainVerifier(KEYS.publicKeys()::get, 30);
    }

    private static Set<String> broken() throws SQLException {
        try (Connection c = ds.getConnection()) {
            ChainVerifier.Result r = verifier().verify(c, null, null);
            r.broken().forEach(b -> System.out.println("broken: " + b));
            assertThat(r.ok()).isEqualTo(r.broken().isEmpty());
            return r.broken().stream().map(b -> b.table() + "/" + b.id()).collect(Collectors.toSet());
        }
    }

    private static void exec(String sql) throws SQLException {
        try (Connection c = ds.getConnection(); Statement st = c.createStatement()) {
            st.execute(sql);
        }
    }

    private static long audit(RowChains chains, String action) throws SQLException {
        return ChainedAudit.append(ds, chains, "alice", action, "x");
    }

    @Test
    void tamperingIsNamedLinkByLink() throws Exception {
        // 50 events of a day past retention: one batch, dropped with its partition and a signed summary
        long old = ChronoUnit.MICROS.between(Instant.EPOCH, LocalDate.now(ZoneOffset.UTC).minusDays(40).atStartOfDay(ZoneOffset.UTC).toInstant());
        Ev past = new Ev(6, old + 5_000_000);
        List<LineageEvent> oldEvents = new ArrayList<>();
        for (int i = 0; i < 50; i++) {
            oldEvents.add(past.write("decode-0", i, i, 900, "t0", 0, 16));
        }
        // then 5 batches of 100 events today (batches 2 to 6)
        long t0 = ChronoUnit.MICROS.between(Instant.EPOCH, LocalDate.now(ZoneOffset.UTC).atStartOfDay(ZoneOffset.UTC).toInstant()) + 1_000_000;
        Ev ev = new Ev(7, t0);
        List<LineageEvent> events = new ArrayList<>();
        for (int i = 0; i < 500; i++) {
            events.add(ev.write("decode-0", i % 64, i, 1000 + i / 10, "t" + (i % 3), 0, 16));
        }
        // the retention's own admin-audit row (the drop) is the first link of the node's admin-audit chain
        RowChains chains = new RowChains("node-a", 10);
        PartitionManager partitions = new PartitionManager(1, 30).onDrop(new DropSummaries(KEYS, Clock.systemUTC(), 10)::beforeDrop)
                .onAudit((c, id) -> chains.link(c, "admin_audit", id));
        try (Journal journal = Journal.open(new Journal.Config(tmp.resolve("journal"), 1 << 20, 1L << 30))) {
            LineageShipper shipper = new LineageShipper(journal, ds, partitions,
                    new LineageShipper.Config(100, Duration.ofMillis(20), Duration.ofMillis(200), Duration.ofHours(1)),
                    new LineageChain("node-a"));
            journal.append(oldEvents);
            assertThat(shipper.shipAvailable()).isEqualTo(50);
            try (Connection c = ds.getConnection()) {
                c.setAutoCommit(false);
                assertThat(partitions.maintain(c, LocalDate.now(ZoneOffset.UTC))).hasSize(1);
            }
            journal.append(events);
            assertThat(shipper.shipAvailable()).isEqualTo(500);
            shipper.close();
        }
        List<Long> ids = new ArrayList<>();
        for (int i = 0; i < 6; i++) {
            ids.add(audit(chains, "action." + i));
        }
        Checkpoints checkpoints = new Checkpoints(ds, KEYS, "node-a", 10, Clock.systemUTC());
        assertThat(checkpoints.checkpoint()).extracting(Checkpoints.Checkpoint::chain)
                .containsExactlyInAnyOrder("lineage:node-a", "admin_audit:node-a");
        try (Connection c = ds.getConnection(); Statement st = c.createStatement();
             ResultSet rs = st.executeQuery("SELECT count(*), sum(row_count) FROM lineage_batches")) {
            rs.next();
            assertThat(rs.getInt(1)).isEqualTo(6);
            assertThat(rs.getInt(2)).isEqualTo(550);
        }
        assertRowHashMatchesDocumentedEncoding(ids.get(2));
        assertThat(broken()).isEmpty();
        // the same partition dropped by hand, without a summary, would have been named
        try (Connection c = ds.getConnection(); Statement st = c.createStatement();
             ResultSet rs = st.executeQuery("SELECT count(*) FROM lineage_drop_summaries WHERE chain = 'lineage:node-a' AND first_seq = 1 AND last_seq = 1 AND row_count = 50")) {
            rs.next();
            assertThat(rs.getInt(1)).isEqualTo(1);
        }

        // one lineage row of batch 3 and one admin-audit row changed
        long eventOfBatch2 = events.get(150).id();
        exec("UPDATE kv_lineage SET tenant_id = 'someone-else' WHERE event_id = " + eventOfBatch2);
        exec("UPDATE admin_audit SET details = 'nothing happened' WHERE id = " + ids.get(2));
        assertThat(broken()).containsExactlyInAnyOrder("kv_lineage/lineage:node-a#3", "admin_audit/" + ids.get(2));

        // a deleted lineage row (batch 5) and a deleted admin-audit row
        exec("DELETE FROM kv_lineage WHERE event_id = " + events.get(350).id());
        exec("DELETE FROM admin_audit WHERE id = " + ids.get(4));
        assertThat(broken()).containsExactlyInAnyOrder("kv_lineage/lineage:node-a#3", "admin_audit/" + ids.get(2),
                "kv_lineage/lineage:node-a#5", "admin_audit/" + ids.get(4));

        // a reordered pair: admin-audit links 1 and 2 swapped, lineage batches 5 and 6 swapped
        swap("chain_links", "admin_audit:node-a", 2, 3);
        swap("lineage_batches", "lineage:node-a", 5, 6);
        assertThat(broken()).containsExactlyInAnyOrder("kv_lineage/lineage:node-a#3", "admin_audit/" + ids.get(2),
                "admin_audit/" + ids.get(4), "admin_audit/" + ids.get(0), "admin_audit/" + ids.get(1),
                "lineage_batches/lineage:node-a#5", "lineage_batches/lineage:node-a#6",
                // batch 5's rows are now checked against batch 6's record, and the other way round
                "kv_lineage/lineage:node-a#5", "kv_lineage/lineage:node-a#6",
                // and the lineage checkpoint no longer matches its chain
                "chain_checkpoints/lineage:node-a#6");
        try (Connection c = ds.getConnection()) {
            assertThat(verifier().verify(c, null, null).broken()).filteredOn(b -> b.table().equals("lineage_batches"))
                    .allSatisfy(b -> assertThat(b.why()).startsWith("reordered"));
        }
        Set<String> before = broken();

        // a checkpoint's signature and a retention summary altered: both named, and without its summary the
        // dropped day's batch reads as deleted
        exec("UPDATE chain_checkpoints SET signature = set_byte(signature, 0, get_byte(signature, 0) # 1) WHERE chain = 'admin_audit:node-a'");
        exec("UPDATE lineage_drop_summaries SET row_count = 49");
        Set<String> expected = new java.util.HashSet<>(before);
        expected.addAll(Set.of("chain_checkpoints/admin_audit:node-a#7",
                "lineage_drop_summaries/lineage:node-a@" + LocalDate.now(ZoneOffset.UTC).minusDays(40), "kv_lineage/lineage:node-a#1"));
        assertThat(broken()).isEqualTo(expected);
    }

    private static void swap(String table, String chain, long a, long b) throws SQLException {
        exec("UPDATE " + table + " SET seq = 1000000 WHERE chain = '" + chain + "' AND seq = " + a);
        exec("UPDATE " + table + " SET seq = " + a + " WHERE chain = '" + chain + "' AND seq = " + b);
        exec("UPDATE " + table + " SET seq = " + b + " WHERE chain = '" + chain + "' AND seq = 1000000");
    }

    /** The stored row hash equals SHA-256 of the encoding docs/evidence.md describes, built here by hand. */
    private static void assertRowHashMatchesDocumentedEncoding(long id) throws Exception {
        try (Connection c = ds.getConnection(); Statement st = c.createStatement();
             ResultSet rs = st.executeQuery("SELECT a.id, (extract(epoch FROM a.at) * 1000000)::bigint, a.actor, a.action, a.target, "
                     + "a.details, l.row_hash FROM admin_audit a JOIN chain_links l ON l.table_name = 'admin_audit' AND l.row_id = a.id "
                     + "WHERE a.id = " + id)) {
            assertThat(rs.next()).isTrue();
            java.io.ByteArrayOutputStream out = new java.io.ByteArrayOutputStream();
            for (String v : new String[]{"admin_audit", rs.getString(1), rs.getString(2), rs.getString(3), rs.getString(4),
                    rs.getString(5), rs.getString(6)}) {
                if (v == null) {
                    out.writeBytes(HexFormat.of().parseHex("ffffffff"));
                } else {
                    byte[] b = v.getBytes(java.nio.charset.StandardCharsets.UTF_8);
                    out.writeBytes(java.nio.ByteBuffer.allocate(4).putInt(b.length).array());
                    out.writeBytes(b);
                }
            }
            byte[] expected = java.security.MessageDigest.getInstance("SHA-256").digest(out.toByteArray());
            assertThat(HexFormat.of().formatHex(rs.getBytes(7))).isEqualTo(HexFormat.of().formatHex(expected));
        }
    }
}
