package dev.pagewarden.platform.completion;

import java.util.List;

/**
 * Applies OpenAI {@code stop} sequences to streamed text: text that could still be the start of a
 * stop sequence is held back until it cannot, and the first stop sequence to complete ends the output
 * (the match itself is not returned). With no stop sequences every piece passes straight through.
 */
final class StopMatcher {
    private final List<String> stops;
    private final StringBuilder held = new StringBuilder();
    private boolean matched;

    StopMatcher(List<String> stops) {
        this.stops = stops;
    }

    /** Feeds generated text; returns what may be sent now. */
    String accept(String piece) {
        if (matched) {
            return "";
        }
        if (stops.isEmpty()) {
            return piece;
        }
        held.append(piece);
        // the stop that completes first in the stream wins (ties: the one that starts earlier)
        int cut = -1;
        int cutEnd = Integer.MAX_VALUE;
        for (String s : stops) {
            int at = held.indexOf(s);
            if (at >= 0 && (at + s.length() < cutEnd || (at + s.length() == cutEnd && at < cut))) {
                cut = at;
                cutEnd = at + s.length();
            }
        }
        if (cut >= 0) {
            matched = true;
            String out = held.substring(0, cut);
            held.setLength(0);
            return out;
        }
        int keep = longestStopPrefixSuffix();
        String out = held.substring(0, held.length() - keep);
        held.delete(0, held.length() - keep);
        return out;
    }

    /** True once a stop sequence has matched; no more text follows. */
    boolean matched() {
        return matched;
    }

    /** The end of the stream: held-back text was not a stop sequence after all. */
    String finish() {
        String out = matched ? "" : held.toString();
        held.setLength(0);
        return out;
    }

    /** Length of the longest tail of {@code held} that is a proper prefix of some stop sequence. */
    private int longestStopPrefixSuffix() {
        int best = 0;
        String text = held.toString();
        for (String s : stops) {
            for (int len = Math.min(s.length() - 1, text.length()); len > best; len--) {
                if (text.regionMatches(text.length() - len, s, 0, len)) {
                    best = len;
                    break;
                }
            }
        }
        return best;
    }
}
