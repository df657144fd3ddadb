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
import dev.pagewarden.core.safety.SafetyMonitor;
import dev.pagewarden.core.spi.Clock;
import dev.pagewarden.core.spi.EngineMetrics;
import dev.pagewarden.core.spi.SafetyListener;
import dev.pagewarden.core.testing.IsolationFixtures;
import dev.pagewarden.core.transfer.InProcessKvTransport;
import dev.pagewarden.core.transfer.PageFrame;
import dev.pagewarden.core.transfer.TransferDone;
import org.junit.jupiter.api.Test;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
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
            LoadedModel model = IsolationFixtures.stories();
            Backend backend = Backends.select("cpu").create(model, new BackendOptions(1));
            KvPool pool = new KvPool("decode-0", backend.allocateKv(KvLayout.of(model.config(), 4), 2));
            AtomicReference<Object> transfer = new AtomicReference<>();
            AtomicReference<Thread> aborter = new AtomicReference<>();
            KvIntake intake = new KvIntake(pool, LabFaults.NONE, new SafetyMonitor(SafetyListener.NONE, EngineMetrics.NONE,
                    Clock.SYSTEM), EngineMetrics.NONE, Clock.SYSTEM, Duration.ofSeconds(5), s -> { }, s -> {
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
            Sequence seq = new Sequence(1, new GenerationRequest("t", new int[]{1, 5, 6, 7}, 4, SamplingParams.greedy()),
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
                        new dev.pagewarden.core.kv.PageRef(0, 1), "prefill-0", null))).isTrue();
            }
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
