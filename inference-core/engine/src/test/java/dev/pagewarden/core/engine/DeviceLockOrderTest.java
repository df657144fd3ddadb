package dev.pagewarden.core.engine;

import dev.pagewarden.core.backend.Backend;
import dev.pagewarden.core.backend.BackendOptions;
import dev.pagewarden.core.backend.BackendProvider;
import dev.pagewarden.core.backend.SequenceStep;
import dev.pagewarden.core.backend.cpu.CpuBackendProvider;
import dev.pagewarden.core.fault.FaultHooks;
import dev.pagewarden.core.kv.KvLayout;
import dev.pagewarden.core.kv.KvPool;
import dev.pagewarden.core.kv.KvStorage;
import dev.pagewarden.core.kv.PageRef;
import dev.pagewarden.core.kv.PageState;
import dev.pagewarden.core.kv.PageTags;
import dev.pagewarden.core.kv.ReadCheck;
import dev.pagewarden.core.model.ModelConfig;
import dev.pagewarden.core.model.load.LoadedModel;
import dev.pagewarden.core.request.GenerationRequest;
import dev.pagewarden.core.request.GenerationResult;
import dev.pagewarden.core.request.RequestAbortedException;
import dev.pagewarden.core.request.RequestFailedException;
import dev.pagewarden.core.request.RequestHandle;
import dev.pagewarden.core.request.TokenListener;
import dev.pagewarden.core.sampling.SamplingParams;
import dev.pagewarden.core.testing.IsolationFixtures;
import dev.pagewarden.core.testing.IsolationFixtures.CountingMetrics;
import dev.pagewarden.core.testing.RealModelTest;
import org.junit.jupiter.api.Test;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.SplittableRandom;
import java.util.concurrent.Callable;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;

import static dev.pagewarden.core.testing.IsolationFixtures.eventually;
import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assertions.assertTimeoutPreemptively;

/**
 * The engine's lock order against a backend that behaves like a GPU: one device thread performs every
 * storage operation and every step, and reads, at the start of each step, the tags of the pages the
 * step touches - as the CUDA backend does. A thread that waits for that device thread while holding a
 * pool's lock deadlocks the engine the moment the device thread needs the same lock; on the CPU
 * backend, which never reads tags, such an order goes unseen.
 *
 * <p>Many requests of several tenants run at once with transfers delayed across decode steps (so
 * transfer writes land while steps run), aborts at every stage, and corrupted frames whose pages are
 * quarantined and scrubbed. The whole run is under a preemptive timeout, and every storage call is
 * checked for a pool lock held by its caller.
 */
class DeviceLockOrderTest extends RealModelTest {
    static final int WINDOW = 128;

    /** A device-like backend provider: everything its backends and storages do runs on one device thread. */
    static final class DeviceDouble implements BackendProvider {
        private final CpuBackendProvider cpu = new CpuBackendProvider();
        private final ExecutorService device = Executors.newSingleThreadExecutor(
                r -> Thread.ofPlatform().name("device-double").daemon().unstarted(r));
        private final AtomicReference<Thread> deviceThread = new AtomicReference<>();
        private final List<KvPool> watched = new CopyOnWriteArrayList<>();
        final List<String> callsUnderPoolLock = new CopyOnWriteArrayList<>();
        final Map<String, AtomicInteger> calls = new ConcurrentHashMap<>();

        /** The pools whose locks no caller may hold while it waits for the device. */
        void watch(KvPool... pools) {
            watched.addAll(List.of(pools));
        }

        int count(String op) {
            AtomicInteger c = calls.get(op);
            return c == null ? 0 : c.get();
        }

