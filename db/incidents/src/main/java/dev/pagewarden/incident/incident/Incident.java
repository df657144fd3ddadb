package dev.pagewarden.incident.incident;

import java.time.Instant;

/**
 * An incident: opened by a detector on a pool ({@code worker}) of one node, or by an outside report
 * ({@code /report}), and worked through the status workflow by responders. {@code mergedInto}: the incident it was
 * merged into (then it is resolved), else null.
 */
public record Incident(long id, String title, String model, String node, String worker, Status status, String severity,
                       Instant openedAt, Instant firstEvent, Instant lastEvent, Instant resolvedAt, int events, Long mergedInto) {

    /** The workflow, in order: an incident only moves forward. REPORTED: opened by an outside report, not yet triaged. */
    public enum Status {
        REPORTED, INVESTIGATING, IDENTIFIED, MITIGATED, RESOLVED;

        public String label() {
            return name().toLowerCase(java.util.Locale.ROOT);
        }

        /** What the reporter of an outside report is told: never more than these three words. */
        public String reporterLabel() {
            return switch (this) {
                case REPORTED -> "received";
                case INVESTIGATING, IDENTIFIED, MITIGATED -> "under investigation";
                case RESOLVED -> "closed";
            };
        }
    }

    /** One timeline entry: a detector's event, an admin action, or a note. */
    public record Entry(long id, Instant at, String kind, String actor, String text) {
    }

    /**
     * When the exposure happened: the first and last read of another tenant's data in the incident's blast radius,
     * from the lineage. The detector's events come after the first of them, and the search window reaches back
     * further still; neither is the exposure.
     */
    public record ExposureWindow(Instant firstRead, Instant lastRead) {
    }

    public boolean open() {
        return status != Status.RESOLVED;
    }

    public boolean merged() {
        return mergedInto != null;
    }
}
