package dev.pagewarden.core.safety;

import dev.pagewarden.core.kv.PageRef;
import dev.pagewarden.core.spi.Clock;
import dev.pagewarden.core.spi.EngineMetrics;
import dev.pagewarden.core.spi.SafetyListener;

import java.util.ArrayList;
import java.util.List;

/** Turns detector findings into {@link SafetyEvent}s for the listener, and counts isolation violations. */
public final class SafetyMonitor {
    private final SafetyListener listener;
    private final EngineMetrics metrics;
    private final Clock clock;

    public SafetyMonitor(SafetyListener listener, EngineMetrics metrics, Clock clock) {
        this.listener = listener;
        this.metrics = metrics;
        this.clock = clock;
    }

    public void report(SafetyEvent.Type type, String worker, long requestId, String tenant, List<PageRef> pages,
                       String details) {
        List<Integer> ids = new ArrayList<>(pages.size());
        List<Long> epochs = new ArrayList<>(pages.size());
        for (PageRef p : pages) {
            ids.add(p.page());
            epochs.add(p.epoch());
        }
        SafetyEvent event = new SafetyEvent(type, type.defaultSeverity(), worker, requestId, tenant, ids, epochs,
                clock.now(), details);
        if (type.defaultSeverity() == SafetyEvent.Severity.CRITICAL) {
            metrics.isolationViolation(type.label());
        }
        try {
            listener.onEvent(event);
        } catch (RuntimeException e) {
            // A failing listener must not turn a detected violation into an engine crash.
            System.err.println("pagewarden: safety listener failed on " + type + ": " + e);
        }
    }
}