        /** Runs {@code work} on the device thread and waits for it, as a synchronous CUDA call does. */
        <T> T call(String op, Callable<T> work) {
            calls.computeIfAbsent(op, k -> new AtomicInteger()).incrementAndGet();
            for (KvPool p : watched) {
                if (Thread.holdsLock(p)) {
                    callsUnderPoolLock.add(op + " from " + Thread.currentThread().getName() + " holding " + p.name() + "'s lock");
                }
            }
            if (Thread.currentThread() == deviceThread.get()) {
                throw new IllegalStateException("the device thread called itself: " + op);
            }
            try {
                return device.submit(() -> {
                    deviceThread.set(Thread.currentThread());
                    return work.call();
                }).get();
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw new IllegalStateException("interrupted waiting for the device: " + op, e);
            } catch (ExecutionException e) {
                throw e.getCause() instanceof RuntimeException r ? r : new IllegalStateException(op, e.getCause());
            }
        }

        void run(String op, Runnable work) {
            call(op, () -> {
                work.run();
                return null;
            });
        }

        @Override
        public String name() {
            return "device-double";
        }

        @Override
        public boolean available() {
            return true;
        }

        @Override
        public String unavailableReason() {
            return "";
        }

        @Override
        public int priority() {
            return -1;
        }

        @Override
        public Backend create(LoadedModel model, BackendOptions options) {
            return new DeviceBackend(this, cpu.create(model, options));
        }

        void close() {
            device.shutdownNow();
        }
    }

    /** The CPU's arithmetic, run the way a GPU backend runs a step: on the device thread, tags read there first. */
    record DeviceBackend(DeviceDouble device, Backend cpu) implements Backend {
        @Override
        public String name() {
            return "device-double";
        }

        @Override
        public ModelConfig config() {
            return cpu.config();
        }

        @Override
        public KvStorage allocateKv(KvLayout layout, int pages) {
            return new DeviceStorage(device, device.call("allocate", () -> cpu.allocateKv(layout, pages)));
        }

        @Override
        public ReadCheck[] forward(List<SequenceStep> batch, KvStorage storage, PageTags tags, float[][] logits) {
            KvStorage inner = ((DeviceStorage) storage).inner();
            return device.call("forward", () -> {
                // the device's second line of checks: each sequence's pages against their tags, read on this thread
                ReadCheck[] verdicts = new ReadCheck[batch.size()];
                List<SequenceStep> ok = new ArrayList<>();
                List<float[]> okLogits = new ArrayList<>();
                for (int i = 0; i < batch.size(); i++) {
                    SequenceStep s = batch.get(i);
                    verdicts[i] = ReadCheck.CLEAN;
                    int pages = inner.layout().pagesFor(s.endPos());
                    for (int e = 0; e < pages && tags.checksOn(); e++) {
                        PageRef ref = s.pageTable().get(e);
                        KvPool.PageInfo info = tags.info(ref.page());
                        if (info.state() != PageState.OWNED || info.owner() != s.requestId() || info.epoch() != ref.epoch()) {
                            verdicts[i] = new ReadCheck(ReadCheck.Violation.OWNER_TAG_MISMATCH, ref.page(), ref.epoch(),
                                    "device tag of page " + ref.page() + ": " + info);
                            break;
                        }
                    }
                    if (verdicts[i].allowed()) {
                        ok.add(s);
                        okLogits.add(logits[i]);
                    }
                }
                ReadCheck[] ran = cpu.forward(ok, inner, tags, okLogits.toArray(new float[0][]));
                for (int i = 0, j = 0; i < batch.size(); i++) {
                    if (verdicts[i].allowed()) {
                        verdicts[i] = ran[j++];
                    }
                }
                return verdicts;
            });
        }

        @Override
        public void close() {
            device.run("close", cpu::close);
        }
    }

    /** Page memory on the device: every operation waits for the device thread. */
    record DeviceStorage(DeviceDouble device, KvStorage inner) implements KvStorage {
        @Override
        public KvLayout layout() {
            return inner.layout();
        }

        @Override
        public int pages() {
            return inner.pages();
        }

