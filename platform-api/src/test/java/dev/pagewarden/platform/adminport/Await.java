package dev.pagewarden.platform.adminport;

import java.util.concurrent.TimeUnit;
import java.util.function.BooleanSupplier;

/** Bounded polling for a condition (not a timing assertion): fails after 60 s with what was awaited. */
final class Await {
    private Await() {
    }

    static void until(BooleanSupplier condition, String what) {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
        while (!condition.getAsBoolean()) {
            if (System.nanoTime() > deadline) {
                throw new AssertionError("timed out waiting for " + what);
            }
            try {
                Thread.sleep(20);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw new AssertionError("interrupted waiting for " + what);
            }
        }
    }
}
