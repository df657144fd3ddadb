package dev.pagewarden.core.template;

import com.hubspot.jinjava.Jinjava;
import com.hubspot.jinjava.JinjavaConfig;
import com.hubspot.jinjava.LegacyOverrides;
import com.hubspot.jinjava.el.JinjavaInterpreterResolver;
import com.hubspot.jinjava.interpret.JinjavaInterpreter;
import com.hubspot.jinjava.lib.filter.Filter;
import com.hubspot.jinjava.lib.fn.ELFunctionDefinition;
import jinjava.javax.el.CompositeELResolver;
import jinjava.javax.el.ELContext;
import jinjava.javax.el.ELResolver;

import java.beans.FeatureDescriptor;
import java.time.ZonedDateTime;
import java.time.format.TextStyle;
import java.util.ArrayList;
import java.util.Collection;
import java.util.Iterator;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * HubSpot's Jinjava, brought to the Jinja that chat templates are written in (Python's, as
 * transformers renders them and as {@code @huggingface/jinja} reproduces it). Jinjava lacks some of it,
 * so a source pre-pass and a resolver fill the gaps:
 * <ul>
 *   <li>whitespace: {@code trim_blocks}, {@code lstrip_blocks} and the {@code -} markers are applied to
 *       the source before Jinjava sees it (Jinjava ignores {@code {{-});</li>
 *   <li>Python slices {@code x[a:b:c]} become {@code x.pyslice(a, b, c)};</li>
 *   <li>{@code namespace(k=v)} values are parenthesised (Jinjava binds a filter looser than {@code =});</li>
 *   <li>the operand of {@code not} is parenthesised up to the next {@code and}/{@code or}: Python reads
 *       {@code not a == b} as {@code not (a == b)}, Jinjava as {@code (not a) == b};</li>
 *   <li>Python's {@code str} and {@code dict} methods ({@code startswith}, {@code strip}, {@code split},
 *       {@code items}, ...) are answered by {@link PythonMethods};</li>
 *   <li>{@code raise_exception} and {@code strftime_now} are functions, {@code trim} is Python's strip,
 *       {@code tojson} is transformers' ({@code json.dumps} with {@code ensure_ascii=False}).</li>
 * </ul>
 * String results keep the {@link UserText} marks around client characters.
 */
final class JinjaDialect {
    private JinjaDialect() {
    }

    /** Thrown by {@code raise_exception}; Jinjava records it as the cause of a fatal error. */
    static final class Raised extends RuntimeException {
        Raised(String message) {
            super(message);
        }
    }

    static final Jinjava JINJAVA = create();

    private static Jinjava create() {
        CompositeELResolver resolver = new CompositeELResolver();
        resolver.add(new PythonMethods());
        resolver.add(JinjavaInterpreterResolver.DEFAULT_RESOLVER_READ_ONLY);
        JinjavaConfig config = JinjavaConfig.newBuilder()
                .withElResolver(resolver)
                .withTrimBlocks(false)       // done by the pre-pass
                .withLstripBlocks(false)
                .withKeepTrailingNewline(true)
                .withFailOnUnknownTokens(false)
                .withNestedInterpretationEnabled(false)   // text that looks like a tag is text, never re-rendered
                .withLegacyOverrides(LegacyOverrides.newBuilder()
                        .withUseNaturalOperatorPrecedence(true)
                        .withParseWhitespaceControlStrictly(true)
                        .withKeepNullableLoopValues(true)
                        .withUsePyishObjectMapper(true)
                        .build())
                .build();
        Jinjava j = new Jinjava(config);
        j.getGlobalContext().registerFunction(new ELFunctionDefinition("", "raise_exception", JinjaDialect.class, "raiseException", String.class));
        j.getGlobalContext().registerFunction(new ELFunctionDefinition("", "strftime_now", JinjaDialect.class, "strftimeNow", String.class));
        j.getGlobalContext().registerFilter(new TrimFilter());
        j.getGlobalContext().registerFilter(new LengthFilter("length"));
        j.getGlobalContext().registerFilter(new LengthFilter("count"));
        j.getGlobalContext().registerFilter(new TojsonFilter());
        return j;
    }

    public static Object raiseException(String message) {
        throw new Raised(message);
    }

    /** The date codes chat templates use ({@code %d %b %Y} and friends), in the server's time zone. */
    public static String strftimeNow(String format) {
        ZonedDateTime now = ZonedDateTime.now();
        StringBuilder sb = new StringBuilder();
        for (int i = 0; i < format.length(); i++) {
            char c = format.charAt(i);
            if (c != '%' || i + 1 == format.length()) {
                sb.append(c);
                continue;
            }
            char code = format.charAt(++i);
            switch (code) {
                case 'Y' -> sb.append(now.getYear());
                case 'm' -> sb.append(String.format(Locale.ROOT, "%02d", now.getMonthValue()));
                case 'd' -> sb.append(String.format(Locale.ROOT, "%02d", now.getDayOfMonth()));
                case 'b' -> sb.append(now.getMonth().getDisplayName(TextStyle.SHORT, Locale.US));
                case 'B' -> sb.append(now.getMonth().getDisplayName(TextStyle.FULL, Locale.US));
                case 'H' -> sb.append(String.format(Locale.ROOT, "%02d", now.getHour()));
                case 'M' -> sb.append(String.format(Locale.ROOT, "%02d", now.getMinute()));
                case '%' -> sb.append('%');
                default -> sb.append('%').append(code);
            }
        }
        return sb.toString();
    }

    // ---- source pre-pass ----

    private static final Pattern LSTRIP_BLOCKS = Pattern.compile("^[ \\t]*(\\{[#%-])", Pattern.MULTILINE);
    private static final Pattern TRIM_BLOCKS = Pattern.compile("([#%-]\\})\\n");
    private static final Pattern GENERATION_TAGS = Pattern.compile("(\\s*)\\{%(-?)\\s*(?:end)?generation\\s*(-?)%\\}(\\s*)", Pattern.DOTALL);

    /** The template as Jinjava should see it: whitespace already settled, Python syntax rewritten. */
    static String prepare(String source) {
        String s = source.endsWith("\n") ? source.substring(0, source.length() - 1) : source;
        s = LSTRIP_BLOCKS.matcher(s).replaceAll("$1");
        s = TRIM_BLOCKS.matcher(s).replaceAll("$1");
        // {% generation %} marks assistant spans for training masks; it renders nothing
        Matcher m = GENERATION_TAGS.matcher(s);
        StringBuilder sb = new StringBuilder();
        while (m.find()) {
            m.appendReplacement(sb, Matcher.quoteReplacement((m.group(2).isEmpty() ? m.group(1) : "") + (m.group(3).isEmpty() ? m.group(4) : "")));
        }
        m.appendTail(sb);
        return whitespaceAndSyntax(sb.toString());
    }

    /** JavaScript's {@code \s}, which decides what a {@code -} marker strips. */
    static boolean isSpace(char c) {
        return switch (c) {
            case ' ', '\t', '\n', '\u000B', '\f', '\r', '\u00A0', '\u1680', '\u2028', '\u2029', '\u202F', '\u205F', '\u3000', '\uFEFF' -> true;
            default -> c >= '\u2000' && c <= '\u200A';
        };
    }

    private static String whitespaceAndSyntax(String s) {
        StringBuilder out = new StringBuilder(s.length());
        int i = 0;
        boolean skipSpace = false;
        int lastTagEnd = 0;   // a marker strips the text before it, never into the previous tag or comment
        while (i < s.length()) {
            int open = nextTag(s, i);
            String text = s.substring(i, open < 0 ? s.length() : open);
            if (skipSpace) {
                int k = 0;
                while (k < text.length() && isSpace(text.charAt(k))) {
                    k++;
                }
                text = text.substring(k);
            }
            out.append(text);
            if (open < 0) {
                break;
            }
            char kind = s.charAt(open + 1);
            int bodyStart = open + 2;
            if (bodyStart < s.length() && s.charAt(bodyStart) == '-') {
                int end = out.length();
                while (end > 0 && isSpace(out.charAt(end - 1)) && end > lastTagEnd) {
                    end--;
                }
                out.setLength(end);
                bodyStart++;
            }
            int close = closeOf(s, bodyStart, kind);
            if (close < 0) {
                throw new IllegalArgumentException("unclosed " + s.substring(open, Math.min(s.length(), open + 2)) + " at offset " + open);
            }
            int bodyEnd = close;
            skipSpace = bodyEnd > bodyStart && s.charAt(bodyEnd - 1) == '-';
            if (skipSpace) {
                bodyEnd--;
            }
            if (kind != '#') {
                String body = rewriteExpression(s.substring(bodyStart, bodyEnd));
                out.append('{').append(kind).append(body).append(kind == '{' ? '}' : kind).append('}');
            }
            lastTagEnd = out.length();
            i = close + 2;
        }
        return out.toString();
    }

    private static int nextTag(String s, int from) {
        for (int i = from; i + 1 < s.length(); i++) {
            if (s.charAt(i) == '{') {
                char n = s.charAt(i + 1);
                if (n == '{' || n == '%' || n == '#') {
                    return i;
                }
            }
        }
        return -1;
    }

    /** Offset of the closing {@code }}}, {@code %}} or {@code #}}, skipping string literals and braces. */
    private static int closeOf(String s, int from, char kind) {
        if (kind == '#') {
            int k = s.indexOf("#}", from);
            return k;
        }
        int depth = 0;
        for (int i = from; i < s.length(); i++) {
            char c = s.charAt(i);
            if (c == '\'' || c == '"') {
                i = endOfString(s, i);
            } else if (c == '{') {
                depth++;
            } else if (c == '}' && depth > 0) {
                depth--;
            } else if (depth == 0 && i + 1 < s.length() && s.charAt(i + 1) == '}' && (c == '}' && kind == '{' || c == '%' && kind == '%')) {
                return i;
            }
        }
        return -1;
    }

    private static int endOfString(String s, int quoteAt) {
        char q = s.charAt(quoteAt);
        for (int i = quoteAt + 1; i < s.length(); i++) {
            char c = s.charAt(i);
            if (c == '\\') {
                i++;
            } else if (c == q) {
                return i;
            }
        }
        return s.length() - 1;
    }

    /** Slices to {@code .pyslice(...)}, parenthesised {@code namespace(...)} values and {@code not} operands. */
    static String rewriteExpression(String e) {
        StringBuilder out = new StringBuilder(e.length());
        for (int i = 0; i < e.length(); i++) {
            char c = e.charAt(i);
            if ((Character.isLetter(c) || c == '_') && (i == 0 || !isNamePart(e.charAt(i - 1)) && e.charAt(i - 1) != '.')) {
                int end = i;
                while (end < e.length() && isNamePart(e.charAt(end))) {
                    end++;
                }
                String word = e.substring(i, end);
                if (word.equals("not") && unaryPosition(out)) {
                    int stop = endOfNotOperand(e, end);
                    out.append("not (").append(rewriteExpression(e.substring(end, stop))).append(')');
                    i = stop - 1;
                } else {
                    out.append(word);
                    i = end - 1;
                }
            } else if (c == '\'' || c == '"') {
                int end = endOfString(e, i);
                out.append(e, i, end + 1);
                i = end;
            } else if (c == '[' && isSubscript(out)) {
                int close = matching(e, i, '[', ']');
                List<String> parts = topLevelSplit(e.substring(i + 1, close), ':');
                if (parts.size() > 1) {
                    out.append(".pyslice(");
                    for (int p = 0; p < 3; p++) {
                        String part = p < parts.size() ? parts.get(p).strip() : "";
                        out.append(p > 0 ? ", " : "").append(part.isEmpty() ? "none" : rewriteExpression(part));
                    }
                    out.append(')');
                } else {
                    out.append('[').append(rewriteExpression(e.substring(i + 1, close))).append(']');
                }
                i = close;
            } else if (c == '(' && out.toString().stripTrailing().endsWith("namespace")) {
                int close = matching(e, i, '(', ')');
                List<String> args = topLevelSplit(e.substring(i + 1, close), ',');
                out.append('(');
                for (int a = 0; a < args.size(); a++) {
                    String arg = args.get(a);
                    int eq = topLevelAssign(arg);
                    out.append(a > 0 ? "," : "");
                    if (eq > 0) {
                        out.append(arg, 0, eq + 1).append('(').append(rewriteExpression(arg.substring(eq + 1))).append(')');
                    } else {
                        out.append(rewriteExpression(arg));
                    }
                }
                out.append(')');
                i = close;
            } else {
                out.append(c);
            }
        }
        return out.toString();
    }

    private static boolean isNamePart(char c) {
        return Character.isLetterOrDigit(c) || c == '_';
    }

    private static final Set<String> OPERAND_ENDS = Set.of("and", "or", "if", "else");

    /** {@code not} is unary at the start and after an operator or keyword; after an operand it is {@code not in}/{@code is not}. */
    private static boolean unaryPosition(CharSequence before) {
        String b = before.toString().stripTrailing();
        if (b.isEmpty() || "([{,:=".indexOf(b.charAt(b.length() - 1)) >= 0) {
            return true;
        }
        int k = b.length();
        while (k > 0 && isNamePart(b.charAt(k - 1))) {
            k--;
        }
        return Set.of("and", "or", "not", "if", "elif", "else").contains(b.substring(k));
    }

    /** Where a {@code not}'s operand ends: the next {@code and}, {@code or}, conditional or closing bracket at its level. */
    private static int endOfNotOperand(String e, int from) {
        int depth = 0;
        for (int i = from; i < e.length(); i++) {
            char c = e.charAt(i);
            if (c == '\'' || c == '"') {
                i = endOfString(e, i);
            } else if (c == '(' || c == '[' || c == '{') {
                depth++;
            } else if (c == ')' || c == ']' || c == '}') {
                if (depth == 0) {
                    return i;
                }
                depth--;
            } else if (c == ',' && depth == 0) {
                return i;
            } else if (depth == 0 && (Character.isLetter(c) || c == '_') && !isNamePart(e.charAt(i - 1)) && e.charAt(i - 1) != '.') {
                int end = i;
                while (end < e.length() && isNamePart(e.charAt(end))) {
                    end++;
                }
                if (OPERAND_ENDS.contains(e.substring(i, end))) {
                    return i;
                }
                i = end - 1;
            }
        }
        return e.length();
    }

    /** A {@code [} right after a name, a call or another subscript indexes; anywhere else it starts a list. */
    private static boolean isSubscript(CharSequence before) {
        int k = before.length() - 1;
        if (k < 0) {
            return false;
        }
        char p = before.charAt(k);
        return Character.isLetterOrDigit(p) || p == '_' || p == ')' || p == ']' || p == '\'' || p == '"';
    }

    private static int matching(String e, int at, char open, char close) {
        int depth = 0;
        for (int i = at; i < e.length(); i++) {
            char c = e.charAt(i);
            if (c == '\'' || c == '"') {
                i = endOfString(e, i);
            } else if (c == open) {
                depth++;
            } else if (c == close && --depth == 0) {
                return i;
            }
        }
        throw new IllegalArgumentException("unbalanced '" + open + "' in {{ " + e + " }}");
    }

    private static List<String> topLevelSplit(String e, char sep) {
        List<String> parts = new ArrayList<>();
        int depth = 0;
        int start = 0;
        for (int i = 0; i < e.length(); i++) {
            char c = e.charAt(i);
            if (c == '\'' || c == '"') {
                i = endOfString(e, i);
            } else if (c == '(' || c == '[' || c == '{') {
                depth++;
            } else if (c == ')' || c == ']' || c == '}') {
                depth--;
            } else if (c == sep && depth == 0) {
                parts.add(e.substring(start, i));
                start = i + 1;
            }
        }
        parts.add(e.substring(start));
        return parts;
    }

    /** The {@code =} of {@code name=value} (not {@code ==}, {@code !=}, {@code <=}, {@code >=}), or -1. */
    private static int topLevelAssign(String arg) {
        for (int i = 0; i < arg.length(); i++) {
            char c = arg.charAt(i);
            if (c == '=') {
                boolean comparison = (i + 1 < arg.length() && arg.charAt(i + 1) == '=')
                        || (i > 0 && "=!<>".indexOf(arg.charAt(i - 1)) >= 0);
                return comparison ? -1 : i;
            }
            if (!(Character.isLetterOrDigit(c) || c == '_' || Character.isWhitespace(c))) {
                return -1;
            }
        }
        return -1;
    }

    // ---- runtime ----

    /** Python's {@code str.isspace}, which {@code strip()} and Jinja's {@code trim} use. */
    static boolean isPythonSpace(char c) {
        return switch (c) {
            case ' ', '\t', '\n', '\u000B', '\f', '\r', '\u001C', '\u001D', '\u001E', '\u001F', '\u0085', '\u00A0',
                 '\u1680', '\u2028', '\u2029', '\u202F', '\u205F', '\u3000' -> true;
            default -> c >= '\u2000' && c <= '\u200A';
        };
    }

    /** Python's {@code strip}: characters from {@code chars}, or whitespace when it is null. */
    static String strip(String s, String chars, boolean left, boolean right) {
        UserText.Marked m = UserText.Marked.parse(s);
        String p = m.plain();
        int from = 0;
        int to = p.length();
        while (left && from < to && strippable(p.charAt(from), chars)) {
            from++;
        }
        while (right && to > from && strippable(p.charAt(to - 1), chars)) {
            to--;
        }
        return m.substring(from, to).emit();
    }

    private static boolean strippable(char c, String chars) {
        return chars == null ? isPythonSpace(c) : chars.indexOf(c) >= 0;
    }

    /** Jinja's {@code trim} filter is Python's {@code strip}. */
    static final class TrimFilter implements Filter {
        @Override
        public String getName() {
            return "trim";
        }

        @Override
        public Object filter(Object var, JinjavaInterpreter interpreter, String... args) {
            if (var == null) {
                return "";
            }
            return strip(var.toString(), args.length > 0 ? args[0] : null, true, true);
        }
    }

    /** {@code length}: Python's {@code len}, so a string counts its code points and not its marks. */
    record LengthFilter(String getName) implements Filter {
        @Override
        public Object filter(Object var, JinjavaInterpreter interpreter, String... args) {
            return switch (var) {
                case null -> 0;
                case String s -> {
                    String plain = UserText.Marked.parse(s).plain();
                    yield plain.codePointCount(0, plain.length());
                }
                case Collection<?> c -> c.size();
                case Map<?, ?> m -> m.size();
                case Object[] a -> a.length;
                default -> String.valueOf(var).length();
            };
        }
    }

    /** transformers' {@code tojson}: Python's {@code json.dumps(x, ensure_ascii=False, indent=indent, sort_keys=sort_keys)}. */
    static final class TojsonFilter implements Filter {
        @Override
        public String getName() {
            return "tojson";
        }

        @Override
        public Object filter(Object var, JinjavaInterpreter interpreter, String... args) {
            return filter(var, interpreter, args, Map.of());
        }

        @Override
        public Object filter(Object var, JinjavaInterpreter interpreter, Object[] args, Map<String, Object> kwargs) {
            Object indent = kwargs.getOrDefault("indent", args.length > 0 ? args[0] : null);
            boolean sortKeys = Boolean.TRUE.equals(kwargs.get("sort_keys"));
            StringBuilder sb = new StringBuilder();
            json(sb, var, indent instanceof Number n ? n.intValue() : -1, 0, sortKeys);
            return sb.toString();
        }

        private static void json(StringBuilder sb, Object v, int indent, int depth, boolean sortKeys) {
            String item = indent >= 0 ? "," : ", ";
            switch (v) {
                case null -> sb.append("null");
                case Boolean b -> sb.append(b);
                case Integer i -> sb.append(i);
                case Long l -> sb.append(l);
                case Number n -> sb.append(n.doubleValue());
                case Map<?, ?> m -> {
                    List<Map.Entry<?, ?>> entries = new ArrayList<>(m.entrySet());
                    if (sortKeys) {
                        entries.sort((a, b) -> String.valueOf(a.getKey()).compareTo(String.valueOf(b.getKey())));
                    }
                    sb.append('{');
                    for (int i = 0; i < entries.size(); i++) {
                        sb.append(i > 0 ? item : "");
                        newline(sb, indent, depth + 1);
                        string(sb, String.valueOf(entries.get(i).getKey()));
                        sb.append(": ");
                        json(sb, entries.get(i).getValue(), indent, depth + 1, sortKeys);
                    }
                    if (!entries.isEmpty()) {
                        newline(sb, indent, depth);
                    }
                    sb.append('}');
                }
                case Collection<?> c -> {
                    sb.append('[');
                    int i = 0;
                    for (Object o : c) {
                        sb.append(i++ > 0 ? item : "");
                        newline(sb, indent, depth + 1);
                        json(sb, o, indent, depth + 1, sortKeys);
                    }
                    if (!c.isEmpty()) {
                        newline(sb, indent, depth);
                    }
                    sb.append(']');
                }
                default -> string(sb, v.toString());
            }
        }

        private static void newline(StringBuilder sb, int indent, int depth) {
            if (indent >= 0) {
                sb.append('\n').append(" ".repeat(indent * depth));
            }
        }

        private static void string(StringBuilder sb, String s) {
            sb.append('"');
            for (int i = 0; i < s.length(); i++) {
                char c = s.charAt(i);
                switch (c) {
                    case '"' -> sb.append("\\\"");
                    case '\\' -> sb.append("\\\\");
                    case '\n' -> sb.append("\\n");
                    case '\r' -> sb.append("\\r");
                    case '\t' -> sb.append("\\t");
                    case '\b' -> sb.append("\\b");
                    case '\f' -> sb.append("\\f");
                    default -> {
                        if (c < 0x20) {
                            sb.append(String.format(Locale.ROOT, "\\u%04x", (int) c));
                        } else {
                            sb.append(c);
                        }
                    }
                }
            }
            sb.append('"');
        }
    }

    /** Python's {@code str}, {@code dict} and sequence methods that chat templates call. */
    static final class PythonMethods extends ELResolver {
        @Override
        public Object invoke(ELContext context, Object base, Object method, Class<?>[] paramTypes, Object[] params) {
            if (method == null || base == null) {
                return null;
            }
            Object[] args = params == null ? new Object[0] : params;
            Object result = switch (base) {
                case String s -> string(s, method.toString(), args);
                case Map<?, ?> map -> dict(map, method.toString(), args);
                case List<?> list when method.toString().equals("pyslice") -> slice(list, args);
                default -> NOT_OURS;
            };
            if (result == NOT_OURS) {
                return null;   // the next resolver tries
            }
            context.setPropertyResolved(true);
            return result;
        }

        private static final Object NOT_OURS = new Object();

        private static Object string(String s, String method, Object[] a) {
            return switch (method) {
                case "startswith" -> affix(s, a, true);
                case "endswith" -> affix(s, a, false);
                case "strip" -> strip(s, arg(a, 0), true, true);
                case "lstrip" -> strip(s, arg(a, 0), true, false);
                case "rstrip" -> strip(s, arg(a, 0), false, true);
                case "split" -> split(s, arg(a, 0), a.length > 1 && a[1] instanceof Number n ? n.intValue() : -1);
                case "upper" -> s.toUpperCase(Locale.ROOT);
                case "lower" -> s.toLowerCase(Locale.ROOT);
                case "pyslice" -> sliceString(s, a);
                default -> NOT_OURS;
            };
        }

        private static String arg(Object[] a, int i) {
            return i < a.length && a[i] != null ? a[i].toString() : null;
        }

        private static Boolean affix(String s, Object[] a, boolean prefix) {
            String plain = UserText.Marked.parse(s).plain();
            List<Object> candidates = a.length > 0 && a[0] instanceof Collection<?> c ? new ArrayList<>(c) : List.of(a.length > 0 ? a[0] : "");
            for (Object o : candidates) {
                String x = String.valueOf(o);
                if (prefix ? plain.startsWith(x) : plain.endsWith(x)) {
                    return true;
                }
            }
            return false;
        }

        /** Python's {@code str.split(sep, maxsplit)}; each piece keeps its marks. */
        private static List<String> split(String s, String sep, int maxsplit) {
            UserText.Marked m = UserText.Marked.parse(s);
            String p = m.plain();
            List<String> out = new ArrayList<>();
            if (sep == null) {
                int i = 0;
                while (true) {
                    while (i < p.length() && isPythonSpace(p.charAt(i))) {
                        i++;
                    }
                    if (i == p.length()) {
                        break;
                    }
                    if (maxsplit >= 0 && out.size() == maxsplit) {
                        int end = p.length();
                        while (end > i && isPythonSpace(p.charAt(end - 1))) {
                            end--;
                        }
                        out.add(m.substring(i, end).emit());
                        break;
                    }
                    int j = i;
                    while (j < p.length() && !isPythonSpace(p.charAt(j))) {
                        j++;
                    }
                    out.add(m.substring(i, j).emit());
                    i = j;
                }
                return out;
            }
            if (sep.isEmpty()) {
                throw new IllegalArgumentException("split: empty separator");
            }
            int from = 0;
            int k;
            while ((maxsplit < 0 || out.size() < maxsplit) && (k = p.indexOf(sep, from)) >= 0) {
                out.add(m.substring(from, k).emit());
                from = k + sep.length();
            }
            out.add(m.substring(from, p.length()).emit());
            return out;
        }

        private static Object dict(Map<?, ?> map, String method, Object[] a) {
            return switch (method) {
                case "items" -> map.entrySet().stream().map(e -> List.of(e.getKey(), e.getValue())).toList();
                case "keys" -> List.copyOf(map.keySet());
                case "values" -> new ArrayList<>(map.values());
                case "get" -> map.containsKey(a.length > 0 ? a[0] : null) ? map.get(a[0]) : (a.length > 1 ? a[1] : null);
                default -> NOT_OURS;
            };
        }

        private static int[] bounds(int length, Object[] a) {
            Integer start = a.length > 0 && a[0] instanceof Number n ? n.intValue() : null;
            Integer stop = a.length > 1 && a[1] instanceof Number n ? n.intValue() : null;
            int step = a.length > 2 && a[2] instanceof Number n ? n.intValue() : 1;
            if (step == 0) {
                throw new IllegalArgumentException("slice step cannot be zero");
            }
            int lo = step > 0 ? 0 : -1;
            int hi = step > 0 ? length : length - 1;
            int s = start == null ? (step > 0 ? lo : hi) : clamp(start < 0 ? start + length : start, lo, hi);
            int e = stop == null ? (step > 0 ? hi : lo) : clamp(stop < 0 ? stop + length : stop, lo, hi);
            return new int[] {s, e, step};
        }

        private static int clamp(int v, int lo, int hi) {
            return Math.max(lo, Math.min(hi, v));
        }

        private static List<Object> slice(List<?> list, Object[] a) {
            int[] b = bounds(list.size(), a);
            List<Object> out = new ArrayList<>();
            for (int i = b[0]; b[2] > 0 ? i < b[1] : i > b[1]; i += b[2]) {
                out.add(list.get(i));
            }
            return out;
        }

        private static String sliceString(String s, Object[] a) {
            UserText.Marked m = UserText.Marked.parse(s);
            int[] b = bounds(m.plain().length(), a);
            StringBuilder plain = new StringBuilder();
            List<Boolean> mask = new ArrayList<>();
            for (int i = b[0]; b[2] > 0 ? i < b[1] : i > b[1]; i += b[2]) {
                plain.append(m.plain().charAt(i));
                mask.add(m.fromUser()[i]);
            }
            boolean[] fromUser = new boolean[mask.size()];
            for (int i = 0; i < fromUser.length; i++) {
                fromUser[i] = mask.get(i);
            }
            return new UserText.Marked(plain.toString(), fromUser).emit();
        }

        @Override
        public Object getValue(ELContext context, Object base, Object property) {
            return null;
        }

        @Override
        public Class<?> getType(ELContext context, Object base, Object property) {
            return null;
        }

        @Override
        public void setValue(ELContext context, Object base, Object property, Object value) {
        }

        @Override
        public boolean isReadOnly(ELContext context, Object base, Object property) {
            return true;
        }

        @Override
        public Iterator<FeatureDescriptor> getFeatureDescriptors(ELContext context, Object base) {
            return null;
        }

        @Override
        public Class<?> getCommonPropertyType(ELContext context, Object base) {
            return null;
        }
    }
}