        // host buffers may be confined to the caller's thread: bytes cross through a staging copy, as on a GPU
        @Override
        public void readPage(int page, MemorySegment host) {
            MemorySegment staging = Arena.ofAuto().allocate(layout().pageBytes());
            device.run("readPage", () -> inner.readPage(page, staging));
            MemorySegment.copy(staging, 0, host, 0, staging.byteSize());
        }

        @Override
        public void writePage(int page, MemorySegment host) {
            MemorySegment staging = staged(host);
            device.run("writePage", () -> inner.writePage(page, staging));
        }

        @Override
        public void writeSlots(int page, MemorySegment host, int slots, long[] writers) {
            MemorySegment staging = staged(host);
            device.run("writeSlots", () -> inner.writeSlots(page, staging, slots, writers));
        }

        private MemorySegment staged(MemorySegment host) {
            MemorySegment staging = Arena.ofAuto().allocate(layout().pageBytes());
            MemorySegment.copy(host, 0, staging, 0, staging.byteSize());
            return staging;
        }

        @Override
        public void scrubPage(int page) {
            device.run("scrubPage", () -> inner.scrubPage(page));
        }

        @Override
        public long[] writers(int page) {
            return device.call("writers", () -> inner.writers(page));
        }

        @Override
        public void close() {
            device.run("closeStorage", inner::close);
        }
    }

    /**
     * Delays every frame by a few decode steps, so transfer writes land while steps run, and corrupts the
     * first frame of every fifth transfer, so its pages are quarantined and scrubbed.
     */
    static final class DelayAndCorrupt implements FaultHooks {
        final Set<Long> corrupted = ConcurrentHashMap.newKeySet();
        private final AtomicInteger transfers = new AtomicInteger();

        @Override
        public FrameFate beforeSend(long requestId, int index, int frames, MemorySegment staging) {
            if (index == 0 && transfers.incrementAndGet() % 5 == 0) {
                corrupted.add(requestId);
                staging.set(ValueLayout.JAVA_BYTE, 0, (byte) (staging.get(ValueLayout.JAVA_BYTE, 0) ^ 0x5a));
            }
            return new FrameFate(true, 2);
        }

        @Override
        public boolean observesSteps() {
            return false;
        }
    }

    record Template(int[] prompt, int maxNew) {
    }

    @Test
    void concurrentTransfersAbortsAndScrubsFinishOnADeviceLikeBackend() {
        long seed = Long.getLong("pagewarden.seed", 20261204L);
        SplittableRandom rnd = new SplittableRandom(seed);
        List<Template> templates = new ArrayList<>();
        for (int i = 0; i < 8; i++) {
            int len = 1 + rnd.nextInt(90);
            templates.add(new Template(IsolationFixtures.prompt(len, i), 1 + rnd.nextInt(Math.min(30, WINDOW - len))));
        }
        Map<Integer, int[]> isolated = new HashMap<>();
        for (int i = 0; i < templates.size(); i++) {
            isolated.put(i, alone(templates.get(i)));
        }
        DeviceDouble device = new DeviceDouble();
        DelayAndCorrupt faults = new DelayAndCorrupt();
        CountingMetrics metrics = new CountingMetrics();
        EngineConfig cfg = EngineConfig.builder().contextWindow(WINDOW).poolTokens(2 * WINDOW, 4 * WINDOW).maxBatch(8)
                .deferredReleaseTimeout(Duration.ofSeconds(30)).build();
        String context = "seed " + seed;
        try {
            assertTimeoutPreemptively(Duration.ofSeconds(90), () -> {
                try (Engine engine = Engine.builder(model, cfg).backend(device).metrics(metrics).faultHooks(faults).build()) {
                    device.watch(engine.prefillKv(), engine.decodeKv());
                    runWorkload(engine, rnd, templates, isolated, faults, context);
                    for (KvPool p : List.of(engine.prefillKv(), engine.decodeKv())) {
                        assertThat(eventually(20_000, () -> p.countByState().get(PageState.FREE) == p.capacityPages()))
                                .as(p.name() + " all free at the end: " + p.countByState() + " (" + context + ")").isTrue();
                    }
                    assertThat(eventually(20_000, () -> engine.transfersInFlight() == 0)).isTrue();
                }
            }, () -> "the engine did not finish on a device-like backend (" + context + "): a thread waits for the device "
                    + "thread while holding a lock that thread needs; storage calls under a pool lock: " + device.callsUnderPoolLock);
        } finally {
            device.close();
        }
        assertThat(device.callsUnderPoolLock).as("storage calls made while holding a pool's lock").isEmpty();
        assertThat(device.count("writeSlots")).as("transfer writes through the device").isPositive();
        assertThat(device.count("scrubPage")).as("scrubs through the device").isPositive();
        assertThat(device.count("forward")).isPositive();
        // a corrupted frame of a transfer already aborted fails nothing: its pages were deferred, not received
        assertThat(metrics.get("transferFailed")).isPositive().isLessThanOrEqualTo(faults.corrupted.size());
    }

