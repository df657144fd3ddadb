package dev.pagewarden.platform.testing;

import java.time.Duration;
import java.util.function.BooleanSupplier;

/** Bounded polling for a condition that must hold within a stated time (the deadline is what is asserted). */
public final class Deadline {
    private Deadline() {
    }

    public static void await(BooleanSupplier condition, Duration within, String what) {
        long deadline = System.nanoTime() + within.toNanos();
        while (!condition.getAsBoolean()) {
            if (System.nanoTime() - deadline > 0) {
                throw new AssertionError("not within " + within + ": " + what);
            }
            try {
                Thread.sleep(10);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw new AssertionError("interrupted waiting for " + what);
            }
        }
    }
}
