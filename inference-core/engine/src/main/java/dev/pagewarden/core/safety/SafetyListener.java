package dev.pagewarden.core.safety;

import dev.pagewarden.core.safety.SafetyEvent;

/** Receives every safety event, on the engine thread that detected it: hand off, do not block. */
@FunctionalInterface
public interface SafetyListener {
    void onEvent(SafetyEvent event);

    SafetyListener NONE = e -> { };
}
