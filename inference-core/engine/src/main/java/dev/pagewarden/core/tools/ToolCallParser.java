package dev.pagewarden.core.tools;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;

import java.util.ArrayList;
import java.util.List;
import java.util.Set;

/**
 * Reads tool calls out of a model's output in one family's {@link ToolFormat}. A call must name one of the
 * request's functions and carry a JSON object of arguments; anything else (a malformed block, an unknown name) is
 * left in the text, never dropped.
 */
public final class ToolCallParser {
    private static final ObjectMapper JSON = new ObjectMapper()
            .enable(com.fasterxml.jackson.databind.DeserializationFeature.FAIL_ON_TRAILING_TOKENS);
    static final String HERMES_OPEN = "<tool_call>";
    static final String HERMES_CLOSE = "</tool_call>";
    static final String MISTRAL_MARK = "[TOOL_CALLS]";
    static final String PYTHON_TAG = "<|python_tag|>";

    private final ToolFormat format;
    private final Set<String> names;

    public ToolCallParser(ToolFormat format, Set<String> names) {
        this.format = format;
        this.names = Set.copyOf(names);
    }

    public ToolFormat format() {
        return format;
    }

    /** A whole output: its calls, and the text around them (null when there is none but whitespace). */
    public record Parsed(String content, List<ToolCall> calls) {
    }

    /** One piece of output: text, or a call. */
    record Piece(String text, ToolCall call) {
    }

    /** The pieces of {@code text[0, consumed)}: what is settled so far (all of it once the output is finished). */
    record Scan(List<Piece> pieces, int consumed) {
    }

    /**
     * A whole output. Without a call the content is the text exactly; with calls, the text outside them trimmed
     * (null when empty).
     */
    public Parsed parse(String text) {
        Scan scan = scan(text, true, true);
        StringBuilder content = new StringBuilder();
        List<ToolCall> calls = new ArrayList<>();
        for (Piece p : scan.pieces()) {
            if (p.call() != null) {
                calls.add(p.call());
            } else {
                content.append(p.text());
            }
        }
        if (calls.isEmpty()) {
            return new Parsed(text, List.of());
        }
        String rest = content.toString().strip();
        return new Parsed(rest.isEmpty() ? null : rest, List.copyOf(calls));
    }

    /**
     * Scans {@code text}; {@code atStart}: it is the output's beginning (a bare JSON call may only stand there).
     * Unless {@code finished}, text that may still become a call is left unconsumed.
     */
    Scan scan(String text, boolean atStart, boolean finished) {
        if (atStart && jsonLed(text)) {
            if (!finished) {
                return new Scan(List.of(), 0);
            }
            List<ToolCall> calls = bare(text.strip());
            return new Scan(calls == null ? List.of(new Piece(text, null))
                    : calls.stream().map(c -> new Piece(null, c)).toList(), text.length());
        }
        return switch (format) {
            case HERMES -> hermes(text, finished);
            case MISTRAL -> mistral(text, finished);
            case LLAMA3, JSON -> new Scan(text.isEmpty() ? List.of() : List.of(new Piece(text, null)), text.length());
        };
    }

    /**
     * Whether the output so far is (or may become) a bare JSON call: its first non-blank character opens one, or
     * nothing but blanks came yet.
     */
    private boolean jsonLed(String text) {
        String s = text.stripLeading();
        if (s.isEmpty()) {
            return format != ToolFormat.HERMES;
        }
        return switch (format) {
            case HERMES -> false;
            case MISTRAL -> s.charAt(0) == '[';
            case LLAMA3 -> s.charAt(0) == '{' || PYTHON_TAG.startsWith(s.substring(0, Math.min(s.length(), PYTHON_TAG.length())));
            case JSON -> s.charAt(0) == '{' || s.charAt(0) == '[' || s.startsWith("```");
        };
    }

    private Scan hermes(String text, boolean finished) {
        List<Piece> pieces = new ArrayList<>();
        int i = 0;
        while (true) {
            int open = text.indexOf(HERMES_OPEN, i);
            if (open < 0) {
                int end = finished ? text.length() : text.length() - partialMarker(text, HERMES_OPEN);
                if (end > i) {
                    pieces.add(new Piece(text.substring(i, end), null));
                }
                return new Scan(pieces, Math.max(i, end));
            }
            if (open > i) {
                pieces.add(new Piece(text.substring(i, open), null));
            }
            int body = open + HERMES_OPEN.length();
            int close = text.indexOf(HERMES_CLOSE, body);
            if (close < 0 && !finished) {
                return new Scan(pieces, open);
            }
            int end = close < 0 ? text.length() : close + HERMES_CLOSE.length();
            ToolCall call = call(text.substring(body, close < 0 ? text.length() : close).strip(), "arguments");
            pieces.add(call != null ? new Piece(null, call) : new Piece(text.substring(open, end), null));
            i = end;
        }
    }

