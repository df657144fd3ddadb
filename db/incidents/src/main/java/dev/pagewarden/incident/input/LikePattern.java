package dev.pagewarden.incident.input;

/** Free text as a case-insensitive SQL LIKE pattern that matches it anywhere, its own % and _ taken literally. */
public final class LikePattern {
    private LikePattern() {
    }

    /** For {@code ILIKE :p ESCAPE '\'}. */
    public static String contains(String text) {
        return "%" + text.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_") + "%";
    }
}
