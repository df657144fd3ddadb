package dev.pagewarden.db.audit;

import dev.pagewarden.core.engine.Engine;
import dev.pagewarden.core.engine.EngineConfig;
import dev.pagewarden.lab.ReplayLab;
import dev.pagewarden.core.receipt.PageEpochRead;
import dev.pagewarden.core.receipt.Receipt;
import dev.pagewarden.core.receipt.ReceiptBody;
import dev.pagewarden.core.receipt.ReceiptIssuer;
import dev.pagewarden.core.receipt.ReceiptKeys;
import dev.pagewarden.core.receipt.ServingIdentity;
import dev.pagewarden.core.request.GenerationRequest;
import dev.pagewarden.core.request.GenerationResult;
import dev.pagewarden.core.request.RequestHandle;
import dev.pagewarden.core.request.TokenListener;
import dev.pagewarden.core.sampling.SamplingParams;
import dev.pagewarden.core.spi.Clock;
import dev.pagewarden.core.spi.EngineMetrics;
import dev.pagewarden.core.safety.SafetyListener;
import dev.pagewarden.db.audit.ReceiptAudit.Status;
import dev.pagewarden.db.audit.ReceiptAudit.Verdict;
import dev.pagewarden.db.journal.Journal;
import dev.pagewarden.db.lineage.JournalingLineageSink;
import dev.pagewarden.db.lineage.LineageShipper;
import dev.pagewarden.db.testing.LineagePgTest;
import org.junit.jupiter.api.Test;

import java.nio.file.Files;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;

/** Receipts of the real engine checked against its lineage in real PostgreSQL. */
class ReceiptAuditTest extends LineagePgTest {

