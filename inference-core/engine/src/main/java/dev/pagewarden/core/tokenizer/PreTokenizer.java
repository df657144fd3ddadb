package dev.pagewarden.core.tokenizer;

import java.util.ArrayList;
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * The regex split in front of byte-level BPE. Each pattern isolates its matches (the text between
 * matches is kept as pieces too), as Hugging Face's {@code Split(behavior=Isolated)} and llama.cpp's
 * {@code unicode_regex_split} do; several patterns apply one after another.
 *
 * <p>Patterns are written as in {@code tokenizer.json} and translated to Java: {@code \s} is Unicode
 * White_Space (Java's default is ASCII only), and {@code (?i:'s|...)} becomes explicit ASCII case
 * pairs, as llama.cpp and transformers.js both read it.
 */
final class PreTokenizer {
    /** Llama 3 ({@code tokenizer.ggml.pre = llama-bpe}). */
    static final String LLAMA3 = "(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\\r\\n\\p{L}\\p{N}]?\\p{L}+|\\p{N}{1,3}"
            + "| ?[^\\s\\p{L}\\p{N}]+[\\r\\n]*|\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+";
    /** Qwen 2, 2.5 and 3 ({@code qwen2}): Llama 3's pattern with single digits. */
    static final String QWEN2 = "(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\\r\\n\\p{L}\\p{N}]?\\p{L}+|\\p{N}"
            + "| ?[^\\s\\p{L}\\p{N}]+[\\r\\n]*|\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+";
    /** GPT-2 ({@code gpt-2}, and a ByteLevel pre-tokenizer with use_regex). */
    static final String GPT2 = "'s|'t|'re|'ve|'m|'ll|'d| ?\\p{L}+| ?\\p{N}+| ?[^\\s\\p{L}\\p{N}]+|\\s+(?!\\S)|\\s+";

    private final List<Pattern> patterns;

    PreTokenizer(List<String> regexes) {
        patterns = new ArrayList<>();
        for (String r : regexes) {
            patterns.add(Pattern.compile(toJava(r)));
        }
    }

    static String toJava(String regex) {
        String r = regex.replace("(?i:'s|'t|'re|'ve|'m|'ll|'d)", "(?:'[sS]|'[tT]|'[rR][eE]|'[vV][eE]|'[mM]|'[lL][lL]|'[dD])");
        StringBuilder sb = new StringBuilder(r.length() + 32);
        for (int i = 0; i < r.length(); i++) {
            char c = r.charAt(i);
            if (c == '\\' && i + 1 < r.length()) {
                char n = r.charAt(++i);
                switch (n) {
                    case 's' -> sb.append("\\p{IsWhite_Space}");
                    case 'S' -> sb.append("\\P{IsWhite_Space}");
                    default -> sb.append('\\').append(n);
                }
            } else {
                sb.append(c);
            }
        }
        return sb.toString();
    }

    List<String> split(String text) {
        List<String> pieces = List.of(text);
        for (Pattern p : patterns) {
            List<String> next = new ArrayList<>();
            for (String piece : pieces) {
                Matcher m = p.matcher(piece);
                int last = 0;
                while (m.find()) {
                    if (m.end() == m.start()) {
                        continue;
                    }
                    if (m.start() > last) {
                        next.add(piece.substring(last, m.start()));
                    }
                    next.add(m.group());
                    last = m.end();
                }
                if (last < piece.length()) {
                    next.add(piece.substring(last));
                }
            }
            pieces = next;
        }
        return pieces;
    }
}
