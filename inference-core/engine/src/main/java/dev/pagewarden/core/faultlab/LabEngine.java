package dev.pagewarden.core.faultlab;

import dev.pagewarden.core.fault.FaultHooks;

import java.util.List;

/** One lab-mode engine's faults: the hooks it is built with, and replays of the lab's scenarios through it. */
public interface LabEngine {

    /** The fault labels the engine runs, in the lab's order. */
    List<String> faults();

    /** The hooks to build the engine with (its faults, and the oracle that watches its steps). */
    FaultHooks hooks();

    /**
     * Sends {@code scenario}'s workload through the engine built with {@link #hooks()} and returns what
     * happened to each request, with the lab's ground truth. IllegalArgumentException for an unknown
     * scenario; IllegalStateException when a request does not end.
     */
    Replay replay(String scenario, ReplayTarget target) throws InterruptedException;
}
