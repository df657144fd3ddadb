package dev.pagewarden.core.spi;

import java.time.Instant;

/** Time for the engine: monotonic nanos for durations and deadlines, wall time for events. Tests control it. */
public interface Clock {
    long nanoTime();

    Instant now();

    Clock SYSTEM = new Clock() {
        @Override
        public long nanoTime() {
            return System.nanoTime();
        }

        @Override
        public Instant now() {
            return Instant.now();
        }
    };
}