    private Scan mistral(String text, boolean finished) {
        int mark = text.indexOf(MISTRAL_MARK);
        if (mark < 0) {
            int end = finished ? text.length() : text.length() - partialMarker(text, MISTRAL_MARK);
            return new Scan(end > 0 ? List.of(new Piece(text.substring(0, end), null)) : List.of(), end);
        }
        if (!finished) {
            return new Scan(mark > 0 ? List.of(new Piece(text.substring(0, mark), null)) : List.of(), mark);
        }
        List<Piece> pieces = new ArrayList<>();
        if (mark > 0) {
            pieces.add(new Piece(text.substring(0, mark), null));
        }
        List<ToolCall> calls = bare(text.substring(mark + MISTRAL_MARK.length()).strip());
        if (calls == null) {
            pieces.add(new Piece(text.substring(mark), null));
        } else {
            calls.forEach(c -> pieces.add(new Piece(null, c)));
        }
        return new Scan(pieces, text.length());
    }

    /** How many characters at the end of {@code text} begin {@code marker}: they wait for what follows. */
    static int partialMarker(String text, String marker) {
        for (int n = Math.min(marker.length() - 1, text.length()); n > 0; n--) {
            if (text.endsWith(marker.substring(0, n))) {
                return n;
            }
        }
        return 0;
    }

    /**
     * The calls of a bare output: one object or an array of them, optionally led by {@code <|python_tag|>} or
     * {@code [TOOL_CALLS]}, or fenced as a Markdown json block; Llama's several calls may be separated by
     * semicolons. Null when it is not all calls.
     */
    private List<ToolCall> bare(String s) {
        for (String lead : List.of(PYTHON_TAG, MISTRAL_MARK)) {
            if (s.startsWith(lead)) {
                s = s.substring(lead.length()).strip();
            }
        }
        if (s.startsWith("```")) {
            int nl = s.indexOf('\n');
            if (nl < 0 || !s.endsWith("```") || s.length() < nl + 4) {
                return null;
            }
            s = s.substring(nl + 1, s.length() - 3).strip();
        }
        String argsField = format == ToolFormat.LLAMA3 ? "parameters" : "arguments";
        JsonNode node = read(s);
        if (node == null && format == ToolFormat.LLAMA3 && s.contains(";")) {
            List<ToolCall> calls = new ArrayList<>();
            for (String part : s.split(";")) {
                ToolCall c = call(part.strip(), argsField);
                if (c == null) {
                    return null;
                }
                calls.add(c);
            }
            return calls;
        }
        if (node == null) {
            return null;
        }
        List<ToolCall> calls = new ArrayList<>();
        Iterable<JsonNode> items = node.isArray() ? node : List.of(node);
        for (JsonNode n : items) {
            ToolCall c = call(n, argsField);
            if (c == null) {
                return null;
            }
            calls.add(c);
        }
        return calls.isEmpty() ? null : calls;
    }

    private ToolCall call(String json, String argsField) {
        JsonNode node = read(json);
        return node == null ? null : call(node, argsField);
    }

    /**
     * {@code {"name": ..., "arguments": {...}}} (Llama's {@code parameters} is taken under either name, and
     * arguments given as a string holding a JSON object too).
     */
    private ToolCall call(JsonNode n, String argsField) {
        if (!n.isObject() || !n.path("name").isTextual() || !names.contains(n.get("name").asText())) {
            return null;
        }
        JsonNode args = n.has(argsField) ? n.get(argsField) : n.has("arguments") ? n.get("arguments") : n.get("parameters");
        if (args != null && args.isTextual()) {
            args = read(args.asText());
        }
        if (args == null || !args.isObject()) {
            return null;
        }
        return new ToolCall(n.get("name").asText(), args.toString());
    }

    private static JsonNode read(String s) {
        try {
            return JSON.readTree(s);
        } catch (JsonProcessingException | IllegalArgumentException e) {
            return null;
        }
    }
}
