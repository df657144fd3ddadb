package dev.pagewarden.core.fault;

import dev.pagewarden.core.backend.SequenceStep;
import dev.pagewarden.core.kv.KvStorage;
import dev.pagewarden.core.policy.AbortRelease;
import dev.pagewarden.core.policy.CapacityCheck;
import dev.pagewarden.core.policy.PrefixLookup;
import dev.pagewarden.core.policy.PromptOverflow;

import java.lang.foreign.MemorySegment;
import java.util.List;

/**
 * Where a fault-injection harness (the incident-replay lab) may reach into an engine. Serving
 * engines run with {@link #NONE}: every answer below is the production behaviour, and every component
 * it hands out is the production one of its {@code core.policy} interface. The engine asks the
 * decisions once, when it is built, and keeps the answers in final fields; only the per-frame
 * and per-step calls run on the hot paths, and with {@link #NONE} they do nothing.
 *
 * <p>The engine imports no lab type: the lab implements this interface, and nothing else can turn
 * a check off.
 */
public interface FaultHooks {

    /** Production: no fault, every check on, nothing observed. */
    FaultHooks NONE = new FaultHooks() {
        @Override
        public boolean observesSteps() {
            return false;
        }
    };

    /** What happens to one transfer frame. {@code delaySteps}: decode steps it waits before it lands. */
    record FrameFate(boolean send, int delaySteps) {
        public static final FrameFate SEND = new FrameFate(true, 0);
        public static final FrameFate DROP = new FrameFate(false, 0);
    }

    /** False turns off every read-side and handoff check (to show what they stop). */
    default boolean checksOn() {
        return true;
    }

    /** What the engine does when its configured window exceeds what its pools hold for one request. */
    default CapacityCheck capacityCheck() {
        return CapacityCheck.ENFORCED;
    }

    /** What admission and prefill do with a prompt the prefill pool cannot hold. */
    default PromptOverflow promptOverflow() {
        return PromptOverflow.REFUSE;
    }

    /** What an abort does with the decode pages of a transfer that may still be writing to them. */
    default AbortRelease abortRelease() {
        return AbortRelease.DEFER_UNTIL_ACK;
    }

    /** Which cache scopes prefill searches for a prompt's cached prefix pages. */
    default PrefixLookup prefixLookup() {
        return PrefixLookup.OWN_SCOPE;
    }

    /**
     * Called by the sender for frame {@code index} of {@code frames} after its checksum was taken,
     * with the staging copy that is about to go on the wire (a harness may change its bytes).
     */
    default FrameFate beforeSend(long requestId, int index, int frames, MemorySegment staging) {
        return FrameFate.SEND;
    }

    /** Whether {@link #afterStep} wants to be called (false: the step guard skips building its argument). */
    default boolean observesSteps() {
        return true;
    }

    /**
     * Called after every forward step with the sequences that ran (their reads passed the checks),
     * before their writes are recorded, with the pool's storage: an observer reads the storage's
     * writer shadow here.
     */
    default void afterStep(String pool, List<SequenceStep> ran, KvStorage storage) {
    }

    /**
     * The end position up to which a step's writes are recorded in the pool's metadata: the step's own
     * end in production. A test of the oracle's independence records a wrong one, to show that the
     * detectors are fooled and the oracle is not. Clamped to the page table.
     */
    default int recordedWriteEnd(String pool, SequenceStep step) {
        return step.endPos();
    }
}
