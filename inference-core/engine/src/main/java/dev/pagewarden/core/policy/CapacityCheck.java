package dev.pagewarden.core.policy;

import java.util.function.IntSupplier;

/** What an engine does at start when its configured context window exceeds what its pools hold for one request. */
@FunctionalInterface
public interface CapacityCheck {

    /** Production: the configured capacity policy answers (strict refuses to start, clamp lowers the window). */
    CapacityCheck ENFORCED = (configured, modelLimit, shortfall, policy) -> policy.getAsInt();

    /**
     * The window to start with.
     *
     * @param configured the configured window, larger than the pools hold
     * @param modelLimit the model's own limit
     * @param shortfall  both numbers in words, for a log line
     * @param policy     the configured capacity policy's answer (throws where it refuses to start)
     */
    int window(int configured, int modelLimit, String shortfall, IntSupplier policy);
}
