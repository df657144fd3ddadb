package dev.pagewarden.core.testing;

import dev.pagewarden.core.engine.InferenceEngine;
import dev.pagewarden.core.model.load.LoadedModel;
import dev.pagewarden.core.model.load.ModelLoader;
import dev.pagewarden.core.request.GenerationRequest;
import dev.pagewarden.core.request.RequestHandle;
import dev.pagewarden.core.request.RequestState;
import dev.pagewarden.core.request.TokenListener;
import dev.pagewarden.core.safety.SafetyEvent;
import dev.pagewarden.core.spi.Clock;
import dev.pagewarden.core.spi.EngineMetrics;

import java.time.Instant;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;
import java.util.concurrent.locks.LockSupport;
import java.util.function.BooleanSupplier;

/** Shared pieces of the isolation tests: the real model, counting metrics, recorded safety events, a test clock. */
public final class IsolationFixtures {
    private IsolationFixtures() {
    }

    /** The shared real model (mapped once per test JVM; do not close it). */
    public static LoadedModel stories() {
        return RealModelTest.stories();
    }

    /** A prompt of {@code len} tokens: BOS then a seeded pattern inside the vocabulary. */
    public static int[] prompt(int len, int seed) {
        int[] p = new int[len];
        p[0] = 1;
        for (int i = 1; i < len; i++) {
            p[i] = 3 + (int) ((i * 37L + seed * 101L) % 500);
        }
        return p;
    }

    /** Submits {@code request}, aborting it from its token listener when its {@code abortAt}-th token arrives (0: never). */
    public static RequestHandle submitAbortingAt(InferenceEngine engine, GenerationRequest request, int abortAt) {
        if (abortAt <= 0) {
            return engine.submit(request, TokenListener.NONE);
        }
        AtomicReference<RequestHandle> self = new AtomicReference<>();
        AtomicInteger tokens = new AtomicInteger();
        RequestHandle h = engine.submit(request, (id, tok) -> {
            if (tokens.incrementAndGet() == abortAt && self.get() != null) {
                self.get().abort("listener abort at token " + abortAt);
            }
        });
        self.set(h);
        return h;
    }

    /** Aborts {@code h} from {@code aborter} as soon as its KV is on the wire (the deferred release); gives up after 2 s. */
    public static void abortWhenTransferring(ExecutorService aborter, RequestHandle h) {
        aborter.submit(() -> {
            for (int k = 0; k < 20_000 && !h.state().isTerminal(); k++) {
                if (h.state() instanceof RequestState.Transferring) {
                    h.abort("abort during transfer");
                    return;
                }
                LockSupport.parkNanos(100_000);
            }
        });
    }

    /** Polls {@code condition} until true or {@code millis} pass; returns its last value. Never a timing assertion. */
    public static boolean eventually(long millis, BooleanSupplier condition) throws InterruptedException {
        long end = System.nanoTime() + millis * 1_000_000L;
        while (!condition.getAsBoolean()) {
            if (System.nanoTime() - end > 0) {
                return condition.getAsBoolean();
            }
            Thread.sleep(2);
        }
        return true;
    }

    /** Counts every metric call by a key such as {@code deferred:drained} or {@code rejected:context_length_exceeded}. */
    public static final class CountingMetrics implements EngineMetrics {
        private final Map<String, AtomicInteger> counts = new ConcurrentHashMap<>();

        public int get(String key) {
            AtomicInteger c = counts.get(key);
            return c == null ? 0 : c.get();
        }

        public Map<String, AtomicInteger> all() {
            return counts;
        }

        private void inc(String key) {
            counts.computeIfAbsent(key, k -> new AtomicInteger()).incrementAndGet();
        }

        @Override
        public void deferredRelease(String outcome) {
            inc("deferred:" + outcome);
        }

        @Override
        public void admissionRejected(String reason) {
            inc("rejected:" + reason);
        }

        @Override
        public void transferFailed() {
            inc("transferFailed");
        }

        @Override
        public void isolationViolation(String detector) {
            inc("violation:" + detector);
        }

        @Override
        public void lateWriteDropped() {
            inc("lateWriteDropped");
        }

        @Override
        public void prefillChunk(int tokens, long nanos) {
            inc("prefillChunk");
        }

        @Override
        public void canaryCheck(String result) {
            inc("canary:" + result);
        }

        @Override
        public void preemption(String outcome) {
            inc("preemption:" + outcome);
        }
    }

    /** Records every safety event. */
    public static final class Events implements dev.pagewarden.core.safety.SafetyListener {
        private final List<SafetyEvent> events = new CopyOnWriteArrayList<>();

        @Override
        public void onEvent(SafetyEvent event) {
            events.add(event);
        }

        public List<SafetyEvent> all() {
            return events;
        }

        public List<SafetyEvent> of(SafetyEvent.Type type) {
            return events.stream().filter(e -> e.type() == type).toList();
        }
    }

    /** A clock that moves only when the test says so. */
    public static final class TestClock implements Clock {
        private final AtomicLong nanos = new AtomicLong(1_000_000_000L);

        public void advanceMillis(long ms) {
            nanos.addAndGet(ms * 1_000_000L);
        }

        @Override
        public long nanoTime() {
            return nanos.get();
        }

        @Override
        public Instant now() {
            return Instant.ofEpochSecond(1_800_000_000L).plusNanos(nanos.get());
        }
    }
}
