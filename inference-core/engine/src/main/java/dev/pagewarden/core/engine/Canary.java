package dev.pagewarden.core.engine;

import dev.pagewarden.core.request.GenerationRequest;
import dev.pagewarden.core.request.PrefixCaching;
import dev.pagewarden.core.request.TokenListener;
import dev.pagewarden.core.safety.SafetyEvent;
import dev.pagewarden.core.safety.SafetyMonitor;
import dev.pagewarden.core.sampling.SamplingParams;
import dev.pagewarden.core.spi.EngineMetrics;

import java.time.Duration;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;

/**
 * A known-answer request that runs through the whole path (admission, prefill, transfer, decode)
 * alongside real traffic. Greedy decoding is batch-invariant, so it must reproduce, token for
 * token, the golden output it gave at startup; anything else means something it read was not its own.
 */
final class Canary implements AutoCloseable {
    static final String TENANT = "pagewarden-canary";
    private static final int MAX_NEW = 16;

    private final Engine engine;
    private final SafetyMonitor safety;
    private final EngineMetrics metrics;
    private final int[] prompt;
    private final int[] golden;
    private final ScheduledExecutorService timer = Executors.newSingleThreadScheduledExecutor(r -> {
        Thread t = new Thread(r, "pagewarden-canary");
        t.setDaemon(true);
        return t;
    });

    private Canary(Engine engine, SafetyMonitor safety, EngineMetrics metrics, int[] prompt, int[] golden) {
        this.engine = engine;
        this.safety = safety;
        this.metrics = metrics;
        this.prompt = prompt;
        this.golden = golden;
    }

    static Canary start(Engine engine, Duration interval, SafetyMonitor safety, EngineMetrics metrics) {
        int vocab = engine.model().vocabSize();
        int len = Math.min(engine.contextWindow() - MAX_NEW, 2 * engine.config().pageTokens() + 3);
        int[] prompt = new int[Math.max(1, len)];
        for (int i = 0; i < prompt.length; i++) {
            prompt[i] = (int) ((7L * i + 3) % vocab); // fixed, spans several pages
        }
        int[] golden = run(engine, prompt);
        Canary c = new Canary(engine, safety, metrics, prompt, golden);
        long ms = interval.toMillis();
        c.timer.scheduleWithFixedDelay(c::check, ms, ms, TimeUnit.MILLISECONDS);
        return c;
    }

    private static int[] run(Engine engine, int[] prompt) {
        try {
            return engine.submit(new GenerationRequest(TENANT, prompt, MAX_NEW, new SamplingParams(0f, 1f, 0, true),
                    PrefixCaching.OFF),
                    TokenListener.NONE).result().get(5, TimeUnit.MINUTES).outputTokens();
        } catch (Exception e) {
            throw new IllegalStateException("canary request failed: " + e.getMessage(), e);
        }
    }

    void check() {
        int[] out;
        try {
            out = run(engine, prompt);
        } catch (RuntimeException e) {
            return; // shed (overload) or stopped: not a verdict on isolation
        }
        if (Arrays.equals(out, golden)) {
            metrics.canaryCheck("pass");
        } else {
            metrics.canaryCheck("fail");
            safety.report(SafetyEvent.Type.CANARY_MISMATCH, engine.decodePool().name(), 0, TENANT, List.of(),
                    "canary output " + Arrays.toString(out) + " differs from its golden output " + Arrays.toString(golden));
        }
    }

    @Override
    public void close() {
        timer.shutdownNow();
    }
}
