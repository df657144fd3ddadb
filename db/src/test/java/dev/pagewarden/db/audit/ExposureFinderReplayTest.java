package dev.pagewarden.db.audit;

import dev.pagewarden.lab.ReplayLab;
import dev.pagewarden.db.journal.Journal;
import dev.pagewarden.db.lineage.JournalingLineageSink;
import dev.pagewarden.db.lineage.LineageShipper;
import dev.pagewarden.db.testing.LineagePgTest;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.Statement;
import java.time.Instant;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The audit against the truth: the real engine runs incident-replay scenarios with its lineage going
 * through the journal and COPY into PostgreSQL, and the exposure finder - plain SQL over the lineage -
 * must name exactly the requests that the pools' own bookkeeping says read another tenant's data:
 * none for clean and detected runs, all of them (precision and recall 100%) when the lab lets it happen.
 */
class ExposureFinderReplayTest extends LineagePgTest {

    @ParameterizedTest
    @ValueSource(strings = {"incident-2026-undetected", "clean", "incident-2026", "drop-transfer-page",
            "drop-transfer-page-undetected", "abort-during-transfer", "abort-during-transfer-undetected"})
    void exposureFinderNamesExactlyTheRequestsThatReadForeignData(String scenario) throws Exception {
        try (Connection c = ds.getConnection(); Statement st = c.createStatement()) {
            st.execute("TRUNCATE kv_lineage"); // request ids restart with every engine
        }
        Path dir = Files.createTempDirectory("journal-" + scenario);
        ReplayLab.Result truth;
        Instant from = Instant.now().minusSeconds(5);
        try (Journal journal = Journal.open(new Journal.Config(dir, 1 << 20, 1L << 32))) {
            JournalingLineageSink sink = new JournalingLineageSink(journal, 1 << 14, 4096);
            LineageShipper shipper = shipper(journal);
            shipper.start();
            truth = new ReplayLab(model, 2026).run(ReplayLab.scenario(scenario), sink);
            assertThat(sink.flush(30, TimeUnit.SECONDS)).isTrue();
            awaitShipped(sink.emitted());
            assertThat(lineageRows()).as("every lineage event arrived").isEqualTo(sink.emitted());
            sink.close();
            shipper.close();
        }
        Set<Long> found = new TreeSet<>();
        LineageQueries queries = new LineageQueries(ds);
        for (Exposure e : queries.exposures(from, Instant.now().plusSeconds(5))) {
            found.add(e.readerRequest());
            // tenant-scoped audit: the reader's tenant sees its request, the exposed tenant does not
            assertThat(queries.requestLineageOf(e.readerTenant(), e.readerRequest())).isPresent();
            assertThat(queries.requestLineageOf(e.exposedTenant(), e.readerRequest())).isEmpty();
        }
        Set<Long> expected = new TreeSet<>(truth.crossTenantReaders());
        System.out.printf("%s: ground truth readers %s, exposure finder %s%n", scenario, expected, found);
        for (long missing : expected) {
            if (!found.contains(missing)) {
                System.out.println("  missed " + missing + ": " + new LineageQueries(ds).requestLineage(missing));
            }
        }
        assertThat(found).as("exposure finder vs the pools' ground truth").isEqualTo(expected);
        if (scenario.equals("clean") || !scenario.endsWith("-undetected")) {
            assertThat(found).isEmpty();
        } else {
            assertThat(found).isNotEmpty();
        }
    }
}
