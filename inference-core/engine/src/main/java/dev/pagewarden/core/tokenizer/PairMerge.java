package dev.pagewarden.core.tokenizer;

import java.util.Arrays;
import java.util.PriorityQueue;

/**
 * The merge loop of both BPE kinds: symbols in a linked list, candidate pairs in a priority queue by
 * (priority, left position); a pair whose sides changed since it was queued is stale and skipped.
 * Byte-level BPE ranks pairs by merge rank; SentencePiece by the score of the joined piece (GGUF) or
 * by merge rank ({@code tokenizer.json}).
 */
final class PairMerge {
    /** How soon two adjacent symbols merge: lower first; NaN when they never do. */
    @FunctionalInterface
    interface Priority {
        double of(String left, String right);
    }

    private PairMerge() {
    }

    /** The symbols left once no adjacent pair merges any more. */
    static String[] merge(String[] symbols, Priority priority) {
        int n = symbols.length;
        String[] sym = symbols.clone();
        int[] next = new int[n];
        int[] prev = new int[n];
        int[] version = new int[n];
        for (int i = 0; i < n; i++) {
            next[i] = i + 1 < n ? i + 1 : -1;
            prev[i] = i - 1;
        }
        record Pair(double priority, int left, int right, int lv, int rv) {
        }
        PriorityQueue<Pair> queue = new PriorityQueue<>((a, b) -> a.priority != b.priority
                ? Double.compare(a.priority, b.priority) : Integer.compare(a.left, b.left));
        java.util.function.BiConsumer<Integer, Integer> offer = (l, r) -> {
            double p = priority.of(sym[l], sym[r]);
            if (!Double.isNaN(p)) {
                queue.add(new Pair(p, l, r, version[l], version[r]));
            }
        };
        for (int i = 0; i + 1 < n; i++) {
            offer.accept(i, i + 1);
        }
        while (!queue.isEmpty()) {
            Pair p = queue.poll();
            if (version[p.left] != p.lv || version[p.right] != p.rv) {
                continue;
            }
            sym[p.left] = sym[p.left] + sym[p.right];
            version[p.left]++;
            version[p.right] = -1;
            int after = next[p.right];
            next[p.left] = after;
            if (after >= 0) {
                prev[after] = p.left;
                offer.accept(p.left, after);
            }
            if (prev[p.left] >= 0) {
                offer.accept(prev[p.left], p.left);
            }
        }
        String[] out = new String[n];
        int count = 0;
        for (int i = n == 0 ? -1 : 0; i >= 0; i = next[i]) {
            out[count++] = sym[i];
        }
        return Arrays.copyOf(out, count);
    }
}
