package dev.pagewarden.core.template;

/**
 * Splits a thinking model's output text, as it streams, into its reasoning (the {@code <think>...</think>} span)
 * and its answer. Text arrives in arbitrary pieces (a tag may be cut over several tokens), so a piece that might
 * still become a tag is held back until it is decided. As the Qwen3 template itself reads an assistant turn back:
 * the newlines just inside the tags and the whitespace after {@code </think>} belong to neither part.
 *
 * <p>The output starts either before a think span (the model may open one, after optional whitespace; text that
 * does not is all answer) or inside one, when the template's generation prompt already opened it (it pre-fills
 * {@code <think>\n}): then everything up to {@code </think>} is reasoning. Not thread-safe: one per generation.
 */
public final class ReasoningSplitter {
    public static final String OPEN = "<think>";
    public static final String CLOSE = "</think>";

    /** Text split into its reasoning and its answer; either may be empty. */
    public record Part(String reasoning, String content) {
        public static final Part EMPTY = new Part("", "");

        public boolean isEmpty() {
            return reasoning.isEmpty() && content.isEmpty();
        }
    }

    private enum Where { BEFORE, INSIDE, AFTER }

    private Where where;
    /** Text received but not yet decided: a possible tag, newlines that may end the reasoning, leading whitespace. */
    private final StringBuilder held = new StringBuilder();
    /** Inside: whether reasoning text was sent yet (the newlines after the opening tag are dropped). */
    private boolean reasoned;
    /** After: whether answer text was sent yet (the whitespace after the closing tag is dropped). */
    private boolean answered;

    /** {@code startsInside}: the prompt ended inside an open think span ({@link #opensThinking}). */
    public ReasoningSplitter(boolean startsInside) {
        this.where = startsInside ? Where.INSIDE : Where.BEFORE;
    }

    /** Whether a chat template thinks: it emits or reads {@code <think>} spans, or takes {@code enable_thinking}. */
    public static boolean thinks(String templateSource) {
        return templateSource.contains(OPEN) || templateSource.contains("enable_thinking");
    }

    /** Whether a rendered prompt ends inside a think span its template opened for the model. */
    public static boolean opensThinking(String prompt) {
        int open = prompt.lastIndexOf(OPEN);
        return open >= 0 && open > prompt.lastIndexOf(CLOSE) && prompt.substring(open + OPEN.length()).isBlank();
    }

    /** The next piece of output text: what of it (and of what was held) is decided now. */
    public Part accept(String text) {
        held.append(text);
        StringBuilder reasoning = new StringBuilder();
        StringBuilder content = new StringBuilder();
        boolean progress = true;
        while (progress && !held.isEmpty()) {
            progress = switch (where) {
                case BEFORE -> before(content);
                case INSIDE -> inside(reasoning);
                case AFTER -> after(content);
            };
        }
        return part(reasoning, content);
    }

    /** The end of the output: whatever is held is what it looks like (an unclosed span's text is reasoning). */
    public Part finish() {
        String rest = held.toString();
        held.setLength(0);
        return switch (where) {
            case BEFORE -> new Part("", rest);
            case INSIDE -> new Part(reasoned ? rest.stripTrailing() : rest.strip(), "");
            case AFTER -> Part.EMPTY; // whitespace after </think>
        };
    }

    private boolean before(StringBuilder content) {
        String s = held.toString();
        String rest = s.stripLeading();
        if (rest.startsWith(OPEN)) {
            held.delete(0, s.length() - rest.length() + OPEN.length());
            where = Where.INSIDE;
            return true;
        }
        if (OPEN.startsWith(rest)) {
            return false; // whitespace so far, or the start of the tag: wait
        }
        content.append(s);
        held.setLength(0);
        where = Where.AFTER;
        answered = true;
        return true;
    }

    private boolean inside(StringBuilder reasoning) {
        if (!reasoned) {
            int i = 0;
            while (i < held.length() && held.charAt(i) == '\n') {
                i++;
            }
            held.delete(0, i);
            if (held.isEmpty()) {
                return false;
            }
        }
        String s = held.toString();
        int close = s.indexOf(CLOSE);
        if (close >= 0) {
            emitReasoning(reasoning, s.substring(0, close).stripTrailing());
            held.delete(0, close + CLOSE.length());
            where = Where.AFTER;
            return true;
        }
        // keep back a tail that may be the start of </think>, and the whitespace before it
        int keep = partialSuffix(s, CLOSE);
        int end = s.length() - keep;
        while (end > 0 && Character.isWhitespace(s.charAt(end - 1))) {
            end--;
        }
        emitReasoning(reasoning, s.substring(0, end));
        held.delete(0, end);
        return false;
    }

    private void emitReasoning(StringBuilder reasoning, String text) {
        if (!text.isEmpty()) {
            reasoning.append(text);
            reasoned = true;
        }
    }

    private boolean after(StringBuilder content) {
        if (!answered) {
            // straight after </think>: its whitespace is dropped; the answer starts at its first other character
            String rest = held.toString().stripLeading();
            held.setLength(0);
            if (rest.isEmpty()) {
                return false;
            }
            held.append(rest);
            answered = true;
        }
        content.append(held);
        held.setLength(0);
        return false;
    }

    /** The length of the longest proper suffix of {@code s} that is a prefix of {@code tag}. */
    private static int partialSuffix(String s, String tag) {
        for (int n = Math.min(s.length(), tag.length() - 1); n > 0; n--) {
            if (s.regionMatches(s.length() - n, tag, 0, n)) {
                return n;
            }
        }
        return 0;
    }

    private static Part part(StringBuilder reasoning, StringBuilder content) {
        return reasoning.isEmpty() && content.isEmpty() ? Part.EMPTY
                : new Part(reasoning.toString(), content.toString());
    }
}
