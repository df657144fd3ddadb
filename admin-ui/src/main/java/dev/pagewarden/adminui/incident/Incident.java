package dev.pagewarden.adminui.incident;

import java.time.Instant;

/** An incident: opened by a detector on a pool ({@code worker}) of one node, worked through the status workflow by responders. */
public record Incident(long id, String title, String model, String node, String worker, Status status, String severity,
                       Instant openedAt, Instant firstEvent, Instant lastEvent, Instant resolvedAt, int events) {

    public enum Status {
        INVESTIGATING, IDENTIFIED, MITIGATED, RESOLVED;

        public String label() {
            return name().toLowerCase(java.util.Locale.ROOT);
        }
    }

    /** One timeline entry: a detector's event, an admin action, or a note. */
    public record Entry(long id, Instant at, String kind, String actor, String text) {
    }

    public boolean open() {
        return status != Status.RESOLVED;
    }
}
