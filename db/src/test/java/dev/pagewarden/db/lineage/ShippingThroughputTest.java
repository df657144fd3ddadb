package dev.pagewarden.db.lineage;

import dev.pagewarden.core.lineage.LineageEvent;
import dev.pagewarden.db.evidence.LineageChain;
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
import java.time.Instant;
import java.time.temporal.ChronoUnit;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Prints events/s through sink -> journal (fsync per batch) and journal -> binary COPY -> PostgreSQL (unchained,
 * then through a chained shipper: batch records and row hashes) on this
 * machine. A measurement, not a gate: no timing assertion. {@code -Dpagewarden.bench.events=N} scales it.
 */
class ShippingThroughputTest {
    @TempDir
    Path tmp;

    @Test
    void measure() throws Exception {
        int n = Integer.getInteger("pagewarden.bench.events", 300_000);
        try (TestPostgres pg = TestPostgres.start("throughput")) {
            DataSource ds = pg.dataSource();
            Migrations.migrate(ds);
            try (Journal journal = Journal.open(new Journal.Config(tmp.resolve("journal"), 32 << 20, 1L << 34))) {
                JournalingLineageSink sink = new JournalingLineageSink(journal, 1 << 16, 8192);
                Ev ev = new Ev(31, ChronoUnit.MICROS.between(Instant.EPOCH, Instant.now()));
                long t0 = System.nanoTime();
                for (int i = 0; i < n; i++) {
                    sink.emit(ev.write("decode-0", i & 8191, i >> 13, i / 64, "tenant-" + (i % 7), i & 15, (i & 15) + 1));
                }
                long tEmit = System.nanoTime();
                assertThat(sink.flush(120, TimeUnit.SECONDS)).isTrue();
                long tJournal = System.nanoTime();
                sink.close();
                LineageShipper shipper = new LineageShipper(journal, ds, new PartitionManager(1, 30), LineageShipper.Config.defaults());
                long shipped = shipper.shipAvailable();
                long tShip = System.nanoTime();
                shipper.close();
                assertThat(shipped).isEqualTo(n);
                long rows;
                try (Connection c = ds.getConnection(); ResultSet rs = c.createStatement().executeQuery("SELECT count(*) FROM kv_lineage")) {
                    rs.next();
                    rows = rs.getLong(1);
                }
                assertThat(rows).isEqualTo(n);
                System.out.printf("throughput: %d events; emit %.0f ev/s (engine side, returns before I/O); "
                                + "sink->journal incl. fsync %.0f ev/s (%.1f MB journal); journal->COPY->PostgreSQL %.0f ev/s%n",
                        n, n / secs(t0, tEmit), n / secs(t0, tJournal), journal.bytesOnDisk() / 1e6, n / secs(tJournal, tShip));
            }
            // the same again through a chained shipper (batch records, row hashes from RETURNING)
            try (Journal journal = Journal.open(new Journal.Config(tmp.resolve("journal-chained"), 32 << 20, 1L << 34))) {
                Ev ev = new Ev(32, ChronoUnit.MICROS.between(Instant.EPOCH, Instant.now()));
                List<LineageEvent> batch = new ArrayList<>(8192);
                for (int i = 0; i < n; i++) {
                    batch.add(ev.write("decode-0", i & 8191, i >> 13, i / 64, "tenant-" + (i % 7), i & 15, (i & 15) + 1));
                    if (batch.size() == 8192 || i == n - 1) {
                        journal.append(batch);
                        batch.clear();
                    }
                }
                LineageShipper shipper = new LineageShipper(journal, ds, new PartitionManager(1, 30), LineageShipper.Config.defaults(),
                        new LineageChain("bench"));
                long t0 = System.nanoTime();
                assertThat(shipper.shipAvailable()).isEqualTo(n);
                long t1 = System.nanoTime();
                shipper.close();
                System.out.printf("throughput: chained journal->COPY->PostgreSQL %.0f ev/s%n", n / secs(t0, t1));
            }
        }
    }

    private static double secs(long a, long b) {
        return (b - a) / 1e9;
    }
}
