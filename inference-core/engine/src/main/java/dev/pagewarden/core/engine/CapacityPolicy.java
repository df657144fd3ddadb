package dev.pagewarden.core.engine;

/** What to do when the configured context window exceeds what the KV pools can hold for one request. */
public enum CapacityPolicy {
    /** Refuse to start, naming both numbers (the default). */
    STRICT,
    /** Start with the window lowered to the capacity, log a warning and emit a safety event. */
    CLAMP
}
