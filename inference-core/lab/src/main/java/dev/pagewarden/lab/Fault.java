package dev.pagewarden.lab;

import java.util.Locale;

/**
 * Fault switches of the incident-replay lab. Each re-opens one door that the engine keeps shut, so
 * the lab can show the door is real and the detectors are what stop it. They reach an engine only
 * through its fault hooks ({@link LabHooks}); a platform refuses them outside lab mode.
 */
public enum Fault {
    /** A request that does not fit prefill is treated as alive: one placeholder page is sent and decode proceeds. */
    LEGACY_FINISHED_CHECK,
    /** An aborted request's decode pages are freed at once, while transfer writes may still land. */
    IMMEDIATE_RELEASE_ON_ABORT,
    /** Each transfer frame is delayed (decode steps in {@link LabFaults#delaySteps()}). */
    DELAY_TRANSFER_WRITES,
    /** The sender skips one page but still reports the transfer complete. */
    DROP_TRANSFER_PAGE,
    /** The sender flips one byte of a page after computing its checksum. */
    CORRUPT_TRANSFER_BYTE,
    /** The engine starts with a window larger than its pools (the 2026 misconfiguration). */
    SKIP_CAPACITY_CHECK,
    /** The prefix cache lookup searches every scope it has seen, so a prompt reuses another tenant's matching pages. */
    IGNORE_CACHE_SCOPE,
    /** Every read-side and handoff check is disabled. */
    DETECTORS_OFF;

    /** The switch's name as written on the command line and in configuration. */
    public String label() {
        return name().toLowerCase(Locale.ROOT).replace('_', '-');
    }

    public static Fault parse(String label) {
        for (Fault f : values()) {
            if (f.label().equals(label)) {
                return f;
            }
        }
        throw new IllegalArgumentException("unknown lab fault '" + label + "'; known: "
                + java.util.Arrays.stream(values()).map(Fault::label).toList());
    }
}
