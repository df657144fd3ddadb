package dev.pagewarden.db.lineage;

import dev.pagewarden.db.journal.Journal;
import dev.pagewarden.db.schema.Migrations;
import dev.pagewarden.db.testing.TestPostgres;
import dev.pagewarden.db.testing.Ev;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import javax.sql.DataSource;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.time.Duration;
import java.time.Instant;
import java.time.temporal.ChronoUnit;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;

import static org.assertj.core.api.Assertions.assertThat;

/** PostgreSQL stopped in the middle of a steady event stream, then restarted: every event arrives exactly once. */
class ShipperOutageTest {
    @TempDir
    Path tmp;

    @Test
    void everyEventArrivesExactlyOnceAcrossADatabaseOutage() throws Exception {
        try (TestPostgres pg = TestPostgres.start("outage")) {
            DataSource ds = pg.dataSource();
            Migrations.migrate(ds);
            try (Journal journal = Journal.open(new Journal.Config(tmp.resolve("journal"), 256 * 1024, 1L << 32))) {
                JournalingLineageSink sink = new JournalingLineageSink(journal, 1 << 14, 4096);
                LineageShipper shipper = new LineageShipper(journal, ds, new PartitionManager(1, 30),
                        new LineageShipper.Config(5_000, Duration.ofMillis(50), Duration.ofMillis(500), Duration.ofHours(1)));
                shipper.start();
                AtomicBoolean stop = new AtomicBoolean();
                long[] emitted = {0};
                Thread engine = Thread.ofPlatform().start(() -> {
                    Ev ev = new Ev(21, ChronoUnit.MICROS.between(Instant.EPOCH, Instant.now()));
                    int i = 0;
                    while (!stop.get()) {
                        for (int k = 0; k < 500; k++, i++) {
                            sink.emit(ev.write("decode-0", i & 4095, i >> 12, i / 64, "t" + (i % 5), 0, 16));
                        }
                        emitted[0] = i;
                        try {
                            Thread.sleep(5);
                        } catch (InterruptedException e) {
                            return;
                        }
                    }
                });
                Thread.sleep(1_000);
                long beforeOutage = count(ds);
                pg.stop();
                long journalAtStop = journal.bytesOnDisk();
                Thread.sleep(2_000);
                LineageShipper.Health during = shipper.health();
                long journalGrown = journal.bytesOnDisk() - journalAtStop;
                boolean acceptingDuringOutage = sink.accepting();
                pg.restart();
                Thread.sleep(1_000);
                stop.set(true);
                engine.join();
                assertThat(sink.flush(30, TimeUnit.SECONDS)).isTrue();
                long total = sink.emitted();
                long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
                while (count(ds) < total && System.nanoTime() < deadline) {
                    Thread.sleep(100);
                }
                System.out.printf("outage: %d events emitted, %d in db before the stop, journal grew %d bytes during it, "
                                + "shipper state during outage %s (lag %d bytes ~ %d events), after %s%n", total, beforeOutage,
                        journalGrown, during.state(), during.lagBytes(), during.lagEvents(), shipper.health().state());
                assertThat(beforeOutage).isPositive();
                assertThat(during.state()).isEqualTo(LineageShipper.State.RETRYING);
                assertThat(during.up()).isFalse();
                assertThat(during.lagBytes()).isPositive();
                assertThat(during.lagEvents()).isPositive();
                assertThat(during.lastError()).isNotBlank();
                assertThat(during.lastShipTime()).as("shipped before the outage").isNotNull();
                assertThat(journalGrown).isPositive();
                assertThat(acceptingDuringOutage).isTrue(); // the engine kept serving: the journal was under its cap
                assertThat(count(ds)).isEqualTo(total);
                assertThat(query(ds, "SELECT count(DISTINCT event_id) FROM kv_lineage")).isEqualTo(total);
                LineageShipper.Health after = shipper.health();
                assertThat(after.state()).isEqualTo(LineageShipper.State.SHIPPING);
                assertThat(after.up()).isTrue();
                assertThat(after.lastShipTime()).isAfter(during.lastErrorTime());
                assertThat(after.lastError()).as("kept for the operator").isNotNull();
                sink.close();
                shipper.close();
            }
        }
    }

    private static long count(DataSource ds) {
        try {
            return query(ds, "SELECT count(*) FROM kv_lineage");
        } catch (SQLException e) {
            return -1;
        }
    }

    private static long query(DataSource ds, String sql) throws SQLException {
        try (Connection c = ds.getConnection(); ResultSet rs = c.createStatement().executeQuery(sql)) {
            rs.next();
            return rs.getLong(1);
        }
    }
}
