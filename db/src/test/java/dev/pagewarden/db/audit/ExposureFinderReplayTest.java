package dev.pagewarden.db.audit;

import dev.pagewarden.db.journal.Journal;
import dev.pagewarden.db.lineage.JournalingLineageSink;
import dev.pagewarden.db.lineage.LineageShipper;
import dev.pagewarden.db.testing.LineagePgTest;
import dev.pagewarden.lab.ReplayLab;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.Statement;
import java.time.Instant;
import java.util.List;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.TimeUnit;
import java.util.stream.Collectors;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The audit against the truth: the real engine runs every replay scenario with its lineage going through the
 * journal and COPY into PostgreSQL, and the exposure finder and the blast radius - plain SQL over the lineage - must
 * name exactly what the lab's isolation oracle (the storage's own writer shadow, no lineage) saw: the same readers,
 * the same (reader, writer) pairs, the same tenants on both sides. None for clean and detected runs; all of them
 * when the lab lets it happen; scrubbed pages after aborts and failed transfers are nobody's data; and two engine
 * starts writing into one database are never mixed up.
 */
class ExposureFinderReplayTest extends LineagePgTest {

    static List<String> scenarios() {
        return ReplayLab.scenarios().stream().map(ReplayLab.Scenario::name).toList();
    }

    @ParameterizedTest
    @MethodSource("scenarios")
    void exposureFinderAndBlastRadiusNameExactlyWhatTheOracleSaw(String scenario) throws Exception {
        truncate();
        Instant from = Instant.now().minusSeconds(5);
        ReplayLab.Result truth = run(new ReplayLab(model, 2026), scenario);
        Instant to = Instant.now().plusSeconds(5);

        LineageQueries queries = new LineageQueries(ds);
        List<Exposure> exposures = queries.exposures(from, to);
        for (Exposure e : exposures) {
            // tenant-scoped audit: the reader's tenant sees its request, the exposed tenant does not
            assertThat(queries.requestLineageOf(e.readerTenant(), e.readerRequest())).isPresent();
            assertThat(queries.requestLineageOf(e.exposedTenant(), e.readerRequest())).isEmpty();
        }
        agree(scenario, List.of(truth), exposures, queries.blastRadius(from, to, null, null));
        if (scenario.equals("clean") || !scenario.endsWith("-undetected")) {
            assertThat(exposures).isEmpty();
        } else if (!scenario.startsWith("corrupt-transfer-byte")) {
            // a corrupted byte is caught by the frame checksum or changes one value in place: no foreign page is read
            assertThat(exposures).isNotEmpty();
        }
    }

    /**
     * A restart between two runs: the second engine has new KV memory, its own block of request ids and a later epoch
     * base, and its lineage lands in the same tables as the first's. Over the window of both, the audit names each
     * run's own exposures and nothing that pairs a reader of one start with a writer of the other.
     */
    @Test
    void twoEngineStartsInOneDatabaseAreAuditedApart() throws Exception {
        truncate();
        Instant from = Instant.now().minusSeconds(5);
        ReplayLab.Result first = run(new ReplayLab(model, 2026), "incident-2026-undetected");
        ReplayLab.Result second = run(new ReplayLab(model, 2027, 1L << 32), "abort-during-transfer-undetected");
        Instant to = Instant.now().plusSeconds(5);
        assertThat(first.crossTenantReaders()).isNotEmpty();
        assertThat(second.crossTenantReaders()).isNotEmpty().allSatisfy(id -> assertThat(id).isGreaterThan(1L << 32));

        LineageQueries queries = new LineageQueries(ds);
        List<Exposure> exposures = queries.exposures(from, to);
        agree("restart", List.of(first, second), exposures, queries.blastRadius(from, to, null, null));
        assertThat(exposures).allSatisfy(e -> assertThat(e.readerRequest() > 1L << 32)
                .as("reader and writer of one start: " + e).isEqualTo(e.exposingRequest() > 1L << 32));
    }

    private static void agree(String what, List<ReplayLab.Result> truths, List<Exposure> exposures, BlastRadius radius) {
        Set<Long> readers = new TreeSet<>();
        Set<String> pairs = new TreeSet<>();
        Set<String> readerTenants = new TreeSet<>();
        Set<String> exposedTenants = new TreeSet<>();
        for (ReplayLab.Result t : truths) {
            readers.addAll(t.crossTenantReaders());
            for (ReplayLab.ForeignRead f : t.foreignReads()) {
                pairs.add(f.reader() + "<-" + f.writer());
                readerTenants.add(f.readerTenant());
                exposedTenants.add(f.writerTenant());
            }
        }
        Set<Long> found = exposures.stream().map(Exposure::readerRequest).collect(Collectors.toCollection(TreeSet::new));
        Set<String> foundPairs = exposures.stream().map(e -> e.readerRequest() + "<-" + e.exposingRequest())
                .collect(Collectors.toCollection(TreeSet::new));
        System.out.printf("%s: oracle readers %s, exposure finder %s%n", what, readers, found);
        assertThat(found).as(what + ": readers, exposure finder vs oracle").isEqualTo(readers);
        assertThat(foundPairs).as(what + ": (reader, writer) pairs, exposure finder vs oracle").isEqualTo(pairs);
        assertThat(radius.affectedResponses()).as(what + ": blast radius responses").isEqualTo(readers.size());
        assertThat(radius.responses().stream().map(BlastRadius.AffectedResponse::readerRequest).collect(Collectors.toSet()))
                .as(what + ": blast radius readers").isEqualTo(readers);
        assertThat(new TreeSet<>(radius.readerTenants())).as(what + ": receiving tenants").isEqualTo(readerTenants);
        assertThat(new TreeSet<>(radius.exposedTenants())).as(what + ": exposed tenants").isEqualTo(exposedTenants);
    }

    private ReplayLab.Result run(ReplayLab lab, String scenario) throws Exception {
        Path dir = Files.createTempDirectory("journal-" + scenario);
        try (Journal journal = Journal.open(new Journal.Config(dir, 1 << 20, 1L << 32))) {
            JournalingLineageSink sink = new JournalingLineageSink(journal, 1 << 14, 4096);
            LineageShipper shipper = shipper(journal);
            shipper.start();
            long before = lineageRows();
            ReplayLab.Result truth = lab.run(ReplayLab.scenario(scenario), sink);
            assertThat(sink.flush(30, TimeUnit.SECONDS)).isTrue();
            awaitShipped(before + sink.emitted());
            assertThat(lineageRows() - before).as("every lineage event arrived").isEqualTo(sink.emitted());
            sink.close();
            shipper.close();
            return truth;
        }
    }

    private static void truncate() throws Exception {
        try (Connection c = ds.getConnection(); Statement st = c.createStatement()) {
            st.execute("TRUNCATE kv_lineage"); // request ids restart with every engine of the same base
        }
    }
}
