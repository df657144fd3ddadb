package dev.pagewarden.incident.disclosure;

import java.util.ArrayList;
import java.util.List;

/**
 * A line-based diff of two texts (longest common subsequence), for comparing versions of a disclosure:
 * every line of both texts once, in order, each kept, removed (only in the old text) or added (only in the new).
 */
public final class LineDiff {
    public enum Kind {
        SAME(' '), REMOVED('-'), ADDED('+');

        private final char sign;

        Kind(char sign) {
            this.sign = sign;
        }

        /** The unified-diff sign: ' ', '-' or '+'. */
        public char sign() {
            return sign;
        }
    }

    public record Line(Kind kind, String text) {
    }

    private LineDiff() {
    }

    /** Above this many line pairs the changed middle is shown as removed then added (bounded memory). */
    private static final long MAX_CELLS = 4_000_000;

    public static List<Line> of(String before, String after) {
        String[] a = lines(before), b = lines(after);
        int start = 0;
        while (start < a.length && start < b.length && a[start].equals(b[start])) {
            start++;
        }
        int endA = a.length, endB = b.length;
        while (endA > start && endB > start && a[endA - 1].equals(b[endB - 1])) {
            endA--;
            endB--;
        }
        List<Line> out = new ArrayList<>();
        for (int k = 0; k < start; k++) {
            out.add(new Line(Kind.SAME, a[k]));
        }
        middle(a, start, endA, b, start, endB, out);
        for (int k = endA; k < a.length; k++) {
            out.add(new Line(Kind.SAME, a[k]));
        }
        return out;
    }

    private static void middle(String[] a, int a0, int a1, String[] b, int b0, int b1, List<Line> out) {
        int n = a1 - a0, m = b1 - b0;
        if ((long) n * m > MAX_CELLS) {
            for (int i = a0; i < a1; i++) {
                out.add(new Line(Kind.REMOVED, a[i]));
            }
            for (int j = b0; j < b1; j++) {
                out.add(new Line(Kind.ADDED, b[j]));
            }
            return;
        }
        // lcs[i][j]: length of the longest common subsequence of the middles from i and j on
        int[][] lcs = new int[n + 1][m + 1];
        for (int i = n - 1; i >= 0; i--) {
            for (int j = m - 1; j >= 0; j--) {
                lcs[i][j] = a[a0 + i].equals(b[b0 + j]) ? lcs[i + 1][j + 1] + 1 : Math.max(lcs[i + 1][j], lcs[i][j + 1]);
            }
        }
        int i = 0, j = 0;
        while (i < n && j < m) {
            if (a[a0 + i].equals(b[b0 + j])) {
                out.add(new Line(Kind.SAME, a[a0 + i++]));
                j++;
            } else if (lcs[i + 1][j] >= lcs[i][j + 1]) {
                out.add(new Line(Kind.REMOVED, a[a0 + i++]));
            } else {
                out.add(new Line(Kind.ADDED, b[b0 + j++]));
            }
        }
        while (i < n) {
            out.add(new Line(Kind.REMOVED, a[a0 + i++]));
        }
        while (j < m) {
            out.add(new Line(Kind.ADDED, b[b0 + j++]));
        }
    }

    /** True when the texts' lines are the same. */
    public static boolean unchanged(List<Line> diff) {
        return diff.stream().allMatch(l -> l.kind() == Kind.SAME);
    }

    private static String[] lines(String text) {
        return text == null || text.isEmpty() ? new String[0] : text.replace("\r\n", "\n").split("\n", -1);
    }
}
