package dev.pagewarden.core.safety;

import dev.pagewarden.core.kv.PageRef;
import dev.pagewarden.core.kv.ReadCheck;
import dev.pagewarden.core.spi.Clock;
import dev.pagewarden.core.spi.EngineMetrics;

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

    /** A read the step guard (or the device) refused: reported by the detector of the same name, with the page it named. */
    public void refusedRead(ReadCheck check, String worker, long requestId, String tenant) {
        SafetyEvent.Type type = switch (check.violation()) {
            case OWNER_TAG_MISMATCH -> SafetyEvent.Type.OWNER_TAG_MISMATCH;
            case FREE_PAGE_READ -> SafetyEvent.Type.FREE_PAGE_READ;
            case UNWRITTEN_SLOT_READ -> SafetyEvent.Type.UNWRITTEN_SLOT_READ;
        };
        report(type, worker, requestId, tenant, List.of(new PageRef(check.page(), check.epoch())), check.details());
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
