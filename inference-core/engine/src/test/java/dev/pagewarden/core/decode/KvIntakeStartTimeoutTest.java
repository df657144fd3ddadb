package dev.pagewarden.core.decode;

import dev.pagewarden.core.backend.Backend;
import dev.pagewarden.core.context.EngineContext;
import dev.pagewarden.core.kv.KvPool;
import dev.pagewarden.core.kv.PageState;
import dev.pagewarden.core.request.RequestState;
import dev.pagewarden.core.safety.SafetyEvent;
import dev.pagewarden.core.spi.Clock;
import dev.pagewarden.core.sequence.Sequence;
import org.junit.jupiter.api.Test;

import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicLong;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * A transfer that is expected but never starts (the sender's connection, handshake or hello failed before
 * any page) fails closed once the start timeout passes: kv_transfer_failed, pages scrubbed and released, and
 * a page arriving afterwards refused. The clock is the test's, so no test waits.
 */
class KvIntakeStartTimeoutTest {
    private final AtomicLong now = new AtomicLong(1_000);
    private final Clock clock = new Clock() {
        @Override
        public long nanoTime() {
            return now.get();
        }

        @Override
        public Instant now() {
            return Instant.EPOCH;
        }
    };

    @Test
    void aTransferThatNeverStartsFailsAndItsPagesComeBackScrubbed() throws Exception {
        Backend backend = TransferFixture.cpuBackend();
        KvPool pool = TransferFixture.twoPagePool(backend);
        List<SafetyEvent> events = new CopyOnWriteArrayList<>();
        List<Sequence> released = new CopyOnWriteArrayList<>();
        KvIntake<Sequence> intake = new KvIntake<>(pool, EngineContext.of("decode", events::add, clock),
                Duration.ofMinutes(5), s -> { }, released::add, () -> { });
        intake.startTimeout(Duration.ofSeconds(2));
        TransferFixture transfer = new TransferFixture(pool, intake, new int[] {1, 5, 6, 7, 8, 9}, 2);
        Sequence seq = transfer.seq;

        now.addAndGet(Duration.ofMillis(1999).toNanos());
        intake.reap();
        assertThat(seq.state()).isInstanceOf(RequestState.Transferring.class);
        assertThat(pool.countByState().get(PageState.OWNED)).isEqualTo(2);

        now.addAndGet(Duration.ofMillis(1).toNanos());
        intake.reap();

        assertThat(seq.state()).isInstanceOfSatisfying(RequestState.Failed.class, f -> {
            assertThat(f.code()).isEqualTo("kv_transfer_failed");
            assertThat(f.message()).contains("no page", "2000 ms");
        });
        assertThat(events).extracting(SafetyEvent::type).containsExactly(SafetyEvent.Type.TRANSFER_INCOMPLETE);
        assertThat(released).containsExactly(seq);
        assertThat(pool.countByState().get(PageState.FREE)).as("pages: " + pool.countByState()).isEqualTo(2);
        assertThat(intake.inFlight()).isZero();

        // the sender shows up late: nothing of it lands
        assertThat(transfer.sendFrame(pool, intake, 0, 4)).isFalse();
        assertThat(events).extracting(SafetyEvent::type).endsWith(SafetyEvent.Type.LATE_WRITE_DROPPED);
        assertThat(pool.countByState().get(PageState.FREE)).isEqualTo(2);
        pool.storage().close();
        backend.close();
    }

    @Test
    void aTransferThatStartedIsNotFailedByTheStartTimeout() throws Exception {
        Backend backend = TransferFixture.cpuBackend();
        KvPool pool = TransferFixture.twoPagePool(backend);
        KvIntake<Sequence> intake = new KvIntake<>(pool, EngineContext.of("decode", e -> { }, clock),
                Duration.ofMinutes(5), s -> { }, s -> { }, () -> { });
        intake.startTimeout(Duration.ofSeconds(2));
        TransferFixture transfer = new TransferFixture(pool, intake, new int[] {1, 5, 6, 7, 8, 9}, 2);
        assertThat(transfer.sendFrame(pool, intake, 0, 4)).isTrue();

        now.addAndGet(Duration.ofSeconds(60).toNanos());
        intake.reap();

        assertThat(transfer.seq.state()).isInstanceOf(RequestState.Transferring.class);
        assertThat(intake.inFlight()).isEqualTo(1);
        pool.storage().close();
        backend.close();
    }

    /** A transfer expected untimed waits for its sender's word, then has the start timeout from there. */
    @Test
    void anUntimedTransferIsTimedFromTheSendersWord() throws Exception {
        Backend backend = TransferFixture.cpuBackend();
        KvPool pool = TransferFixture.twoPagePool(backend);
        KvIntake<Sequence> intake = new KvIntake<>(pool, EngineContext.of("decode", e -> { }, clock),
                Duration.ofMinutes(5), s -> { }, s -> { }, () -> { });
        intake.startTimeout(Duration.ofSeconds(2));
        TransferFixture transfer = new TransferFixture(pool, intake, new int[] {1, 5, 6, 7, 8, 9}, 2);
        intake.expect(transfer.seq, false); // as a decode node does: the prefill node may have a queue first

        now.addAndGet(Duration.ofSeconds(60).toNanos());
        intake.reap();
        assertThat(transfer.seq.state()).isInstanceOf(RequestState.Transferring.class);

        intake.senderStarting(1, transfer.generation);
        now.addAndGet(Duration.ofMillis(1999).toNanos());
        intake.reap();
        assertThat(transfer.seq.state()).isInstanceOf(RequestState.Transferring.class);
        now.addAndGet(Duration.ofMillis(1).toNanos());
        intake.reap();
        assertThat(transfer.seq.state()).isInstanceOf(RequestState.Failed.class);
        assertThat(pool.countByState().get(PageState.FREE)).isEqualTo(2);
        pool.storage().close();
        backend.close();
    }
}
