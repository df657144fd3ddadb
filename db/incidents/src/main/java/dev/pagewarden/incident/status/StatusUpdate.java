package dev.pagewarden.incident.status;

import java.time.Instant;

/** One public update of an incident: its state, the public headline as of this update, and the text. Never changes. */
public record StatusUpdate(long id, long incidentId, PublicState state, String title, String body, Instant postedAt,
                           String postedBy) {
}