    private void runWorkload(Engine engine, SplittableRandom rnd, List<Template> templates, Map<Integer, int[]> isolated,
                             DelayAndCorrupt faults, String context) throws Exception {
        int n = 40;
        int[] which = new int[n];
        int[] abortKind = new int[n];
        List<RequestHandle> handles = new ArrayList<>();
        ExecutorService aborter = Executors.newFixedThreadPool(2);
        try {
            for (int i = 0; i < n; i++) {
                which[i] = rnd.nextInt(templates.size());
                Template t = templates.get(which[i]);
                int roll = rnd.nextInt(100);
                abortKind[i] = roll < 55 ? 0 : roll < 65 ? 1 : roll < 80 ? 2 : 3;
                int abortAt = 1 + rnd.nextInt(t.maxNew());
                RequestHandle h = IsolationFixtures.submitAbortingAt(engine, new GenerationRequest("tenant-" + rnd.nextInt(4),
                        t.prompt(), t.maxNew(), SamplingParams.greedy()), abortKind[i] == 2 ? abortAt : 0);
                handles.add(h);
                if (abortKind[i] == 1) {
                    h.abort("abort right after submit");
                } else if (abortKind[i] == 3) {
                    IsolationFixtures.abortWhenTransferring(aborter, h);
                }
            }
            int served = 0;
            for (int i = 0; i < n; i++) {
                RequestHandle h = handles.get(i);
                String what = "request " + i + " (template " + which[i] + ", abort kind " + abortKind[i] + ", " + context + ")";
                try {
                    GenerationResult r = h.result().get(100, TimeUnit.SECONDS);
                    served++;
                    assertThat(faults.corrupted).as(what + " served though its transfer was corrupted").doesNotContain(h.id());
                    assertThat(r.outputTokens()).as(what + " equals its run alone").isEqualTo(isolated.get(which[i]));
                } catch (ExecutionException e) {
                    switch (e.getCause()) {
                        case RequestAbortedException ab -> assertThat(abortKind[i]).as(what + " aborted unasked").isNotZero();
                        case RequestFailedException f -> {
                            assertThat(f.code()).as(what).isEqualTo("kv_transfer_failed");
                            assertThat(faults.corrupted).as(what + " failed a clean transfer: " + f.getMessage()).contains(h.id());
                        }
                        default -> throw new AssertionError(what, e.getCause());
                    }
                }
            }
            assertThat(served).as(context).isPositive();
        } finally {
            aborter.shutdownNow();
        }
    }

    /** The template on a fresh CPU engine, alone. */
    private static int[] alone(Template t) {
        try (Engine e = Engine.builder(model, EngineConfig.builder().backend("cpu").contextWindow(WINDOW).build()).build()) {
            return e.submit(new GenerationRequest("alone", t.prompt(), t.maxNew(), SamplingParams.greedy()), TokenListener.NONE)
                    .result().get(60, TimeUnit.SECONDS).outputTokens();
        } catch (Exception e) {
            throw new AssertionError("the isolated run failed", e);
        }
    }
}
