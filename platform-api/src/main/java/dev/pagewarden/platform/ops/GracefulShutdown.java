package dev.pagewarden.platform.ops;

import dev.pagewarden.db.lineage.JournalingLineageSink;
import dev.pagewarden.platform.audit.SafetyEventRecorder;
import dev.pagewarden.platform.completion.Draining;
import dev.pagewarden.platform.completion.InferenceService;
import dev.pagewarden.platform.config.PagewardenProperties;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.springframework.context.SmartLifecycle;
import org.springframework.stereotype.Component;

import java.time.Duration;
import java.util.concurrent.TimeUnit;

/**
 * SIGTERM, in order: stop admitting (new requests get 503 overloaded), let running requests finish
 * within the grace period, abort the rest through the engine's abort path (their pages take the
 * deferred-release route), then flush the lineage journal and safety events so nothing goes
 * unaudited. Runs before the web server stops, so streams end properly.
 */
@Component
class GracefulShutdown implements SmartLifecycle {
    private static final Logger LOG = LoggerFactory.getLogger(GracefulShutdown.class);

    private final Draining draining;
    private final InferenceService inference;
    private final JournalingLineageSink lineage;
    private final SafetyEventRecorder safety;
    private final Duration grace;
    private volatile boolean running;

    GracefulShutdown(Draining draining, InferenceService inference, JournalingLineageSink lineage,
                     SafetyEventRecorder safety, PagewardenProperties properties) {
        this.draining = draining;
        this.inference = inference;
        this.lineage = lineage;
        this.safety = safety;
        this.grace = properties.shutdown().grace();
    }

    @Override
    public void start() {
        draining.end();
        running = true;
    }

    @Override
    public void stop() {
        draining.begin();
        LOG.info("shutting down: admission closed, waiting up to {} for {} running requests", grace, inference.running());
        try {
            if (!waitForIdle(grace)) {
                int aborted = inference.abortAll("server shutting down");
                LOG.warn("grace period over: aborted {} requests", aborted);
                waitForIdle(Duration.ofSeconds(10));
            }
            boolean journaled = lineage.flush(10, TimeUnit.SECONDS);
            boolean recorded = safety.flush(5_000);
            LOG.info("shutdown: lineage journal flushed={}, safety events recorded={}", journaled, recorded);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        } finally {
            running = false;
        }
    }

    private boolean waitForIdle(Duration limit) throws InterruptedException {
        long deadline = System.nanoTime() + limit.toNanos();
        while (inference.running() > 0 && System.nanoTime() < deadline) {
            Thread.sleep(20);
        }
        return inference.running() == 0;
    }

    @Override
    public boolean isRunning() {
        return running;
    }

    /** Stopped first: before the web server's own graceful shutdown and before the engine closes. */
    @Override
    public int getPhase() {
        return Integer.MAX_VALUE;
    }
}
