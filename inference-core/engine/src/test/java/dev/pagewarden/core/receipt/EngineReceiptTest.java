package dev.pagewarden.core.receipt;

import dev.pagewarden.core.engine.Engine;
import dev.pagewarden.core.engine.EngineConfig;
import dev.pagewarden.core.lineage.LineageEvent;
import dev.pagewarden.core.lineage.LineageEvent.Kind;
import dev.pagewarden.core.request.FinishReason;
import dev.pagewarden.core.request.GenerationRequest;
import dev.pagewarden.core.request.GenerationResult;
import dev.pagewarden.core.request.RequestHandle;
import dev.pagewarden.core.request.TokenListener;
import dev.pagewarden.core.sampling.SamplingParams;
import dev.pagewarden.core.spi.Clock;
import dev.pagewarden.core.spi.EngineMetrics;
import dev.pagewarden.core.safety.SafetyListener;
import dev.pagewarden.core.testing.RealModelTest;
import org.junit.jupiter.api.Test;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;

/** A finished request's receipt names exactly the page epochs its decode read, with their final slot ranges, and its output. */
class EngineReceiptTest extends RealModelTest {

    @Test
    void receiptListsExactlyTheDecodeReadsAndTheOutputHash() throws Exception {
        List<LineageEvent> events = new CopyOnWriteArrayList<>();
        ReceiptKeys keys = ReceiptKeys.generate("test");
        EngineConfig cfg = EngineConfig.builder().backend("cpu").pageTokens(8).poolTokens(256, 512).contextWindow(128)
                .nodeId("node-a").replicaId("r-test").build();
        List<GenerationResult> results = new ArrayList<>();
        List<RequestHandle> handles = new ArrayList<>();
        try (Engine engine = Engine.builder(model, cfg).lineage(events::add).receipts(keys).build()) {
            assertThat(engine.modelId()).isEqualTo(model.source().getFileName().toString());
            String[] tenants = {"acme", "globex", "acme"};
            for (int i = 0; i < tenants.length; i++) {
                int[] prompt = new int[11 + 7 * i];
                prompt[0] = 1;
                for (int j = 1; j < prompt.length; j++) {
                    prompt[j] = 20 + (j * 13 + i) % 400;
                }
                handles.add(engine.submit(new GenerationRequest(tenants[i], prompt, 20 + 5 * i,
                        new SamplingParams(0f, 1f, 0L, true)), TokenListener.NONE));
            }
            for (RequestHandle h : handles) {
                results.add(h.result().get(2, TimeUnit.MINUTES));
            }
            for (int i = 0; i < handles.size(); i++) {
                GenerationResult r = results.get(i);
                Receipt receipt = r.receipt();
                assertThat(receipt).isNotNull();
                ReceiptBody body = receipt.body();
                assertThat(body.requestId()).isEqualTo(r.requestId());
                assertThat(body.tenant()).isEqualTo(tenants[i]);
                assertThat(body.modelId()).isEqualTo(engine.modelId());
                assertThat(body.outputHash()).isEqualTo(ReceiptCodec.outputHash(r.outputTokens()));
                assertThat(body.version()).isEqualTo(3);
                assertThat(body.issuedAt()).isNotNull();
                assertThat(body.nodeId()).isEqualTo("node-a");
                assertThat(body.replicaId()).isEqualTo("r-test");
                // each page epoch's BIND_READ (first read) names it; its READ_FINAL gives the final range
                List<LineageEvent> binds = events.stream()
                        .filter(e -> e.kind() == Kind.BIND_READ && e.requestId() == r.requestId()).toList();
                List<LineageEvent> finals = events.stream()
                        .filter(e -> e.kind() == Kind.READ_FINAL && e.requestId() == r.requestId()).toList();
                assertThat(finals).hasSameSizeAs(binds);
                List<PageEpochRead> expected = new ArrayList<>();
                for (int p = 0; p < binds.size(); p++) {
                    LineageEvent b = binds.get(p), f = finals.get(p);
                    assertThat(List.of(f.worker(), f.page(), f.epoch(), f.slotFrom()))
                            .isEqualTo(List.of(b.worker(), b.page(), b.epoch(), 0));
                    expected.add(new PageEpochRead(b.worker(), b.page(), b.epoch(), f.slotTo(), r.requestId(), b.id()));
                }
                assertThat(expected).isNotEmpty();
                assertThat(body.reads()).isEqualTo(expected);
                // independently: the decode attended to positions [0, prompt + output - 1) (the last token
                // is never fed back), so every page of them is read, full but the last
                assertThat(r.finishReason()).isEqualTo(FinishReason.LENGTH);
                assertThat(body.reads()).extracting(PageEpochRead::slots)
                        .isEqualTo(fullPagesThenRest(11 + 7 * i + r.outputTokens().length - 1, 8));
                assertThat(body.reads()).allMatch(p -> p.worker().equals("decode-0"));
                assertThat(ReceiptVerifier.verifyCompact(receipt.toCompact(),
                        ReceiptKeys.parsePublished(keys.publishedKeys()))).isTrue();
            }
        }
    }

