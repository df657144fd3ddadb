package dev.pagewarden.core.template;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;

/**
 * Client text travels through a template between two Unicode noncharacters, so the rendered prompt can
 * be cut back into the template's own text (where special tokens are meant) and the client's (where
 * they are plain text). String operations the template applies (trim, split, slices) go through
 * {@link Marked}, which keeps the marks around whatever client characters survive.
 */
final class UserText {
    static final char OPEN = '\uFDD0';
    static final char CLOSE = '\uFDD1';

    private UserText() {
    }

    /** Wraps client text; empty text stays empty so that it is still falsy inside the template. */
    static String mark(String text) {
        return text.isEmpty() ? text : OPEN + text + CLOSE;
    }

    static boolean hasMarks(String s) {
        return s.indexOf(OPEN) >= 0 || s.indexOf(CLOSE) >= 0;
    }

    /** Text with its marks taken out: the characters, and for each one whether the client wrote it. */
    record Marked(String plain, boolean[] fromUser) {

        static Marked parse(String s) {
            StringBuilder plain = new StringBuilder(s.length());
            boolean[] mask = new boolean[s.length()];
            int depth = 0;
            for (int i = 0; i < s.length(); i++) {
                char c = s.charAt(i);
                if (c == OPEN) {
                    depth++;
                } else if (c == CLOSE) {
                    depth = Math.max(0, depth - 1);
                } else {
                    mask[plain.length()] = depth > 0;
                    plain.append(c);
                }
            }
            return new Marked(plain.toString(), Arrays.copyOf(mask, plain.length()));
        }

        Marked substring(int from, int to) {
            return new Marked(plain.substring(from, to), Arrays.copyOfRange(fromUser, from, to));
        }

        /** Back to a string with balanced marks around each run of client characters. */
        String emit() {
            StringBuilder sb = new StringBuilder(plain.length() + 2);
            boolean in = false;
            for (int i = 0; i < plain.length(); i++) {
                if (fromUser[i] != in) {
                    sb.append(in ? CLOSE : OPEN);
                    in = fromUser[i];
                }
                sb.append(plain.charAt(i));
            }
            if (in) {
                sb.append(CLOSE);
            }
            return sb.toString();
        }

        /** Runs of the same origin, in order. */
        List<ChatTemplate.Segment> segments() {
            List<ChatTemplate.Segment> out = new ArrayList<>();
            int start = 0;
            for (int i = 1; i <= plain.length(); i++) {
                if (i == plain.length() || fromUser[i] != fromUser[start]) {
                    out.add(new ChatTemplate.Segment(plain.substring(start, i), fromUser[start]));
                    start = i;
                }
            }
            return out;
        }
    }
}
