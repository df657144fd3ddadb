package dev.pagewarden.core.decode;

import dev.pagewarden.core.backend.Backend;
import dev.pagewarden.core.backend.BackendOptions;
import dev.pagewarden.core.backend.Backends;
import dev.pagewarden.core.kv.KvLayout;
import dev.pagewarden.core.kv.KvPool;
import dev.pagewarden.core.kv.PageRef;
import dev.pagewarden.core.kv.PageState;
import dev.pagewarden.core.lab.LabFaults;
import dev.pagewarden.core.model.LoadedModel;
import dev.pagewarden.core.request.GenerationRequest;
import dev.pagewarden.core.request.RequestState;
import dev.pagewarden.core.request.SamplingParams;
import dev.pagewarden.core.request.Sequence;
import dev.pagewarden.core.request.TokenListener;
import dev.pagewarden.core.safety.SafetyEvent;
import dev.pagewarden.core.safety.SafetyMonitor;
import dev.pagewarden.core.spi.Clock;
import dev.pagewarden.core.spi.EngineMetrics;
import dev.pagewarden.core.testing.IsolationFixtures;
import dev.pagewarden.core.transfer.InProcessKvTransport;
import dev.pagewarden.core.transfer.PageFrame;
import org.junit.jupiter.api.Test;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * A sender that stops part-way (reading a source page threw, say) sends no done message, only its
 * ack. The request must fail with kv_transfer_failed and its pages come back scrubbed, instead of
 * waiting in "transferring" for ever with its reservation held (seen on the GPU backend's first run,
 * where a page read failed on the device thread and the bench waited on its requests).
 */
class KvIntakeSenderStopTest {

    @Test
    void anAckWithoutDoneFailsTheRequestAndFreesItsPages() throws Exception {
        LoadedModel model = IsolationFixtures.stories();
        Backend backend = Backends.select("cpu").create(model, new BackendOptions(1));
        KvPool pool = new KvPool("decode-0", backend.allocateKv(KvLayout.of(model.config(), 4), 2));
        List<SafetyEvent> events = new CopyOnWriteArrayList<>();
        List<Sequence> released = new CopyOnWriteArrayList<>();
        KvIntake intake = new KvIntake(pool, LabFaults.NONE, new SafetyMonitor(events::add, EngineMetrics.NONE, Clock.SYSTEM),
                EngineMetrics.NONE, Clock.SYSTEM, Duration.ofMinutes(5), s -> { }, released::add, () -> { });
        Sequence seq = new Sequence(1, new GenerationRequest("t", new int[] {1, 5, 6, 7, 8, 9}, 4, SamplingParams.greedy()),
                TokenListener.NONE, 0);
        seq.moveTo(new RequestState.Admitted());
        seq.decodePages(pool.allocate(1, "t", 2), 0);
        seq.moveTo(new RequestState.Reserved());
        seq.moveTo(new RequestState.Prefilling());
        seq.moveTo(new RequestState.Transferring());
        int generation = seq.nextTransferGeneration();
        intake.expect(seq);
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment page = arena.allocate(pool.layout().pageBytes());
            assertThat(intake.onFrame(new PageFrame(1, generation, 0, 4, InProcessKvTransport.crc32c(page), page,
                    new PageRef(0, 1), "prefill-0", null))).isTrue();
        }
        assertThat(pool.countByState().get(PageState.OWNED)).isEqualTo(2);

        intake.onAck(1, generation); // the second frame and the done message never come

        assertThat(seq.state()).isInstanceOfSatisfying(RequestState.Failed.class, f -> {
            assertThat(f.code()).isEqualTo("kv_transfer_failed");
            assertThat(f.message()).contains("without completing it", "4 of 6 tokens");
        });
        assertThat(events).extracting(SafetyEvent::type).containsExactly(SafetyEvent.Type.TRANSFER_INCOMPLETE);
        assertThat(released).containsExactly(seq);
        assertThat(pool.countByState().get(PageState.FREE)).as("pages: " + pool.countByState()).isEqualTo(2);
        assertThat(intake.inFlight()).isZero();
        pool.storage().close();
        backend.close();
    }
}
