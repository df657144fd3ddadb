package dev.pagewarden.lab;

import dev.pagewarden.core.request.GenerationResult;
import dev.pagewarden.core.request.RequestAbortedException;
import dev.pagewarden.core.request.RequestHandle;
import dev.pagewarden.core.request.RequestRejectedException;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ExecutionException;

/**
 * The lab's count over finished requests: outcomes and detection from the engine, cross-tenant
 * reads and exposure from the {@link IsolationOracle} (never from detector state). Shared by the
 * offline {@link ReplayLab} and the platform's replay, so both count the same way.
 */
public final class LabTally {
    private final IsolationOracle oracle;

    public enum Kind { SERVED, REJECTED, ABORTED, FAILED }

    /** One request's outcome; {@code result} is set only when it was served. */
    public record Outcome(Kind kind, GenerationResult result, boolean exposed) {
    }

    private int served;
    private int rejected;
    private int aborted;
    private int failed;
    private long crossTenantReads;
    private int exposed;
    private int detected;
    private int undetectedExposed;
    private final List<Long> crossTenantReaders = new ArrayList<>();

    public LabTally(IsolationOracle oracle) {
        this.oracle = oracle;
    }

    /** Counts a finished request (its result must be complete) and says how it ended. */
    public Outcome add(RequestHandle h) throws InterruptedException {
        int foreign = oracle.crossTenantSlots(h.id());
        crossTenantReads += foreign;
        if (foreign > 0) {
            crossTenantReaders.add(h.id());
        }
        if (h.detected()) {
            detected++;
        }
        try {
            GenerationResult r = h.result().get();
            served++;
            // a delivered answer with a token sampled from another tenant's data
            boolean isExposed = oracle.tokensFromForeignData(h.id()) > 0;
            if (isExposed) {
                exposed++;
                if (!h.detected()) {
                    undetectedExposed++;
                }
            }
            return new Outcome(Kind.SERVED, r, isExposed);
        } catch (ExecutionException e) {
            Kind kind = switch (e.getCause()) {
                case RequestRejectedException rj -> Kind.REJECTED;
                case RequestAbortedException ab -> Kind.ABORTED;
                default -> Kind.FAILED;
            };
            switch (kind) {
                case REJECTED -> rejected++;
                case ABORTED -> aborted++;
                default -> failed++;
            }
            return new Outcome(kind, null, false);
        }
    }

    public int served() {
        return served;
    }

    public int rejected() {
        return rejected;
    }

    public int aborted() {
        return aborted;
    }

    public int failed() {
        return failed;
    }

    public long crossTenantReads() {
        return crossTenantReads;
    }

    public int exposed() {
        return exposed;
    }

    public int detected() {
        return detected;
    }

    public int undetectedExposed() {
        return undetectedExposed;
    }

    /** Ids of the requests that read another tenant's slots, in the order they were counted. */
    public List<Long> crossTenantReaders() {
        return List.copyOf(crossTenantReaders);
    }
}
