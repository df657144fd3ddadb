package dev.pagewarden.core.decode;

import dev.pagewarden.core.backend.Backend;
import dev.pagewarden.core.context.EngineContext;
import dev.pagewarden.core.kv.KvPool;
import dev.pagewarden.core.kv.PageState;
import dev.pagewarden.core.request.RequestState;
import dev.pagewarden.core.sequence.Sequence;
import dev.pagewarden.core.safety.SafetyEvent;
import dev.pagewarden.core.spi.Clock;
import org.junit.jupiter.api.Test;

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
        Backend backend = TransferFixture.cpuBackend();
        KvPool pool = TransferFixture.twoPagePool(backend);
        List<SafetyEvent> events = new CopyOnWriteArrayList<>();
        List<Sequence> released = new CopyOnWriteArrayList<>();
        KvIntake<Sequence> intake = new KvIntake<>(pool, EngineContext.of("decode", events::add, Clock.SYSTEM),
                Duration.ofMinutes(5), s -> { }, released::add, () -> { });
        TransferFixture transfer = new TransferFixture(pool, intake, new int[] {1, 5, 6, 7, 8, 9}, 2);
        Sequence seq = transfer.seq;
        assertThat(transfer.sendFrame(pool, intake, 0, 4)).isTrue();
        assertThat(pool.countByState().get(PageState.OWNED)).isEqualTo(2);

        intake.onAck(1, transfer.generation); // the second frame and the done message never come

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
