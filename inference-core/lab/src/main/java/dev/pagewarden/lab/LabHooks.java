package dev.pagewarden.lab;

import dev.pagewarden.core.backend.SequenceStep;
import dev.pagewarden.core.fault.FaultHooks;
import dev.pagewarden.core.kv.KvStorage;
import dev.pagewarden.core.policy.AbortRelease;
import dev.pagewarden.core.policy.CapacityCheck;
import dev.pagewarden.core.policy.PrefixLookup;
import dev.pagewarden.core.policy.PromptOverflow;

import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.util.List;

/**
 * The lab's fault switches as an engine's fault hooks, with an optional isolation oracle watching
 * every step. The only way a lab switch reaches an engine.
 */
public final class LabHooks implements FaultHooks {
    private final LabFaults faults;
    private final IsolationOracle oracle;

    LabHooks(LabFaults faults, IsolationOracle oracle) {
        this.faults = faults;
        this.oracle = oracle;
    }

    public LabFaults faults() {
        return faults;
    }

    /** The oracle watching this engine, or null. */
    public IsolationOracle oracle() {
        return oracle;
    }

    @Override
    public boolean checksOn() {
        return faults.detectorsOn();
    }

    @Override
    public CapacityCheck capacityCheck() {
        return faults.has(Fault.SKIP_CAPACITY_CHECK) ? new SkippedCapacityCheck() : CapacityCheck.ENFORCED;
    }

    @Override
    public PromptOverflow promptOverflow() {
        return faults.has(Fault.LEGACY_FINISHED_CHECK) ? new LegacyFinishedCheck() : PromptOverflow.REFUSE;
    }

    /**
     * {@link Fault#IMMEDIATE_RELEASE_ON_ABORT}, the 2026 sibling bug: an abort hands the decode pages back at once,
     * while the transfer's writes may still land on them.
     */
    @Override
    public AbortRelease abortRelease() {
        return faults.has(Fault.IMMEDIATE_RELEASE_ON_ABORT) ? AbortRelease.AbortedTransfer::releaseNow
                : AbortRelease.DEFER_UNTIL_ACK;
    }

    @Override
    public PrefixLookup prefixLookup() {
        return faults.has(Fault.IGNORE_CACHE_SCOPE) ? new IgnoredCacheScope() : PrefixLookup.OWN_SCOPE;
    }

    @Override
    public FrameFate beforeSend(long requestId, int index, int frames, MemorySegment staging) {
        if (faults.has(Fault.CORRUPT_TRANSFER_BYTE) && index == 0) {
            // the top exponent bit of the first K value (layer 0, position 0), flipped after the checksum was taken
            staging.set(ValueLayout.JAVA_BYTE, 3, (byte) (staging.get(ValueLayout.JAVA_BYTE, 3) ^ 0x40));
        }
        if (faults.has(Fault.DROP_TRANSFER_PAGE) && index == frames - 1) {
            return FrameFate.DROP;
        }
        return faults.has(Fault.DELAY_TRANSFER_WRITES) ? new FrameFate(true, faults.delaySteps()) : FrameFate.SEND;
    }

    @Override
    public boolean observesSteps() {
        return oracle != null;
    }

    @Override
    public void afterStep(String pool, List<SequenceStep> ran, KvStorage storage) {
        if (oracle != null) {
            oracle.observe(ran, storage);
        }
    }
}