    @Test
    void cleanRequestsArePendingUntilShippedThenOkAndForgeriesMismatch() throws Exception {
        ReceiptKeys keys = ReceiptKeys.generate("pw");
        ReceiptAudit audit = new ReceiptAudit(ds, keys::publicKeys);
        List<GenerationResult> results = new ArrayList<>();
        List<Integer> promptLengths = new ArrayList<>();
        try (Journal journal = Journal.open(new Journal.Config(Files.createTempDirectory("receipt-j"), 1 << 20, 1L << 32))) {
            JournalingLineageSink sink = new JournalingLineageSink(journal, 1 << 14, 4096);
            EngineConfig cfg = EngineConfig.builder().backend("cpu").pageTokens(8).poolTokens(256, 256)
                    .contextWindow(128).build();
            try (Engine engine = Engine.builder(model, cfg).lineage(sink).receipts(keys).build()) {
                // two waves: the second reuses the pages the first freed (LIFO), so last-writer checks cross epochs
                for (int wave = 0; wave < 2; wave++) {
                    List<RequestHandle> hs = new ArrayList<>();
                    String[] tenants = {"acme", "globex", "initech"};
                    for (int i = 0; i < tenants.length; i++) {
                        int[] prompt = new int[9 + 6 * i + wave];
                        prompt[0] = 1;
                        for (int j = 1; j < prompt.length; j++) {
                            prompt[j] = 30 + (j * 7 + i * 11 + wave) % 400;
                        }
                        hs.add(engine.submit(new GenerationRequest(tenants[i], prompt, 18 + 4 * i,
                                new SamplingParams(0f, 1f, 0L, true)), TokenListener.NONE));
                        promptLengths.add(prompt.length);
                    }
                    for (RequestHandle h : hs) {
                        results.add(h.result().get(2, TimeUnit.MINUTES));
                    }
                }
            }
            assertThat(sink.flush(30, TimeUnit.SECONDS)).isTrue();
            // journaled, not shipped: pending, never ok
            for (GenerationResult r : results) {
                Verdict v = audit.verify(r.receipt());
                assertThat(v.status()).as("%s", v).isEqualTo(Status.PENDING);
            }
            long before = lineageRows();
            LineageShipper shipper = shipper(journal);
            shipper.start();
            awaitShipped(before + sink.emitted());
            assertThat(lineageRows()).isEqualTo(before + sink.emitted());
            sink.close();
            shipper.close();
        }
        LineageQueries queries = new LineageQueries(ds);
        for (int k = 0; k < results.size(); k++) {
            GenerationResult r = results.get(k);
            Receipt receipt = r.receipt();
            assertThat(receipt.body().version()).isEqualTo(3);
            // expected independently: the decode attended to positions [0, prompt + output - 1) on 8-slot pages
            int positions = promptLengths.get(k) + r.outputTokens().length - 1;
            List<Integer> finalSlots = slotsPerPage(positions, 8);
            assertThat(receipt.body().reads()).extracting(PageEpochRead::slots).isEqualTo(finalSlots);
            Verdict v = audit.verify(Receipt.fromCompact(receipt.toCompact()));
            assertThat(v.status()).as("%s", v).isEqualTo(Status.OK);
            assertThat(v.detail()).isEqualTo(finalSlots.size() + " page epochs read, " + positions
                    + " slots, every slot written by request " + r.requestId());
            // the lineage view: the same page epochs, final ranges, every slot written by the request itself
            // (this engine start's reads only: the other test's engine, on the same database, had the same ids)
            long start = receipt.body().reads().getFirst().lineageEventId() >> 40;
            List<PageRead> lineage = queries.requestLineage(r.requestId()).reads().stream()
                    .filter(p -> p.readEventId() >> 40 == start).toList();
            assertThat(lineage).extracting(PageRead::readEventId)
                    .isEqualTo(receipt.body().reads().stream().map(PageEpochRead::lineageEventId).toList());
            assertThat(lineage).extracting(p -> List.of(p.worker(), p.page(), p.epoch(), p.slotFrom(), p.slotTo()))
                    .isEqualTo(receipt.body().reads().stream()
                            .map(p -> List.<Object>of(p.worker(), p.page(), p.epoch(), 0, p.slots())).toList());
            assertThat(new RequestLineage(r.requestId(), lineage).isolated()).isTrue();
            for (PageRead p : lineage) {
                assertThat(p.writers()).isNotEmpty().allSatisfy(w -> {
                    assertThat(w.writerRequest()).isEqualTo(r.requestId());
                    assertThat(w.writerTenant()).isEqualTo(receipt.body().tenant());
                });
                assertThat(p.writers().getFirst().slotFrom()).isZero();
                assertThat(p.writers().getLast().slotTo()).isEqualTo(p.slotTo());
            }
            // the same request's receipt as the engine issued it before version 2: slots cached at each
            // page's first read (the prompt's, none on the pages the generation filled) - still OK
            List<PageEpochRead> firstReads = new ArrayList<>();
            for (int i = 0; i < finalSlots.size(); i++) {
                PageEpochRead p = receipt.body().reads().get(i);
                int cached = Math.max(0, Math.min(8, promptLengths.get(k) - 8 * i));
                firstReads.add(new PageEpochRead(p.worker(), p.page(), p.epoch(), cached, p.writerRequest(),
                        p.lineageEventId()));
            }
            ReceiptBody b = receipt.body();
            ReceiptIssuer issuer = new ReceiptIssuer(b.modelId(), keys);
            Receipt v1 = issuer.sign(ReceiptBody.v1(b.requestId(), b.tenant(), b.modelId(), firstReads, b.outputHash()));
            Verdict v1Verdict = audit.verify(Receipt.fromCompact(v1.toCompact()));
            assertThat(v1Verdict.status()).as("%s", v1Verdict).isEqualTo(Status.OK);
            // claims that do not match the lineage: v2 with the first-read ranges, v1 with the final ones
            ServingIdentity served = new ServingIdentity(b.nodeId(), b.replicaId());
            if (!firstReads.equals(b.reads())) {
                assertThat(audit.verify(issuer.sign(ReceiptBody.v2(b.requestId(), b.tenant(), b.modelId(), served,
                        firstReads, b.outputHash()))).status()).isEqualTo(Status.MISMATCH);
                assertThat(audit.verify(issuer.sign(ReceiptBody.v1(b.requestId(), b.tenant(), b.modelId(), b.reads(),
                        b.outputHash()))).status()).isEqualTo(Status.MISMATCH);
            }
        }
        // forgeries: a tampered signature, and correctly signed receipts that do not match the lineage
        Receipt r0 = results.getFirst().receipt();
        byte[] sig = r0.signature();
        sig[3] ^= 1;
        assertThat(audit.verify(new Receipt(r0.body(), r0.digest(), r0.keyId(), sig)).status()).isEqualTo(Status.MISMATCH);
        ReceiptIssuer forger = new ReceiptIssuer(r0.body().modelId(), keys);
        ReceiptBody b0 = r0.body();
        ReceiptBody b1 = results.get(1).receipt().body();
        List<PageEpochRead> shifted = b0.reads().stream().map(p -> new PageEpochRead(p.worker(), p.page(), p.epoch() + 1,
                p.slots(), p.writerRequest(), p.lineageEventId())).toList();
        List<PageEpochRead> fewer = b0.reads().subList(0, b0.reads().size() - 1);
        for (Receipt forged : List.of(
                forger.issue(b0.requestId(), b0.tenant(), b1.reads(), new int[0]),       // another request's reads
                forger.issue(b0.requestId(), "globex", b0.reads(), new int[0]),           // another tenant
                forger.issue(b0.requestId(), b0.tenant(), shifted, new int[0]),           // other epochs
                forger.issue(b0.requestId(), b0.tenant(), fewer, new int[0]))) {          // a read left out
            Verdict v = audit.verify(forged);
            assertThat(v.status()).as("%s %s: %s", forged, forged.body().reads(), v).isEqualTo(Status.MISMATCH);
        }
        // rotation: receipts signed with the old key still verify
        keys.rotate();
        assertThat(audit.verify(r0).status()).isEqualTo(Status.OK);
        keys.retire(r0.keyId());
        assertThat(audit.verify(r0).status()).isEqualTo(Status.MISMATCH);
    }

