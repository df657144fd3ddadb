package dev.pagewarden.core.context;

import dev.pagewarden.core.fault.FaultHooks;
import dev.pagewarden.core.lineage.LineageIds;
import dev.pagewarden.core.lineage.LineageSink;
import dev.pagewarden.core.safety.SafetyListener;
import dev.pagewarden.core.safety.SafetyMonitor;
import dev.pagewarden.core.spi.Clock;
import dev.pagewarden.core.spi.EngineMetrics;

/**
 * What every part of one engine (or one engine node) shares: its name, its fault hooks and the switches they
 * set, where safety events, metrics and page life steps go, and its clock. Built once per engine and handed to
 * its pools, workers and intake in place of a parameter each.
 *
 * @param node       the node the engine's pools belong to, as lineage events and receipts name it
 * @param hooks      fault injection; {@link FaultHooks#NONE} in production
 * @param safety     every safety event, counted and handed to the engine's listener
 * @param metrics    the engine's counters and timings
 * @param clock      monotonic time for durations and deadlines, wall time for events
 * @param lineage    every page life step
 * @param lineageIds the ids of lineage events, shared by every pool of the engine
 */
public record EngineContext(String node, FaultHooks hooks, SafetyMonitor safety, EngineMetrics metrics, Clock clock,
                            LineageSink lineage, LineageIds lineageIds) {

    /** An engine's context, its safety events going to {@code listener}. */
    public static EngineContext of(String node, FaultHooks hooks, SafetyListener listener, EngineMetrics metrics,
                                   Clock clock, LineageSink lineage) {
        return new EngineContext(node, hooks, new SafetyMonitor(listener, metrics, clock), metrics, clock, lineage,
                new LineageIds());
    }

    /** A production context that records no metrics and no lineage (a part used on its own). */
    public static EngineContext of(String node, SafetyListener listener, Clock clock) {
        return of(node, FaultHooks.NONE, listener, EngineMetrics.NONE, clock, LineageSink.NONE);
    }

    /** Whether the read-side and handoff checks run (checksums, owner and epoch, completeness): off only in a lab twin. */
    public boolean checks() {
        return hooks.checksOn();
    }

    /** The clock's monotonic nanos. */
    public long nanoTime() {
        return clock.nanoTime();
    }
}
