package dev.pagewarden.core.lineage;

import dev.pagewarden.core.engine.Engine;
import dev.pagewarden.core.engine.EngineConfig;
import dev.pagewarden.lab.LabFaults;
import dev.pagewarden.core.lineage.LineageEvent.Kind;
import dev.pagewarden.core.receipt.ServingIdentity;
import dev.pagewarden.core.request.GenerationRequest;
import dev.pagewarden.core.request.GenerationResult;
import dev.pagewarden.core.request.RequestHandle;
import dev.pagewarden.core.request.RequestRejectedException;
import dev.pagewarden.core.request.TokenListener;
import dev.pagewarden.core.sampling.SamplingParams;
import dev.pagewarden.core.spi.Clock;
import dev.pagewarden.core.spi.EngineMetrics;
import dev.pagewarden.core.lineage.LineageSink;
import dev.pagewarden.core.safety.SafetyListener;
import dev.pagewarden.core.testing.IsolationFixtures;
import dev.pagewarden.core.testing.RealModelTest;
import org.junit.jupiter.api.Test;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;

import static dev.pagewarden.core.testing.IsolationFixtures.eventually;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/** Every page life step emits exactly one lineage event, and the events tell a consistent story. */
class LineageEmissionTest extends RealModelTest {

    static final class Collecting implements LineageSink {
        final List<LineageEvent> events = new CopyOnWriteArrayList<>();
        volatile boolean accepting = true;

        @Override
        public void emit(LineageEvent event) {
            events.add(event);
        }

        @Override
        public boolean accepting() {
            return accepting;
        }

        List<LineageEvent> of(long request, String worker, Kind kind) {
            return events.stream().filter(e -> e.requestId() == request && e.worker().equals(worker) && e.kind() == kind)
                    .toList();
        }
    }

    static Engine engine(EngineConfig cfg, Collecting sink, String... labFaults) {
        return Engine.builder(model, cfg).lineage(sink).faultHooks(LabFaults.parse(List.of(labFaults)).hooks(null)).build();
    }

    /** Replays the events of each (pool, page) through the page life machine; any impossible step fails. */
    static void assertConsistentPageLives(List<LineageEvent> events) {
        Map<String, String> state = new HashMap<>();
        Map<String, Long> epoch = new HashMap<>();
        Map<String, Long> owner = new HashMap<>();
        for (LineageEvent e : events) {
            String key = e.worker() + "/" + e.page();
            String s = state.getOrDefault(key, "free");
            switch (e.kind()) {
                case ALLOCATE -> {
                    assertThat(s).as("allocate of a page that is not free: " + e).isEqualTo("free");
                    assertThat(e.epoch()).as("epoch grows: " + e).isGreaterThan(epoch.getOrDefault(key, 0L));
                    state.put(key, "owned");
                    epoch.put(key, e.epoch());
                    owner.put(key, e.requestId());
                }
                case WRITE, BIND_READ, READ_FINAL, VERIFY -> {
                    assertThat(s).as(e.kind() + " on a page not owned: " + e).isIn("owned", "deferred", "quarantined");
                    assertThat(e.epoch()).isEqualTo(epoch.get(key));
                    assertThat(e.requestId()).as("only the owner: " + e).isEqualTo(owner.get(key));
                }
                case TRANSFER_OUT, TRANSFER_IN -> assertThat(s).as(e.kind() + " " + e).isIn("owned", "deferred");
                case RELEASE -> {
                    assertThat(s).isEqualTo("owned");
                    state.put(key, "free");
                }
                case DEFER -> {
                    assertThat(s).isEqualTo("owned");
                    state.put(key, "deferred");
                }
                case DRAIN -> {
                    assertThat(s).isEqualTo("deferred");
                    state.put(key, "free");
                }
                case QUARANTINE -> {
                    assertThat(s).isIn("owned", "deferred");
                    state.put(key, "quarantined");
                }
                case SCRUB -> {
                    assertThat(s).isEqualTo("quarantined");
                    state.put(key, "free");
                }
            }
        }
        assertThat(state.values()).as("every page back to free at the end").containsOnly("free");
        Set<Long> ids = new HashSet<>();
        for (LineageEvent e : events) {
            assertThat(ids.add(e.id())).as("unique id " + e.id()).isTrue();
        }
    }