    /** Slot counts of positions [0, positions) on pages of {@code pageTokens}: full pages, then the rest. */
    static List<Integer> slotsPerPage(int positions, int pageTokens) {
        List<Integer> slots = new ArrayList<>();
        for (int left = positions; left > 0; left -= pageTokens) {
            slots.add(Math.min(pageTokens, left));
        }
        return slots;
    }

    @Test
    void undetectedIncidentReceiptsAreViolationsNamingTheForeignWriters() throws Exception {
        ReceiptKeys keys = ReceiptKeys.generate("pw");
        ReceiptAudit audit = new ReceiptAudit(ds, keys::publicKeys);
        List<GenerationResult> served = new CopyOnWriteArrayList<>();
        ReplayLab.Result truth;
        try (Journal journal = Journal.open(new Journal.Config(Files.createTempDirectory("receipt-lab"), 1 << 20, 1L << 32))) {
            JournalingLineageSink sink = new JournalingLineageSink(journal, 1 << 14, 4096);
            LineageShipper shipper = shipper(journal);
            shipper.start();
            long before = lineageRows();
            truth = new ReplayLab(model, 2026).run(ReplayLab.scenario("incident-2026-undetected"), sink, keys, served::add);
            assertThat(sink.flush(30, TimeUnit.SECONDS)).isTrue();
            awaitShipped(before + sink.emitted());
            assertThat(lineageRows()).isEqualTo(before + sink.emitted());
            sink.close();
            shipper.close();
        }
        Set<Long> expected = new TreeSet<>(truth.crossTenantReaders());
        Set<Long> violations = new TreeSet<>();
        Set<Long> crossTenant = new TreeSet<>();
        int ok = 0;
        for (GenerationResult r : served) {
            Verdict v = audit.verify(r.receipt());
            assertThat(v.status()).as("request %d: %s", r.requestId(), v).isIn(Status.OK, Status.VIOLATION);
            if (v.status() == Status.VIOLATION) {
                System.out.println("  " + r.requestId() + " (" + r.receipt().body().tenant() + "): " + v.detail());
            }
            if (v.status() == Status.OK) {
                ok++;
                continue;
            }
            violations.add(r.requestId());
            assertThat(v.foreignWrites()).isNotEmpty();
            assertThat(v.foreignWriters()).doesNotContain(r.requestId());
            String reader = r.receipt().body().tenant();
            if (v.foreignWrites().stream().anyMatch(f -> f.writerTenant() != null && !f.writerTenant().equals(reader))) {
                crossTenant.add(r.requestId());
            }
        }
        System.out.printf("incident-2026-undetected: served %d, receipts OK %d, VIOLATION %d (cross-tenant %s), "
                + "ground truth cross-tenant readers %s%n", served.size(), ok, violations.size(), crossTenant, expected);
        assertThat(expected).isNotEmpty();
        assertThat(crossTenant).as("receipts naming another tenant's writer vs the pools' ground truth")
                .isEqualTo(expected);
    }
}
