package dev.pagewarden.lab;

import dev.pagewarden.core.spi.Clock;

import java.time.Duration;
import java.time.Instant;

/** The lab's virtual time: one millisecond per engine step, so deadlines fall on the same step every run. */
final class StepClock implements Clock {
    private static final long STEP_NANOS = Duration.ofMillis(1).toNanos();
    private final Instant start;
    private volatile long nanos;

    StepClock(Instant start) {
        this.start = start;
    }

    void step() {
        nanos += STEP_NANOS;
    }

    @Override
    public long nanoTime() {
        return nanos;
    }

    @Override
    public Instant now() {
        return start.plusNanos(nanos);
    }
}
