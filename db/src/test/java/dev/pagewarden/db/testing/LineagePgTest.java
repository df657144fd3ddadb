package dev.pagewarden.db.testing;

import dev.pagewarden.core.model.load.LoadedModel;
import dev.pagewarden.core.testing.RealModelTest;
import dev.pagewarden.db.journal.Journal;
import dev.pagewarden.db.lineage.LineageShipper;
import dev.pagewarden.db.lineage.PartitionManager;
import dev.pagewarden.db.schema.Migrations;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;

import javax.sql.DataSource;
import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.Statement;
import java.time.Duration;
import java.util.concurrent.TimeUnit;

/**
 * Base of the tests that run the real engine with its lineage shipped into a real PostgreSQL: one
 * embedded server per test class (migrated), the shared real model, a shipper factory, and a bounded
 * wait for every emitted event to arrive.
 */
public abstract class LineagePgTest {
    protected static TestPostgres pg;
    protected static DataSource ds;
    protected static LoadedModel model;

    @BeforeAll
    static void startPostgres() throws Exception {
        model = RealModelTest.stories();
        pg = TestPostgres.start("lineage");
        ds = pg.dataSource();
        Migrations.migrate(ds);
    }

    @AfterAll
    static void stopPostgres() throws Exception {
        if (pg != null) {
            pg.close();
        }
    }

    /** A shipper polling the journal every 20 ms. */
    protected static LineageShipper shipper(Journal journal) {
        return new LineageShipper(journal, ds, new PartitionManager(1, 30),
                new LineageShipper.Config(5_000, Duration.ofMillis(20), Duration.ofMillis(500), Duration.ofHours(1)));
    }

    /** Waits (at most a minute) until {@code events} lineage rows are in the database. */
    protected static void awaitShipped(long events) throws Exception {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
        while (lineageRows() < events && System.nanoTime() < deadline) {
            Thread.sleep(20);
        }
    }

    protected static long lineageRows() throws Exception {
        try (Connection c = ds.getConnection(); Statement st = c.createStatement();
             ResultSet rs = st.executeQuery("SELECT count(*) FROM kv_lineage")) {
            rs.next();
            return rs.getLong(1);
        }
    }
}