    @Test
    void aServedRequestLeavesItsWholeLineage() throws Exception {
        Collecting sink = new Collecting();
        int[] prompt = IsolationFixtures.prompt(40, 3);
        GenerationResult r;
        long id;
        try (Engine e = engine(EngineConfig.builder().backend("cpu").build(), sink)) {
            RequestHandle h = e.submit(new GenerationRequest("acme", prompt, 30, SamplingParams.greedy()), TokenListener.NONE);
            r = h.result().get(60, TimeUnit.SECONDS);
            id = h.id();
            assertThat(eventually(5_000, () -> e.transfersInFlight() == 0
                    && e.prefillPool().freePages() == e.prefillPool().capacityPages())).isTrue();
        }
        int promptPages = 3; // 40 tokens, 16 per page
        int decodePages = 5; // 40 + 30 tokens
        assertThat(sink.of(id, "prefill-0", Kind.ALLOCATE)).hasSize(promptPages);
        assertThat(sink.of(id, "prefill-0", Kind.WRITE)).extracting(LineageEvent::slotTo).containsOnly(16, 8);
        assertThat(sink.of(id, "prefill-0", Kind.TRANSFER_OUT)).hasSize(promptPages);
        assertThat(sink.of(id, "prefill-0", Kind.RELEASE)).hasSize(promptPages);
        assertThat(sink.of(id, "decode-0", Kind.ALLOCATE)).hasSize(decodePages);
        List<LineageEvent> in = sink.of(id, "decode-0", Kind.TRANSFER_IN);
        assertThat(in).hasSize(promptPages).allSatisfy(ev -> {
            assertThat(ev.peerWorker()).isEqualTo("prefill-0");
            assertThat(ev.peerPage()).isNotNegative();
        });
        // the transfer chain: each decode page's TRANSFER_IN names a prefill page that sent a TRANSFER_OUT with the same checksum
        Set<String> out = new HashSet<>();
        for (LineageEvent o : sink.of(id, "prefill-0", Kind.TRANSFER_OUT)) {
            out.add(o.page() + "/" + o.epoch() + "/" + o.checksum());
        }
        for (LineageEvent i : in) {
            assertThat(out).contains(i.peerPage() + "/" + i.peerEpoch() + "/" + i.checksum());
        }
        assertThat(sink.of(id, "decode-0", Kind.VERIFY)).hasSize(promptPages).allMatch(LineageEvent::ok);
        int positionsRead = prompt.length + r.outputTokens().length - 1;
        assertThat(sink.of(id, "decode-0", Kind.BIND_READ)).as("once per page read")
                .hasSize((positionsRead + 15) / 16);
        // the final range of each page read: full pages, then what the last step reached
        List<Integer> finalSlots = new ArrayList<>();
        for (int left = positionsRead; left > 0; left -= 16) {
            finalSlots.add(Math.min(16, left));
        }
        assertThat(sink.of(id, "decode-0", Kind.READ_FINAL)).as("once per page read, at the end")
                .extracting(LineageEvent::slotTo).isEqualTo(finalSlots);
        assertThat(sink.of(id, "decode-0", Kind.RELEASE)).hasSize(decodePages);
        assertConsistentPageLives(sink.events);
        // an engine without a configured node names the host, as its receipts do
        assertThat(sink.events).extracting(LineageEvent::node).containsOnly(ServingIdentity.hostName());
    }

    /** The node of an engine: its builder's, else its config's; every event names it, and its epochs start at the boot base. */
    @Test
    void everyEventNamesTheEnginesNodeAndEpochsStartAtTheBootBase() throws Exception {
        long bootBefore = dev.pagewarden.core.kv.KvPool.bootEpochBase(java.time.Instant.now());
        for (String[] names : new String[][] {{null, "node-from-config"}, {"replica-7", "node-from-config"}}) {
            Collecting sink = new Collecting();
            EngineConfig cfg = EngineConfig.builder().backend("cpu").nodeId(names[1]).build();
            Engine.Builder b = Engine.builder(model, cfg).lineage(sink);
            if (names[0] != null) {
                b.node(names[0]);
            }
            String expected = names[0] != null ? names[0] : names[1];
            try (Engine e = b.build()) {
                assertThat(e.node()).isEqualTo(expected);
                e.submit(new GenerationRequest("acme", IsolationFixtures.prompt(20, 1), 4, SamplingParams.greedy()),
                        TokenListener.NONE).result().get(60, TimeUnit.SECONDS);
            }
            assertThat(sink.events).isNotEmpty().extracting(LineageEvent::node).containsOnly(expected);
            assertThat(sink.events).filteredOn(ev -> ev.kind() == Kind.ALLOCATE)
                    .allSatisfy(ev -> assertThat(ev.epoch()).isGreaterThan(bootBefore));
        }
        assertThatThrownBy(() -> Engine.builder(model, EngineConfig.builder().build()).node("two words"))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("'two words'");
    }

