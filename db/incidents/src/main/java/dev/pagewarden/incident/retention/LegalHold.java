package dev.pagewarden.incident.retention;

import java.time.Instant;

/** A legal hold: lineage partitions overlapping [from, to) are kept past the retention until it is released. */
public record LegalHold(long id, Instant from, Instant to, String reason, Instant createdAt, String createdBy,
                        Instant releasedAt, String releasedBy) {
    public boolean active() {
        return releasedAt == null;
    }
}
