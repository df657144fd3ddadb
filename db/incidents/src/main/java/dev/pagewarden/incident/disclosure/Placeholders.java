package dev.pagewarden.incident.disclosure;

import java.util.ArrayList;
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * The template's fill-in markers: an italic run in underscores whose text starts with "Describe", such as
 * {@code _Describe the root cause._}. The pre-filled draft carries them where only a person can write the text;
 * a version that still has one is not approved or published.
 */
public final class Placeholders {
    // _Describe ..._ on one line, not inside a word (snake_case names stay text)
    private static final Pattern MARKER = Pattern.compile("(?<![\\p{Alnum}_])_Describe\\b[^_\\n]*_(?![\\p{Alnum}_])");

    private Placeholders() {
    }

    /** The markers left in {@code text}, in order of appearance, each as written (underscores included). */
    public static List<String> in(String text) {
        List<String> out = new ArrayList<>();
        if (text == null) {
            return out;
        }
        Matcher m = MARKER.matcher(text);
        while (m.find()) {
            out.add(m.group());
        }
        return out;
    }

    /** Refuses {@code step} (approve, publish) on a version with markers left, naming each one. */
    static void requireNone(Disclosure d, String step) {
        List<String> left = in(d.title() + "\n" + d.body());
        if (!left.isEmpty()) {
            throw new Unfilled(left, "disclosure " + d.id() + " (v" + d.version() + ") cannot be " + step
                    + ": fill in the template placeholder" + (left.size() == 1 ? "" : "s") + " left in the text: "
                    + String.join(", ", left.stream().map(p -> "\"" + p + "\"").toList()));
        }
    }

    /** A version refused because template placeholders are left in its text (409 for the admin API). */
    public static final class Unfilled extends RuntimeException {
        private final List<String> placeholders;

        Unfilled(List<String> placeholders, String message) {
            super(message);
            this.placeholders = List.copyOf(placeholders);
        }

        public List<String> placeholders() {
            return placeholders;
        }
    }
}
