package dev.pagewarden.incident.input;

import java.time.Instant;
import java.time.LocalDateTime;
import java.time.ZoneOffset;
import java.time.format.DateTimeParseException;

/**
 * Times typed by people and clients are kept to years 1 to 9999: ISO-8601 parses years up to a billion, which
 * overflow a database timestamp and {@code java.sql.Timestamp} (a {@code long} of milliseconds) further down.
 */
public final class Times {
    static final Instant FIRST = Instant.parse("0001-01-01T00:00:00Z");
    static final Instant LAST = Instant.parse("9999-12-31T23:59:59.999999Z");

    private Times() {
    }

    /** {@code t} itself (null stays null), or a refusal naming {@code field} when it lies outside years 1 to 9999. */
    public static Instant inRange(String field, Instant t) {
        if (t != null && (t.isBefore(FIRST) || t.isAfter(LAST))) {
            throw new InvalidTextException(field, field + " must be a time between the years 1 and 9999");
        }
        return t;
    }

    /** Accepts ISO instants (2026-11-30T05:00:00Z) and the browser's datetime-local form (taken as UTC). */
    public static Instant parse(String name, String value) {
        if (value == null || value.isBlank()) {
            throw new IllegalArgumentException("'" + name + "' is required (ISO time, e.g. 2026-11-30T05:00:00Z)");
        }
        try {
            return inRange(name, Instant.parse(value.strip()));
        } catch (DateTimeParseException e) {
            try {
                return inRange(name, LocalDateTime.parse(value.strip()).toInstant(ZoneOffset.UTC));
            } catch (DateTimeParseException e2) {
                throw new IllegalArgumentException("'" + name + "' is not a time: '" + value + "' (ISO, e.g. 2026-11-30T05:00:00Z)");
            }
        }
    }

    /** As {@link #parse}, with a blank or absent value meaning no bound (null). */
    public static Instant parseOptional(String name, String value) {
        return value == null || value.isBlank() ? null : parse(name, value);
    }
}
