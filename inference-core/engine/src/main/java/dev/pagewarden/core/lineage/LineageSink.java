package dev.pagewarden.core.lineage;

import dev.pagewarden.core.lineage.LineageEvent;

/**
 * Receives every page life step. Called on engine threads, often several times per decode step:
 * an implementation must not block (buffer and hand off to a writer thread). When it cannot take
 * an event without losing it, it must say so through {@link #accepting()} so admission can pause:
 * no unaudited serving.
 */
public interface LineageSink {
    void emit(LineageEvent event);

    /** False while the sink cannot take more events (journal at its cap); admission then refuses with a retryable error. */
    default boolean accepting() {
        return true;
    }

    LineageSink NONE = e -> { };
}
