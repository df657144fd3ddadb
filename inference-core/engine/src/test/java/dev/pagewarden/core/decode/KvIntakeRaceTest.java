package dev.pagewarden.core.decode;

import dev.pagewarden.core.backend.Backend;
import dev.pagewarden.core.context.EngineContext;
import dev.pagewarden.core.kv.KvPool;
import dev.pagewarden.core.kv.PageRef;
import dev.pagewarden.core.kv.PageState;
import dev.pagewarden.core.request.RequestState;
import dev.pagewarden.core.sequence.Sequence;
import dev.pagewarden.core.spi.Clock;
import dev.pagewarden.core.safety.SafetyListener;
import dev.pagewarden.core.transfer.TransferDone;
import org.junit.jupiter.api.Test;

import java.lang.reflect.Field;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicReference;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * An abort that races with the transfer's completion. The aborting thread looked the transfer up
 * just before the transfer thread verified it ("done") and removed it; it then takes the monitor
 * after that, while the transfer thread is between its verdict and returning the reservation. The
 * interleaving is forced with the transfer's own monitor (Object.wait releases it at that point).
 */
class KvIntakeRaceTest {

    @Test
    void abortLosingTheRaceWithDoneNeitherStrandsPagesNorEndsTheRequestTwice() throws Exception {
        {
            Backend backend = TransferFixture.cpuBackend();
            KvPool pool = TransferFixture.twoPagePool(backend);
            AtomicReference<Object> transfer = new AtomicReference<>();
            AtomicReference<Thread> aborter = new AtomicReference<>();
            KvIntake<Sequence> intake = new KvIntake<>(pool, EngineContext.of("decode", SafetyListener.NONE, Clock.SYSTEM),
                    Duration.ofSeconds(5), s -> { }, s -> {
                // the transfer thread, after its verdict, before it returns the reservation: let the aborter in
                Object t = transfer.get();
                synchronized (t) {
                    try {
                        while (aborter.get().isAlive()) {
                            t.wait(5);
                        }
                    } catch (InterruptedException e) {
                        Thread.currentThread().interrupt();
                    }
                }
                List<PageRef> pages = s.takeDecodePages();
                if (!pages.isEmpty()) {
                    pool.release(s.id(), pages);
                }
            }, () -> { });
            TransferFixture fixture = new TransferFixture(pool, intake, new int[] {1, 5, 6, 7}, 2);
            Sequence seq = fixture.seq;
            int generation = fixture.generation;
            assertThat(fixture.sendFrame(pool, intake, 0, 4)).isTrue();
            Field f = KvIntake.class.getDeclaredField("transfers");
            f.setAccessible(true);
            transfer.set(((Map<?, ?>) f.get(intake)).get(1L));
            seq.abortHook(() -> { }); // the test calls intake.abort itself, on its own thread
            seq.requestAbort("client went away");

            AtomicReference<Throwable> abortError = new AtomicReference<>();
            AtomicReference<Throwable> doneError = new AtomicReference<>();
            Object t = transfer.get();
            synchronized (t) {
                Thread a = new Thread(() -> {
                    try {
                        intake.abort(seq);
                    } catch (Throwable e) {
                        abortError.set(e);
                    }
                });
                aborter.set(a);
                a.start();
                while (a.getState() != Thread.State.BLOCKED) {
                    Thread.onSpinWait();
                }
                try {
                    intake.onDone(new TransferDone(1, generation, 4, 1));
                } catch (Throwable e) {
                    doneError.set(e);
                }
            }
            aborter.get().join(10_000);
            intake.onAck(1, generation);

            assertThat(abortError.get()).as("abort()").isNull();
            assertThat(doneError.get()).as("onDone()").isNull();
            assertThat(seq.state()).isInstanceOf(RequestState.Aborted.class);
            assertThat(pool.countByState().get(PageState.FREE)).as("pages after the ack: " + pool.countByState()).isEqualTo(2);
            assertThat(intake.inFlight()).isZero();
            pool.storage().close();
            backend.close();
        }
    }
}
