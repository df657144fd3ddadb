package dev.pagewarden.db.testing;

import dev.pagewarden.core.lineage.LineageEvent;
import dev.pagewarden.db.journal.Journal;
import dev.pagewarden.db.lineage.LineageShipper;
import dev.pagewarden.db.lineage.PartitionManager;

import javax.sql.DataSource;
import java.nio.file.Path;
import java.util.List;

/** Lineage events into a test's database the way a replica puts them there: its own journal, then the COPY shipper. */
public final class TestShipping {
    private TestShipping() {
    }

    /** Appends {@code events} to a new journal in {@code dir} and ships all of it. */
    public static void ship(DataSource ds, Path dir, PartitionManager partitions, List<LineageEvent> events) throws Exception {
        try (Journal j = Journal.open(new Journal.Config(dir, 8 << 20, 1L << 32))) {
            j.append(events);
            LineageShipper s = new LineageShipper(j, ds, partitions, LineageShipper.Config.defaults());
            s.shipAvailable();
            s.close();
        }
    }
}
