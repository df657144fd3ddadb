package dev.pagewarden.lab;

import dev.pagewarden.core.policy.CapacityCheck;

import java.util.function.IntSupplier;

/**
 * {@link Fault#SKIP_CAPACITY_CHECK}: the engine starts with its configured window (up to the model's limit)
 * although its pools cannot hold it for one request, as the 2026 misconfiguration did.
 */
final class SkippedCapacityCheck implements CapacityCheck {
    private static final System.Logger LOG = System.getLogger(SkippedCapacityCheck.class.getName());

    @Override
    public int window(int configured, int modelLimit, String shortfall, IntSupplier policy) {
        LOG.log(System.Logger.Level.WARNING, "FAULT INJECTED, capacity check skipped: " + shortfall);
        return Math.min(configured, modelLimit);
    }
}
