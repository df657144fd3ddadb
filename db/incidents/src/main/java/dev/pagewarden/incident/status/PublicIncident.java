package dev.pagewarden.incident.status;

import java.time.Instant;
import java.util.List;

/**
 * An incident as the status page shows it: the latest update's headline and state, and all its updates newest
 * first (never empty).
 */
public record PublicIncident(long incidentId, List<StatusUpdate> updates) {
    public PublicIncident {
        if (updates.isEmpty()) {
            throw new IllegalArgumentException("a public incident has at least one update");
        }
        updates = List.copyOf(updates);
    }

    public StatusUpdate latest() {
        return updates.getFirst();
    }

    public String title() {
        return latest().title();
    }

    public PublicState state() {
        return latest().state();
    }

    public Instant updatedAt() {
        return latest().postedAt();
    }
}
