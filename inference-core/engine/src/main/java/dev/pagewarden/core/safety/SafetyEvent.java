package dev.pagewarden.core.safety;

import java.time.Instant;
import java.util.List;

/**
 * What a detector saw. The platform turns these into incidents and audit rows; the lab counts them.
 *
 * @param type      which detector fired
 * @param severity  how bad
 * @param worker    the pool/worker it happened on ("decode-0", "prefill-0", "engine")
 * @param requestId the request concerned, 0 when none
 * @param tenant    that request's tenant, null when none
 * @param pages     physical pages involved
 * @param epochs    their epochs, index-aligned with {@code pages}
 * @param time      when
 * @param details   human-readable specifics (expected vs found)
 */
public record SafetyEvent(Type type, Severity severity, String worker, long requestId, String tenant, List<Integer> pages,
                          List<Long> epochs, Instant time, String details) {

    public SafetyEvent {
        pages = List.copyOf(pages);
        epochs = List.copyOf(epochs);
    }

    public enum Severity {
        WARNING,
        CRITICAL
    }

    /** Detectors; the metric label is the lower-case name with dashes. */
    public enum Type {
        OWNER_TAG_MISMATCH(Severity.CRITICAL),
        UNWRITTEN_SLOT_READ(Severity.CRITICAL),
        FREE_PAGE_READ(Severity.CRITICAL),
        CHECKSUM_MISMATCH(Severity.CRITICAL),
        TRANSFER_INCOMPLETE(Severity.CRITICAL),
        CANARY_MISMATCH(Severity.CRITICAL),
        DEFERRED_RELEASE_TIMEOUT(Severity.WARNING),
        LATE_WRITE_DROPPED(Severity.WARNING),
        CAPACITY_CLAMPED(Severity.WARNING);

        private final Severity defaultSeverity;

        Type(Severity defaultSeverity) {
            this.defaultSeverity = defaultSeverity;
        }

        public Severity defaultSeverity() {
            return defaultSeverity;
        }

        public String label() {
            return name().toLowerCase(java.util.Locale.ROOT).replace('_', '-');
        }
    }
}
