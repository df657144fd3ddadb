package dev.pagewarden.core.tokenizer;

import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;

/**
 * Splits text at added tokens before the model's own splitting, the way llama.cpp's
 * {@code tokenizer_st_partition} does: added tokens longest first, each one cutting every text
 * fragment left at each of its occurrences. Control tokens take part only with special parsing on.
 */
final class AddedTokens {
    /** A piece of the input: a token already decided ({@code id >= 0}) or text still to encode. */
    record Fragment(int id, String text) {
        boolean isToken() {
            return id >= 0;
        }
    }

    private final int[] ids;
    private final String[] texts;
    private final boolean[] special;

    AddedTokens(List<String> pieces, TokenType[] types) {
        List<Integer> added = new ArrayList<>();
        for (int id = 0; id < types.length; id++) {
            if (types[id].isAdded() && !pieces.get(id).isEmpty()) {
                added.add(id);
            }
        }
        added.sort(Comparator.comparingInt((Integer id) -> pieces.get(id).length()).reversed().thenComparingInt(id -> id));
        ids = new int[added.size()];
        texts = new String[added.size()];
        special = new boolean[added.size()];
        for (int i = 0; i < ids.length; i++) {
            ids[i] = added.get(i);
            texts[i] = pieces.get(ids[i]);
            special[i] = types[ids[i]].needsSpecialParsing();
        }
    }

    /** The spans split one by one, then text fragments that touch joined again, so merges cross span boundaries. */
    List<Fragment> split(List<TextTokenizer.Span> spans) {
        List<Fragment> out = new ArrayList<>();
        for (TextTokenizer.Span span : spans) {
            for (Fragment f : split(span.text(), span.special())) {
                if (!f.isToken() && !out.isEmpty() && !out.getLast().isToken()) {
                    out.set(out.size() - 1, new Fragment(-1, out.getLast().text() + f.text()));
                } else {
                    out.add(f);
                }
            }
        }
        return out;
    }

    List<Fragment> split(String text, boolean parseSpecial) {
        List<Fragment> fragments = new ArrayList<>();
        if (text.isEmpty()) {
            return fragments;
        }
        fragments.add(new Fragment(-1, text));
        for (int t = 0; t < ids.length; t++) {
            if (special[t] && !parseSpecial) {
                continue;
            }
            String needle = texts[t];
            List<Fragment> next = new ArrayList<>(fragments.size() + 2);
            for (Fragment f : fragments) {
                if (f.isToken() || !f.text().contains(needle)) {
                    next.add(f);
                    continue;
                }
                String s = f.text();
                int from = 0;
                for (int at = s.indexOf(needle); at >= 0; at = s.indexOf(needle, from)) {
                    if (at > from) {
                        next.add(new Fragment(-1, s.substring(from, at)));
                    }
                    next.add(new Fragment(ids[t], needle));
                    from = at + needle.length();
                }
                if (from < s.length()) {
                    next.add(new Fragment(-1, s.substring(from)));
                }
            }
            fragments = next;
        }
        return fragments;
    }
}
