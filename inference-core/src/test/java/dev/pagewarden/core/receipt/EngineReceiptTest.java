package dev.pagewarden.core.receipt;

import dev.pagewarden.core.engine.Engine;
import dev.pagewarden.core.engine.EngineConfig;
import dev.pagewarden.core.lineage.LineageEvent;
import dev.pagewarden.core.lineage.LineageEvent.Kind;
import dev.pagewarden.core.request.GenerationRequest;
import dev.pagewarden.core.request.GenerationResult;
import dev.pagewarden.core.request.RequestHandle;
import dev.pagewarden.core.request.SamplingParams;
import dev.pagewarden.core.request.TokenListener;
import dev.pagewarden.core.spi.Clock;
import dev.pagewarden.core.spi.EngineMetrics;
import dev.pagewarden.core.spi.SafetyListener;
import dev.pagewarden.core.testing.RealModelTest;
import org.junit.jupiter.api.Test;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;

/** A finished request's receipt names exactly the page epochs its decode read (its BIND_READs) and its output. */
class EngineReceiptTest extends RealModelTest {

    @Test
    void receiptListsExactlyTheDecodeReadsAndTheOutputHash() throws Exception {
        List<LineageEvent> events = new CopyOnWriteArrayList<>();
        ReceiptKeys keys = ReceiptKeys.generate("test");
        EngineConfig cfg = EngineConfig.builder().backend("cpu").pageTokens(8).poolTokens(256, 512).contextWindow(128).build();
        List<GenerationResult> results = new ArrayList<>();
        List<RequestHandle> handles = new ArrayList<>();
        try (Engine engine = new Engine(model, cfg, EngineMetrics.NONE, SafetyListener.NONE, events::add, Clock.SYSTEM,
                keys)) {
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
                List<PageEpochRead> expected = events.stream()
                        .filter(e -> e.kind() == Kind.BIND_READ && e.requestId() == r.requestId())
                        .map(e -> new PageEpochRead(e.worker(), e.page(), e.epoch(), e.slotTo(), r.requestId(), e.id()))
                        .toList();
                assertThat(expected).isNotEmpty();
                assertThat(body.reads()).isEqualTo(expected);
                assertThat(body.reads()).allMatch(p -> p.worker().equals("decode-0"));
                assertThat(ReceiptVerifier.verifyCompact(receipt.toCompact(),
                        ReceiptKeys.parsePublished(keys.publishedKeys()))).isTrue();
            }
        }
    }

    @Test
    void engineWithoutSignerGivesNoReceipt() throws Exception {
        EngineConfig cfg = EngineConfig.builder().backend("cpu").pageTokens(8).poolTokens(256, 512).contextWindow(128).build();
        try (Engine engine = new Engine(model, cfg, EngineMetrics.NONE)) {
            GenerationResult r = engine.submit(new GenerationRequest("acme", new int[] {1, 40, 50}, 4,
                    SamplingParams.greedy()), TokenListener.NONE).result().get(1, TimeUnit.MINUTES);
            assertThat(r.receipt()).isNull();
        }
    }
}
