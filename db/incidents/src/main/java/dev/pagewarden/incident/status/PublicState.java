package dev.pagewarden.incident.status;

import java.util.Locale;

/**
 * What the public status page says about an incident, in order: investigating, identified, monitoring,
 * resolved. Updates may repeat a state or skip ahead, never go back; a resolved incident takes no more
 * updates (a recurrence is a new incident).
 */
public enum PublicState {
    INVESTIGATING, IDENTIFIED, MONITORING, RESOLVED;

    public String label() {
        return name().toLowerCase(Locale.ROOT);
    }

    /** Whether an update in this state may follow one in {@code previous} (null: the incident's first update). */
    public boolean mayFollow(PublicState previous) {
        if (previous == null) {
            return true;
        }
        return switch (previous) {
            case RESOLVED -> false;
            case INVESTIGATING, IDENTIFIED, MONITORING -> ordinal() >= previous.ordinal();
        };
    }

    /** The state a form names ("identified", any case); refused with the states allowed. */
    public static PublicState parse(String value) {
        if (value != null) {
            for (PublicState s : values()) {
                if (s.name().equalsIgnoreCase(value.strip())) {
                    return s;
                }
            }
        }
        throw new IllegalArgumentException("state must be one of investigating, identified, monitoring, resolved");
    }
}
