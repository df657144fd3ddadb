package dev.pagewarden.db.bench;

import dev.pagewarden.core.model.write.ModelGenerator;
import dev.pagewarden.core.engine.Engine;
import dev.pagewarden.core.engine.EngineConfig;
import dev.pagewarden.core.lineage.LineageEvent;
import dev.pagewarden.core.model.DType;
import dev.pagewarden.core.model.ModelConfig;
import dev.pagewarden.core.model.load.LoadedModel;
import dev.pagewarden.core.model.load.ModelLoader;
import dev.pagewarden.core.request.GenerationRequest;
import dev.pagewarden.core.request.RequestHandle;
import dev.pagewarden.core.request.TokenListener;
import dev.pagewarden.core.sampling.SamplingParams;
import dev.pagewarden.core.spi.Clock;
import dev.pagewarden.core.spi.EngineMetrics;
import dev.pagewarden.core.lineage.LineageSink;
import dev.pagewarden.core.safety.SafetyListener;
import dev.pagewarden.core.testing.RealModelTest;
import dev.pagewarden.core.testing.TestModels;
import dev.pagewarden.db.journal.Journal;
import dev.pagewarden.db.lineage.JournalingLineageSink;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

import java.lang.management.ManagementFactory;
import java.lang.management.ThreadMXBean;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.SplittableRandom;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.LongAdder;
import java.util.function.LongSupplier;

/**
 * Benchmark (not part of the normal test run): decode throughput of an engine whose every page life step
 * is journaled (JournalingLineageSink, fsync per group) against an engine with the sink disabled,
 * alternating the two in one process. The tiny real model makes events per unit of compute as high as
 * they get, so this is the worst case for the overhead.
 *
 * <p>Modes ({@code -Dpagewarden.bench.modes=aa,count,ab}, in that order by default):
 * <ul>
 *   <li>{@code aa} - both engines without a sink: the harness's own bias (which engine, which order);</li>
 *   <li>{@code count} - events built and handed to a counting sink, no ring, no writer thread: the engine-side cost;</li>
 *   <li>{@code ab} - the journaling sink against none: the real cost.</li>
 * </ul>
 * Each mode runs {@code -Dpagewarden.bench.pairs} (10) alternating pairs and prints the median ratio and
 * range. The journaled runs also print the engine's lineage event rate (events emitted per second of the
 * run), and a churn workload (short requests: the most allocate/release events per token) gives its peak.
 * Run: {@code ./mvnw -q -pl db test -Dpagewarden.excludedGroups=none -Dgroups=bench -Dtest=LineageOverheadBench}
 */
@Tag("bench")
class LineageOverheadBench {

    static final int BATCH = 8;
    static final int PAIRS = Integer.getInteger("pagewarden.bench.pairs", 10);

    static final class StepClock implements EngineMetrics {
        final List<long[]> steps = new ArrayList<>();

        @Override
        public synchronized void decodeStep(int batchSize, long nanos) {
            steps.add(new long[]{batchSize, System.nanoTime()});
        }

        /** Decode tokens/s over the whole run: tokens of all steps after the first, over the time they took. */
        synchronized double tokS() {
            long tokens = 0;
            for (int i = 1; i < steps.size(); i++) {
                tokens += steps.get(i)[0];
            }
            double seconds = (steps.getLast()[1] - steps.getFirst()[1]) / 1e9;
            steps.clear();
            return tokens / seconds;
        }
    }

    /** Events built and counted, nothing else: what the engine pays before any sink does work. */
    static final class CountingSink implements LineageSink {
        final LongAdder events = new LongAdder();

        @Override
        public void emit(LineageEvent event) {
            events.increment();
        }
    }

    /** Decode tokens/s, wall seconds, and the process CPU the run used (every thread, kernel time included). */
    record Run(double tokS, double seconds, long cpuNanos) {
    }

    static final com.sun.management.OperatingSystemMXBean OS =
            (com.sun.management.OperatingSystemMXBean) ManagementFactory.getOperatingSystemMXBean();

    static Run run(Engine e, StepClock clock, SplittableRandom rnd, int requests, int maxTokens) throws Exception {
        long t0 = System.nanoTime();
        long c0 = OS.getProcessCpuTime();
        List<RequestHandle> hs = new ArrayList<>();
        for (int i = 0; i < requests; i++) {
            int[] prompt = new int[40];
            prompt[0] = 1;
            for (int t = 1; t < prompt.length; t++) {
                prompt[t] = 3 + rnd.nextInt(500);
            }
            hs.add(e.submit(new GenerationRequest("t" + (i % 4), prompt, maxTokens, new SamplingParams(0f, 1f, 0, true)),
                    TokenListener.NONE));
        }
        for (RequestHandle h : hs) {
            h.result().get(5, TimeUnit.MINUTES);
        }
        double seconds = (System.nanoTime() - t0) / 1e9;
        return new Run(clock.tokS(), seconds, OS.getProcessCpuTime() - c0);
    }

