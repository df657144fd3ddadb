package dev.pagewarden.incident.disclosure;

import java.time.Instant;

/** One version of an incident's disclosure (Markdown). Published versions never change. */
public record Disclosure(long id, long incidentId, int version, Status status, String title, String body,
                         Instant createdAt, String createdBy, String reviewedBy, Instant publishedAt, String publishedBy) {

    public enum Status {
        DRAFT, IN_REVIEW, PUBLISHED;

        public String label() {
            return name().toLowerCase(java.util.Locale.ROOT).replace('_', ' ');
        }
    }

    public boolean editable() {
        return status != Status.PUBLISHED;
    }
}