    /** Slot counts of positions [0, positions) on pages of {@code pageTokens}: full pages, then the rest. */
    static List<Integer> fullPagesThenRest(int positions, int pageTokens) {
        List<Integer> slots = new ArrayList<>();
        for (int left = positions; left > 0; left -= pageTokens) {
            slots.add(Math.min(pageTokens, left));
        }
        return slots;
    }

    /**
     * A request whose generation spans several pages: the receipt covers every page epoch read with the
     * slots read there by the end (not the few cached at its first read: the decode pages had none).
     */
    @Test
    void multiPageRequestClaimsEveryPageEpochWithItsFinalRange() throws Exception {
        List<LineageEvent> events = new CopyOnWriteArrayList<>();
        ReceiptKeys keys = ReceiptKeys.generate("test");
        EngineConfig cfg = EngineConfig.builder().backend("cpu").pageTokens(4).poolTokens(256, 512).contextWindow(128)
                .build();
        int[] prompt = {1, 40, 50, 60, 70, 80};
        int maxTokens = 20;
        try (Engine engine = Engine.builder(model, cfg).lineage(events::add).receipts(keys).build()) {
            GenerationResult r = engine.submit(new GenerationRequest("acme", prompt, maxTokens,
                    new SamplingParams(0f, 1f, 0L, true)), TokenListener.NONE).result().get(2, TimeUnit.MINUTES);
            assertThat(r.outputTokens()).hasSize(maxTokens);
            // positions 0..24 were attended to: 6 prompt + 20 generated - 1; 4-token pages: 4,4,4,4,4,4,1
            List<PageEpochRead> reads = r.receipt().body().reads();
            assertThat(reads).extracting(PageEpochRead::slots).containsExactly(4, 4, 4, 4, 4, 4, 1);
            assertThat(reads).extracting(PageEpochRead::slots)
                    .isEqualTo(fullPagesThenRest(prompt.length + maxTokens - 1, 4));
            assertThat(r.receipt().body().nodeId()).isEqualTo(ServingIdentity.hostName());
            assertThat(r.receipt().body().replicaId()).matches("r-[0-9a-f]{16}");
            // the lineage: one READ_FINAL per page epoch read, with the receipt's range, before that page's RELEASE
            for (PageEpochRead read : reads) {
                List<LineageEvent> page = events.stream().filter(e -> e.requestId() == r.requestId()
                        && e.worker().equals(read.worker()) && e.page() == read.page() && e.epoch() == read.epoch()).toList();
                List<Kind> kinds = page.stream().map(LineageEvent::kind).toList();
                assertThat(kinds).containsSubsequence(Kind.BIND_READ, Kind.READ_FINAL, Kind.RELEASE);
                assertThat(page.stream().filter(e -> e.kind() == Kind.READ_FINAL))
                        .singleElement().satisfies(e -> assertThat(e.slotTo()).isEqualTo(read.slots()));
            }
            assertThat(ReceiptVerifier.verifyCompact(r.receipt().toCompact(),
                    ReceiptKeys.parsePublished(keys.publishedKeys()))).isTrue();
        }
    }

    @Test
    void engineWithoutSignerGivesNoReceipt() throws Exception {
        EngineConfig cfg = EngineConfig.builder().backend("cpu").pageTokens(8).poolTokens(256, 512).contextWindow(128).build();
        try (Engine engine = Engine.builder(model, cfg).build()) {
            GenerationResult r = engine.submit(new GenerationRequest("acme", new int[] {1, 40, 50}, 4,
                    SamplingParams.greedy()), TokenListener.NONE).result().get(1, TimeUnit.MINUTES);
            assertThat(r.receipt()).isNull();
        }
    }
}