    static Run run(Engine e, StepClock clock, SplittableRandom rnd) throws Exception {
        return run(e, clock, rnd, BATCH, 400);
    }

    @Test
    void journaledLineageCostsLittleDecodeThroughput() throws Exception {
        LoadedModel model = RealModelTest.stories();
        EngineConfig cfg = EngineConfig.builder().backend("cpu").maxBatch(BATCH).poolTokens(1024, BATCH * 448).build();
        for (String mode : System.getProperty("pagewarden.bench.modes", "aa,count,ab").split(",")) {
            measure(model, cfg, mode.strip());
        }
    }

    /**
     * The engine's event rate on a larger generated model (random weights, {@code dim 512, 8 layers}, ~25M
     * parameters): events per request do not depend on the model, tokens/s do, so the rate falls with size.
     * {@code -Dpagewarden.bench.generated=true} to run it.
     */
    @Test
    void engineEventRateOnAGeneratedModel() throws Exception {
        Assumptions.assumeTrue(Boolean.getBoolean("pagewarden.bench.generated"));
        Path dir = Files.createTempDirectory("lineage-bench-model");
        Path file = dir.resolve("gen-512x8.bin");
        ModelConfig shape = new ModelConfig(512, 1376, 8, 8, 8, 512, 512, 1e-5f, 10000f, true);
        ModelGenerator.generate(shape, DType.F32, ModelGenerator.FileFormat.BIN, 3, file, total -> done -> { });
        LoadedModel model = ModelLoader.load(file, TestModels.tok512()); // vocab 512 = the real tokenizer's size
        EngineConfig cfg = EngineConfig.builder().backend("cpu").maxBatch(BATCH).poolTokens(1024, BATCH * 448).build();
        CountingSink counting = new CountingSink();
        StepClock clock = new StepClock();
        SplittableRandom rnd = new SplittableRandom(7);
        try (Engine e = Engine.builder(model, cfg).metrics(clock).lineage(counting).build()) {
            run(e, clock, rnd, BATCH, 32);
            for (int i = 0; i < 3; i++) {
                long e0 = counting.events.sum();
                Run r = run(e, clock, rnd, BATCH, 200);
                long events = counting.events.sum() - e0;
                System.out.printf(Locale.ROOT, "generated 512x8: %.1f decode tok/s, %d events in %.2f s = %.0f events/s%n",
                        r.tokS(), events, r.seconds(), events / r.seconds());
            }
            long e0 = counting.events.sum();
            Run churn = run(e, clock, rnd, 64, 24);
            long events = counting.events.sum() - e0;
            System.out.printf(Locale.ROOT, "generated 512x8 churn (64 requests x 24 tokens): %d events in %.2f s = %.0f events/s%n",
                    events, churn.seconds(), events / churn.seconds());
        } finally {
            Files.deleteIfExists(file);
        }
    }

