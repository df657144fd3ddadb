package dev.pagewarden.incident.input;

/**
 * The one check for text the platform stores (names, notes, disclosure texts) before it reaches
 * PostgreSQL: PostgreSQL refuses NUL in text outright (an opaque 500 otherwise), and other control
 * characters or lone surrogates only garble logs, pages and exports. Refusals name the field.
 */
public final class StoredText {
    private StoredText() {
    }

    /** A required single-line value (no control characters at all), at most {@code max} characters; stripped. */
    public static String requireLine(String field, String value, int max) {
        if (value == null || value.isBlank()) {
            throw new InvalidTextException(field, field + " is required and must not be blank");
        }
        return line(field, value, max);
    }

    /** An optional single-line value: null stays null; otherwise as {@link #requireLine}. */
    public static String line(String field, String value, int max) {
        return check(field, value, max, false);
    }

    /** A required multi-line value: line breaks and tabs allowed, other control characters not. */
    public static String requireMultiline(String field, String value, int max) {
        if (value == null || value.isBlank()) {
            throw new InvalidTextException(field, field + " is required and must not be blank");
        }
        return check(field, value, max, true);
    }

    private static String check(String field, String value, int max, boolean multiline) {
        if (value == null) {
            return null;
        }
        if (value.length() > max) {
            throw new InvalidTextException(field, field + " must be at most " + max + " characters, got " + value.length());
        }
        for (int i = 0; i < value.length(); i++) {
            char c = value.charAt(i);
            if (Character.isHighSurrogate(c) && i + 1 < value.length() && Character.isLowSurrogate(value.charAt(i + 1))) {
                i++;
                continue;
            }
            if (Character.isSurrogate(c)) {
                throw new InvalidTextException(field, field + " is not valid Unicode (a lone surrogate at position " + i + ")");
            }
            boolean allowed = multiline && (c == '\n' || c == '\r' || c == '\t');
            if (Character.getType(c) == Character.CONTROL && !allowed) {
                throw new InvalidTextException(field, field + " must not contain control characters (found U+"
                        + String.format("%04X", (int) c) + " at position " + i + ")"
                        + (multiline ? "; only line breaks and tabs are allowed" : ""));
            }
        }
        return value.strip();
    }
}
