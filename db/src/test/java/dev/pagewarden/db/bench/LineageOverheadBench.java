package dev.pagewarden.db.bench;

import dev.pagewarden.core.engine.Engine;
import dev.pagewarden.core.engine.EngineConfig;
import dev.pagewarden.core.model.LoadedModel;
import dev.pagewarden.core.request.GenerationRequest;
import dev.pagewarden.core.request.RequestHandle;
import dev.pagewarden.core.request.SamplingParams;
import dev.pagewarden.core.request.TokenListener;
import dev.pagewarden.core.spi.Clock;
import dev.pagewarden.core.spi.EngineMetrics;
import dev.pagewarden.core.spi.LineageSink;
import dev.pagewarden.core.spi.SafetyListener;
import dev.pagewarden.core.testing.RealModelTest;
import dev.pagewarden.db.journal.Journal;
import dev.pagewarden.db.lineage.JournalingLineageSink;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.SplittableRandom;
import java.util.concurrent.TimeUnit;

/**
 * Benchmark (not part of the normal test run): decode throughput with every page life step journaled
 * (JournalingLineageSink, fsync per batch) against the sink disabled, alternating the two engines in
 * one process, 10 pairs. The tiny real model makes events per unit of compute as high as they get,
 * so this is the worst case for the overhead. Run:
 * {@code ./mvnw -q -pl db test -Dpagewarden.excludedGroups=none -Dgroups=bench -Dtest=LineageOverheadBench}
 */
@Tag("bench")
class LineageOverheadBench {

    static final int BATCH = 8;
    static final int PAIRS = 10;

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

    static double run(Engine e, StepClock clock, SplittableRandom rnd) throws Exception {
        List<RequestHandle> hs = new ArrayList<>();
        for (int i = 0; i < BATCH; i++) {
            int[] prompt = new int[40];
            prompt[0] = 1;
            for (int t = 1; t < prompt.length; t++) {
                prompt[t] = 3 + rnd.nextInt(500);
            }
            hs.add(e.submit(new GenerationRequest("t" + (i % 4), prompt, 400, new SamplingParams(0f, 1f, 0, true)),
                    TokenListener.NONE));
        }
        for (RequestHandle h : hs) {
            h.result().get(5, TimeUnit.MINUTES);
        }
        return clock.tokS();
    }

    @Test
    void journaledLineageCostsLittleDecodeThroughput() throws Exception {
        LoadedModel model = RealModelTest.stories();
        Path dir = Files.createTempDirectory("lineage-bench");
        EngineConfig cfg = EngineConfig.builder().backend("cpu").maxBatch(BATCH).poolTokens(1024, BATCH * 448).build();
        List<Double> ratios = new ArrayList<>();
        SplittableRandom rnd = new SplittableRandom(7);
        try (Journal journal = Journal.open(new Journal.Config(dir, 64 << 20, 8L << 30))) {
            JournalingLineageSink sink = new JournalingLineageSink(journal, 1 << 16, 4096);
            StepClock on = new StepClock();
            StepClock off = new StepClock();
            try (Engine withSink = new Engine(model, cfg, on, SafetyListener.NONE, sink, Clock.SYSTEM);
                 Engine without = new Engine(model, cfg, off, SafetyListener.NONE, LineageSink.NONE, Clock.SYSTEM)) {
                run(withSink, on, rnd);
                run(without, off, rnd);
                for (int i = 0; i < PAIRS; i++) {
                    double a;
                    double b;
                    if (i % 2 == 0) {
                        a = run(withSink, on, rnd);
                        b = run(without, off, rnd);
                    } else {
                        b = run(without, off, rnd);
                        a = run(withSink, on, rnd);
                    }
                    ratios.add(a / b);
                    System.out.printf(Locale.ROOT, "pair %d: with lineage %.1f tok/s, without %.1f tok/s, ratio %.4f%n",
                            i, a, b, a / b);
                }
            }
            sink.flush(30, TimeUnit.SECONDS);
            System.out.printf(Locale.ROOT, "lineage events emitted %d, journaled %d%n", sink.emitted(), sink.journaled());
            sink.close();
        }
        List<Double> sorted = ratios.stream().sorted().toList();
        double median = (sorted.get(PAIRS / 2 - 1) + sorted.get(PAIRS / 2)) / 2;
        System.out.printf(Locale.ROOT, "lineage on/off decode throughput: median ratio %.4f (min %.4f, max %.4f) over %d pairs%n",
                median, sorted.getFirst(), sorted.getLast(), PAIRS);
    }
}