    private static void measure(LoadedModel model, EngineConfig cfg, String mode) throws Exception {
        // -Dpagewarden.bench.journalDir=/dev/shm puts the journal on tmpfs (fsync costs nothing): separates the
        // disk's share of the cost from the rest of the sink
        String parent = System.getProperty("pagewarden.bench.journalDir");
        Path dir = parent == null ? Files.createTempDirectory("lineage-bench")
                : Files.createTempDirectory(Path.of(parent), "lineage-bench");
        List<Double> ratios = new ArrayList<>();
        SplittableRandom rnd = new SplittableRandom(7);
        try (Journal journal = Journal.open(new Journal.Config(dir, 64 << 20, 8L << 30))) {
            Duration group = Duration.ofMillis(Long.getLong("pagewarden.bench.groupMillis",
                    JournalingLineageSink.DEFAULT_GROUP_COMMIT.toMillis()));
            JournalingLineageSink journaling = mode.equals("ab") ? new JournalingLineageSink(journal, 1 << 16, 4096, group) : null;
            ThreadMXBean threads = ManagementFactory.getThreadMXBean();
            LongSupplier writerCpu = journaling == null ? () -> 0L
                    : () -> threads.getThreadCpuTime(journaling.writerThread().threadId());
            CountingSink counting = new CountingSink();
            LineageSink sinkA = switch (mode) {
                case "aa" -> LineageSink.NONE;
                case "count" -> counting;
                case "ab" -> journaling;
                default -> throw new IllegalArgumentException("mode must be aa, count or ab: " + mode);
            };
            LongSupplier emitted = journaling != null ? journaling::emitted : counting.events::sum;
            StepClock on = new StepClock();
            StepClock off = new StepClock();
            List<Double> eventRates = new ArrayList<>();
            List<Double> cpuRatios = new ArrayList<>();
            List<Double> writerShares = new ArrayList<>();
            try (Engine a = Engine.builder(model, cfg).metrics(on).lineage(sinkA).build();
                 Engine b = Engine.builder(model, cfg).metrics(off).build()) {
                run(a, on, rnd);
                run(b, off, rnd);
                for (int i = 0; i < PAIRS; i++) {
                    double ra;
                    double rb;
                    long e0 = emitted.getAsLong();
                    Run runA;
                    Run runB;
                    long w0;
                    long w1;
                    if (i % 2 == 0) {
                        w0 = writerCpu.getAsLong();
                        runA = run(a, on, rnd);
                        w1 = writerCpu.getAsLong();
                        runB = run(b, off, rnd);
                    } else {
                        runB = run(b, off, rnd);
                        w0 = writerCpu.getAsLong();
                        runA = run(a, on, rnd);
                        w1 = writerCpu.getAsLong();
                    }
                    ra = runA.tokS();
                    rb = runB.tokS();
                    long events = emitted.getAsLong() - e0;
                    eventRates.add(events / runA.seconds());
                    ratios.add(ra / rb);
                    // same tokens in both runs: CPU per run compares CPU per token, less hostage to stolen time than tok/s
                    cpuRatios.add((double) runA.cpuNanos() / runB.cpuNanos());
                    writerShares.add((double) (w1 - w0) / runA.cpuNanos());
                    System.out.printf(Locale.ROOT, "%s pair %d: A %.1f tok/s, B %.1f tok/s, ratio %.4f; CPU A/B %.4f, writer %.2f%% "
                                    + "of A's CPU; A emitted %d events (%.0f/s)%n", mode, i, ra, rb, ra / rb,
                            cpuRatios.getLast(), 100 * writerShares.getLast(), events, events / runA.seconds());
                }
                if (!mode.equals("aa")) {
                    // churn: many short requests at full batch, so allocate/release events per token peak
                    long e0 = emitted.getAsLong();
                    Run churn = run(a, on, rnd, 64, 24);
                    long events = emitted.getAsLong() - e0;
                    System.out.printf(Locale.ROOT, "%s churn (64 requests x 24 tokens): %d events in %.2f s = %.0f events/s at %.0f tok/s%n",
                            mode, events, churn.seconds(), events / churn.seconds(), churn.tokS());
                }
            }
            if (journaling != null) {
                journaling.flush(30, TimeUnit.SECONDS);
                System.out.printf(Locale.ROOT, "lineage events emitted %d, journaled %d, producer waits %d%n",
                        journaling.emitted(), journaling.journaled(), journaling.producerWaits());
                journaling.close();
            }
            if (!mode.equals("aa")) {
                List<Double> r = eventRates.stream().sorted().toList();
                System.out.printf(Locale.ROOT, "%s engine event rate over whole runs: median %.0f/s (%.0f-%.0f)%n", mode,
                        median(r), r.getFirst(), r.getLast());
            }
            List<Double> cpu = cpuRatios.stream().sorted().toList();
            List<Double> w = writerShares.stream().sorted().toList();
            System.out.printf(Locale.ROOT, "%s process CPU per run A/B: median %.4f (%.4f-%.4f); journal writer thread: "
                    + "median %.2f%% of A's CPU (%.2f-%.2f%%), group window %s, journal in %s%n", mode, median(cpu), cpu.getFirst(),
                    cpu.getLast(), 100 * median(w), 100 * w.getFirst(), 100 * w.getLast(), group, dir.getParent());
        }
        List<Double> sorted = ratios.stream().sorted().toList();
        System.out.printf(Locale.ROOT, "%s decode throughput A/B: median ratio %.4f (min %.4f, max %.4f) over %d pairs%n",
                mode, median(sorted), sorted.getFirst(), sorted.getLast(), PAIRS);
    }

    static double median(List<Double> sorted) {
        int n = sorted.size();
        return n % 2 == 1 ? sorted.get(n / 2) : (sorted.get(n / 2 - 1) + sorted.get(n / 2)) / 2;
    }
}