    @Test
    void abortsFailuresAndTrafficKeepThePageStoryConsistent() throws Exception {
        Collecting sink = new Collecting();
        EngineConfig cfg = EngineConfig.builder().backend("cpu").build();
        try (Engine e = engine(cfg, sink, "delay-transfer-writes=5")) {
            List<RequestHandle> handles = new ArrayList<>();
            for (int i = 0; i < 12; i++) {
                RequestHandle h = e.submit(new GenerationRequest("t" + (i % 3), IsolationFixtures.prompt(10 + 9 * i, i),
                        8 + i, SamplingParams.greedy()), TokenListener.NONE);
                handles.add(h);
                if (i % 4 == 1) {
                    h.abort("test");
                }
            }
            for (RequestHandle h : handles) {
                try {
                    h.result().get(60, TimeUnit.SECONDS);
                } catch (ExecutionException ignored) {
                    // aborted ones
                }
            }
            assertThat(eventually(10_000, () -> e.transfersInFlight() == 0
                    && e.prefillPool().freePages() == e.prefillPool().capacityPages()
                    && e.decodePool().freePages() == e.decodePool().capacityPages())).isTrue();
        }
        assertThat(sink.events).extracting(LineageEvent::kind).contains(Kind.ALLOCATE, Kind.WRITE, Kind.TRANSFER_OUT,
                Kind.TRANSFER_IN, Kind.VERIFY, Kind.BIND_READ, Kind.RELEASE);
        assertConsistentPageLives(sink.events);
    }

    @Test
    void aFailedHandoffIsRecordedAsVerifyFailedQuarantineAndScrub() throws Exception {
        Collecting sink = new Collecting();
        EngineConfig cfg = EngineConfig.builder().backend("cpu").build();
        long id;
        try (Engine e = engine(cfg, sink, "corrupt-transfer-byte")) {
            RequestHandle h = e.submit(new GenerationRequest("acme", IsolationFixtures.prompt(20, 1), 5,
                    SamplingParams.greedy()), TokenListener.NONE);
            id = h.id();
            assertThatThrownBy(() -> h.result().get(60, TimeUnit.SECONDS)).isInstanceOf(ExecutionException.class);
            assertThat(eventually(5_000, () -> e.decodePool().freePages() == e.decodePool().capacityPages())).isTrue();
        }
        assertThat(sink.of(id, "decode-0", Kind.VERIFY)).isNotEmpty().noneMatch(LineageEvent::ok);
        assertThat(sink.of(id, "decode-0", Kind.QUARANTINE)).hasSameSizeAs(sink.of(id, "decode-0", Kind.ALLOCATE));
        assertThat(sink.of(id, "decode-0", Kind.SCRUB)).hasSameSizeAs(sink.of(id, "decode-0", Kind.ALLOCATE));
        assertConsistentPageLives(sink.events);
    }

    @Test
    void aFullAuditJournalPausesAdmissionWithARetryableError() throws Exception {
        Collecting sink = new Collecting();
        sink.accepting = false;
        try (Engine e = engine(EngineConfig.builder().backend("cpu").build(), sink)) {
            RequestHandle h = e.submit(new GenerationRequest("acme", IsolationFixtures.prompt(10, 1), 5,
                    SamplingParams.greedy()), TokenListener.NONE);
            assertThatThrownBy(() -> h.result().get(5, TimeUnit.SECONDS)).cause()
                    .isInstanceOfSatisfying(RequestRejectedException.class, ex -> {
                        assertThat(ex.code()).isEqualTo("audit_backpressure");
                        assertThat(ex.retryable()).isTrue();
                    });
            assertThat(e.decodePool().peakUsedPages()).isZero();
            sink.accepting = true;
            assertThat(e.submit(new GenerationRequest("acme", IsolationFixtures.prompt(10, 1), 5, SamplingParams.greedy()),
                    TokenListener.NONE).result().get(60, TimeUnit.SECONDS).outputTokens()).isNotEmpty();
        }
        assertThat(sink.events).isNotEmpty();
    }
}
