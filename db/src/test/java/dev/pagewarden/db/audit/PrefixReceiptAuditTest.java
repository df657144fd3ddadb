package dev.pagewarden.db.audit;

import dev.pagewarden.core.engine.Engine;
import dev.pagewarden.core.engine.EngineConfig;
import dev.pagewarden.core.receipt.Receipt;
import dev.pagewarden.core.receipt.ReceiptBody;
import dev.pagewarden.core.receipt.ReceiptIssuer;
import dev.pagewarden.core.receipt.ReceiptKeys;
import dev.pagewarden.core.receipt.ReusedPage;
import dev.pagewarden.core.receipt.ServingIdentity;
import dev.pagewarden.core.request.GenerationRequest;
import dev.pagewarden.core.request.GenerationResult;
import dev.pagewarden.core.request.PrefixCaching;
import dev.pagewarden.core.request.TokenListener;
import dev.pagewarden.core.sampling.SamplingParams;
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
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;

/** Receipts of requests that reused cached prefix pages, checked against the real engine's lineage in PostgreSQL. */
class PrefixReceiptAuditTest extends LineagePgTest {

    @Test
    void aReceiptListsTheReusedPagesWithTheirWriterAndTheAuditAcceptsThemOnlyAsTheLineageHasThem() throws Exception {
        ReceiptKeys keys = ReceiptKeys.generate("pw");
        ReceiptAudit audit = new ReceiptAudit(ds, keys::publicKeys);
        int[] prompt = new int[30];
        prompt[0] = 1;
        for (int j = 1; j < prompt.length; j++) {
            prompt[j] = 30 + (j * 13) % 400;
        }
        List<GenerationResult> results = new ArrayList<>();
        java.time.Instant from = java.time.Instant.now();
        try (Journal journal = Journal.open(new Journal.Config(Files.createTempDirectory("prefix-j"), 1 << 20, 1L << 32))) {
            JournalingLineageSink sink = new JournalingLineageSink(journal, 1 << 14, 4096);
            EngineConfig cfg = EngineConfig.builder().backend("cpu").pageTokens(8).poolTokens(256, 256)
                    .contextWindow(128).prefixCache(true).build();
            try (Engine engine = Engine.builder(model, cfg).lineage(sink).receipts(keys).build()) {
                for (String tenant : List.of("acme", "acme", "globex")) {
                    results.add(engine.submit(new GenerationRequest(tenant, prompt, 6, SamplingParams.greedy(),
                            PrefixCaching.on(null, "completion")), TokenListener.NONE).result().get(2, TimeUnit.MINUTES));
                }
            }
            assertThat(sink.flush(30, TimeUnit.SECONDS)).isTrue();
            long before = lineageRows();
            LineageShipper shipper = shipper(journal);
            shipper.start();
            awaitShipped(before + sink.emitted());
            sink.close();
            shipper.close();
        }
        // the reuse inside acme's scope is legitimate: the exposure finder reports nothing
        assertThat(new LineageQueries(ds).exposures(from, java.time.Instant.now())).isEmpty();
        GenerationResult writer = results.get(0);
        GenerationResult hit = results.get(1);
        GenerationResult otherTenant = results.get(2);
        assertThat(writer.receipt().body().version()).isEqualTo(3);
        assertThat(otherTenant.receipt().body().version()).isEqualTo(3);
        assertThat(otherTenant.cachedTokens()).isZero();
        Receipt receipt = Receipt.fromCompact(hit.receipt().toCompact());
        assertThat(receipt.body().version()).isEqualTo(4);
        assertThat(hit.cachedTokens()).isEqualTo(24);
        assertThat(receipt.body().reused()).extracting(ReusedPage::positionFrom, ReusedPage::positionTo, ReusedPage::writerRequest)
                .containsExactly(org.assertj.core.api.Assertions.tuple(0, 8, writer.requestId()),
                        org.assertj.core.api.Assertions.tuple(8, 16, writer.requestId()),
                        org.assertj.core.api.Assertions.tuple(16, 24, writer.requestId()));
        assertThat(receipt.toJson()).containsKey("reused_prefix_pages");
        for (GenerationResult r : results) {
            Verdict v = audit.verify(r.receipt());
            assertThat(v.status()).as("%s", v).isEqualTo(Status.OK);
        }

        // correctly signed claims the lineage does not back: another writer, a reuse left out
        ReceiptBody b = receipt.body();
        ReceiptIssuer issuer = new ReceiptIssuer(b.modelId(), keys);
        ServingIdentity served = new ServingIdentity(b.nodeId(), b.replicaId());
        List<ReusedPage> wrongWriter = new ArrayList<>(b.reused());
        ReusedPage first = wrongWriter.getFirst();
        wrongWriter.set(0, new ReusedPage(first.worker(), first.page(), first.epoch(), first.positionFrom(),
                first.positionTo(), otherTenant.requestId(), first.lineageEventId()));
        Verdict forged = audit.verify(issuer.sign(ReceiptBody.v4(b.requestId(), b.tenant(), b.modelId(), served, b.issuedAt(),
                b.reads(), wrongWriter, b.outputHash())));
        assertThat(forged.status()).as("%s", forged).isEqualTo(Status.MISMATCH);
        Verdict leftOut = audit.verify(issuer.sign(ReceiptBody.v4(b.requestId(), b.tenant(), b.modelId(), served, b.issuedAt(),
                b.reads(), b.reused().subList(1, 3), b.outputHash())));
        assertThat(leftOut.status()).as("%s", leftOut).isEqualTo(Status.MISMATCH);
        // the other tenant claiming the same reused pages: its reads are not those REUSE events
        ReceiptBody o = otherTenant.receipt().body();
        Verdict stolen = audit.verify(issuer.sign(ReceiptBody.v4(o.requestId(), o.tenant(), o.modelId(), served, o.issuedAt(),
                o.reads(), b.reused(), o.outputHash())));
        assertThat(stolen.status()).as("%s", stolen).isEqualTo(Status.MISMATCH);
    }
}
