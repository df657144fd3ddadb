package dev.pagewarden.core.grammar;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;

import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * The JSON a response format allows, compiled from a JSON schema (a subset) or "any JSON object".
 *
 * <p>The subset: {@code type} (one name or a list of them: object, array, string, number, integer, boolean, null),
 * {@code properties}, {@code required}, {@code additionalProperties} (false only: an object holds its listed
 * properties and no other), {@code items}, {@code minItems}, {@code maxItems}, {@code minLength}, {@code maxLength},
 * {@code enum}, {@code const}, {@code anyOf} (alone, besides annotations) and on integers {@code minimum},
 * {@code maximum}, {@code exclusiveMinimum}, {@code exclusiveMaximum}; the annotations {@code title},
 * {@code description}, {@code default}, {@code examples}, {@code $comment}, {@code $schema} and {@code $id} are
 * ignored. Any other keyword is refused by name. The root must be an object.
 *
 * <p>What the output looks like: compact JSON (no whitespace), an object's properties in the schema's order (an
 * optional one may be left out, a required one never), strings without {@code \\u} escapes, numbers with at most 15
 * digits before and after the point and 2 in the exponent.
 */
public final class JsonGrammar {
    private static final ObjectMapper JSON = new ObjectMapper();
    private static final Set<String> ANNOTATIONS = Set.of("title", "description", "default", "examples", "$comment",
            "$schema", "$id");
    private static final Set<String> KEYWORDS = Set.of("type", "properties", "required", "additionalProperties",
            "items", "minItems", "maxItems", "minLength", "maxLength", "enum", "const", "anyOf", "minimum", "maximum", "exclusiveMinimum",
            "exclusiveMaximum");
    /** The widest integer the grammar writes (15 digits). */
    private static final long WIDEST = 999_999_999_999_999L;
    private static final JsonGrammar ANY_OBJECT = new JsonGrammar(new Node.Obj(List.of(), true), "json_object");

    final Node root;
    private final String key;

    private JsonGrammar(Node root, String key) {
        this.root = root;
        this.key = key;
    }

    /** Any JSON object ({@code response_format} json_object). */
    public static JsonGrammar anyObject() {
        return ANY_OBJECT;
    }

    /** Compiles a JSON schema; throws {@link SchemaException} naming what it cannot take. */
    public static JsonGrammar compile(String schemaJson) {
        JsonNode schema;
        try {
            schema = JSON.readTree(schemaJson);
        } catch (JsonProcessingException e) {
            throw new SchemaException("", "the schema is not valid JSON");
        }
        if (schema == null || !schema.isObject()) {
            throw new SchemaException("", "the schema must be a JSON object");
        }
        if (!schema.has("type") || !schema.get("type").isTextual() || !schema.get("type").asText().equals("object")) {
            throw new SchemaException("", "the root schema must be of type 'object'");
        }
        return new JsonGrammar(node(schema, ""), "schema:" + schema);
    }

    /**
     * The grammar whose {@link #key} is {@code key} (an engine node compiles what the platform sends): a schema, any
     * object, or a tool call's text, sequences and alternatives of them.
     */
    public static JsonGrammar ofKey(String key) {
        if (key == null) {
            throw new SchemaException("", "not a grammar's key");
        }
        if (ANY_OBJECT.key.equals(key)) {
            return ANY_OBJECT;
        }
        if (key.startsWith("schema:")) {
            return compile(key.substring("schema:".length()));
        }
        if (key.startsWith("text:")) {
            try {
                return text(JSON.readValue(key.substring("text:".length()), String.class));
            } catch (JsonProcessingException | IllegalArgumentException e) {
                throw new SchemaException("", "not a grammar's key");
            }
        }
        if (key.startsWith("seq:")) {
            return sequence(parts(key.substring("seq:".length())));
        }
        if (key.startsWith("any:")) {
            return oneOf(parts(key.substring("any:".length())));
        }
        throw new SchemaException("", "not a grammar's key");
    }

    /** The grammars of a {@link #keys} list: {@code [} then each key led by its length and a colon, then {@code ]}. */
    private static List<JsonGrammar> parts(String list) {
        if (!list.startsWith("[") || !list.endsWith("]")) {
            throw new SchemaException("", "not a grammar's key");
        }
        List<JsonGrammar> parts = new ArrayList<>();
        int at = 1;
        int end = list.length() - 1;
        while (at < end) {
            int colon = list.indexOf(':', at);
            int length;
            try {
                length = Integer.parseInt(list.substring(at, colon));
            } catch (RuntimeException e) {
                throw new SchemaException("", "not a grammar's key");
            }
            if (length < 0 || colon + 1 + length > end) {
                throw new SchemaException("", "not a grammar's key");
            }
            parts.add(ofKey(list.substring(colon + 1, colon + 1 + length)));
            at = colon + 1 + length;
        }
        if (parts.isEmpty()) {
            throw new SchemaException("", "not a grammar's key");
        }
        return parts;
    }

    /** Exactly {@code text} (UTF-8): the fixed text around a tool call's arguments. */
    public static JsonGrammar text(String text) {
        if (text.isEmpty()) {
            throw new IllegalArgumentException("the text must not be empty");
        }
        return new JsonGrammar(new Node.Lit(text.getBytes(StandardCharsets.UTF_8)), "text:" + quoted(text));
    }

    /** {@code parts} one after the other. */
    public static JsonGrammar sequence(List<JsonGrammar> parts) {
        if (parts.isEmpty()) {
            throw new IllegalArgumentException("a sequence needs at least one part");
        }
        return parts.size() == 1 ? parts.getFirst() : new JsonGrammar(new Node.Seq(parts.stream()
                .map(g -> g.root).toList()), "seq:" + keys(parts));
    }

    /** Any one of {@code options}. */
    public static JsonGrammar oneOf(List<JsonGrammar> options) {
        if (options.isEmpty()) {
            throw new IllegalArgumentException("oneOf needs at least one option");
        }
        return options.size() == 1 ? options.getFirst() : new JsonGrammar(new Node.AnyOf(options.stream()
                .map(g -> g.root).toList()), "any:" + keys(options));
    }

    /** The parts' keys, each led by its length, so that no two lists of parts share a key. */
    private static String keys(List<JsonGrammar> parts) {
        StringBuilder sb = new StringBuilder("[");
        for (JsonGrammar g : parts) {
            sb.append(g.key.length()).append(':').append(g.key);
        }
        return sb.append(']').toString();
    }

    /** The schema's compact JSON text: equal keys, equal grammars (what compiled masks are cached by). */
    public String key() {
        return key;
    }

    private static Node node(JsonNode s, String path) {
        if (!s.isObject()) {
            throw new SchemaException(path, "a schema must be a JSON object");
        }
        for (Map.Entry<String, JsonNode> e : s.properties()) {
            if (!KEYWORDS.contains(e.getKey()) && !ANNOTATIONS.contains(e.getKey())) {
                throw new SchemaException(path, "keyword '" + e.getKey() + "' is not supported");
            }
        }
        if (s.has("anyOf")) {
            for (String k : KEYWORDS) {
                if (!k.equals("anyOf") && s.has(k)) {
                    throw new SchemaException(path, "'anyOf' cannot be combined with '" + k + "'");
                }
            }
            JsonNode any = s.get("anyOf");
            if (!any.isArray() || any.isEmpty()) {
                throw new SchemaException(path, "'anyOf' must be a non-empty array of schemas");
            }
            List<Node> options = new ArrayList<>();
            for (int i = 0; i < any.size(); i++) {
                options.add(node(any.get(i), path + ".anyOf[" + i + "]"));
            }
            return new Node.AnyOf(List.copyOf(options));
        }
        if (s.has("const")) {
            return literal(s.get("const"));
        }
        if (s.has("enum")) {
            JsonNode values = s.get("enum");
            if (!values.isArray() || values.isEmpty()) {
                throw new SchemaException(path, "'enum' must be a non-empty array");
            }
            List<Node> options = new ArrayList<>();
            for (JsonNode v : values) {
                options.add(literal(v));
            }
            return options.size() == 1 ? options.getFirst() : new Node.AnyOf(List.copyOf(options));
        }
        JsonNode type = s.get("type");
        if (type == null) {
            throw new SchemaException(path, "a schema needs 'type', 'enum', 'const' or 'anyOf'");
        }
        if (type.isArray()) {
            List<Node> options = new ArrayList<>();
            for (JsonNode t : type) {
                options.add(typed(s, t, path));
            }
            if (options.isEmpty()) {
                throw new SchemaException(path, "'type' must name at least one type");
            }
            return options.size() == 1 ? options.getFirst() : new Node.AnyOf(List.copyOf(options));
        }
        return typed(s, type, path);
    }

    private static Node typed(JsonNode s, JsonNode type, String path) {
        if (!type.isTextual()) {
            throw new SchemaException(path, "'type' must be a type name or a list of them");
        }
        return switch (type.asText()) {
            case "object" -> object(s, path);
            case "array" -> {
                int min = count(s, "minItems", 0, path);
                int max = count(s, "maxItems", -1, path);
                if (max >= 0 && min > max) {
                    throw new SchemaException(path, "'minItems' is greater than 'maxItems'");
                }
                Node items = s.has("items") ? node(s.get("items"), path + ".items") : Node.Any.INSTANCE;
                yield new Node.Arr(items, min, max);
            }
            case "string" -> {
                int min = count(s, "minLength", 0, path);
                int max = count(s, "maxLength", -1, path);
                if (max >= 0 && min > max) {
                    throw new SchemaException(path, "'minLength' is greater than 'maxLength'");
                }
                yield new Node.Str(min, max);
            }
            case "number" -> {
                for (String bound : List.of("minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum")) {
                    if (s.has(bound)) {
                        throw new SchemaException(path, "keyword '" + bound + "' is supported on integers only");
                    }
                }
                yield new Node.Num(false);
            }
            case "integer" -> integer(s, path);
            case "boolean" -> new Node.AnyOf(List.of(Automaton.literal("true"), Automaton.literal("false")));
            case "null" -> Automaton.literal("null");
            default -> throw new SchemaException(path, "type '" + type.asText() + "' is not supported");
        };
    }

    private static Node object(JsonNode s, String path) {
        JsonNode extra = s.get("additionalProperties");
        if (extra != null && !(extra.isBoolean() && !extra.asBoolean())) {
            throw new SchemaException(path, "keyword 'additionalProperties' is supported only as false");
        }
        Set<String> required = new HashSet<>();
        JsonNode req = s.get("required");
        if (req != null) {
            if (!req.isArray()) {
                throw new SchemaException(path, "'required' must be an array of property names");
            }
            for (JsonNode r : req) {
                if (!r.isTextual()) {
                    throw new SchemaException(path, "'required' must be an array of property names");
                }
                required.add(r.asText());
            }
        }
        List<Node.Prop> props = new ArrayList<>();
        JsonNode properties = s.get("properties");
        if (properties != null) {
            if (!properties.isObject()) {
                throw new SchemaException(path, "'properties' must be an object");
            }
            for (Map.Entry<String, JsonNode> e : properties.properties()) {
                String name = e.getKey();
                props.add(Node.Prop.of(name, node(e.getValue(), path + ".properties." + name),
                        required.remove(name), quoted(name)));
            }
        }
        if (!required.isEmpty()) {
            throw new SchemaException(path, "required property '" + required.iterator().next()
                    + "' is not in 'properties'");
        }
        return new Node.Obj(List.copyOf(props), false);
    }

    /** An integer, with its bounds when it has any that the 15 digits written do not already keep. */
    private static Node integer(JsonNode s, String path) {
        long min = Math.max(-WIDEST, Math.max(bound(s, "minimum", -WIDEST, 0, path),
                bound(s, "exclusiveMinimum", -WIDEST - 1, 1, path)));
        long max = Math.min(WIDEST, Math.min(bound(s, "maximum", WIDEST, 0, path),
                bound(s, "exclusiveMaximum", WIDEST + 1, -1, path)));
        if (min > max) {
            throw new SchemaException(path, "no integer lies within 'minimum'/'maximum'");
        }
        return min == -WIDEST && max == WIDEST ? new Node.Num(true) : new Node.IntRange(min, max);
    }

    /**
     * A numeric bound as the nearest integer bound: a lower bound rounds up, an upper one down, and an exclusive
     * one moves one further in. Bounds beyond what the grammar writes are clamped (zod's safe-integer bounds).
     */
    private static long bound(JsonNode s, String keyword, long absent, int exclusive, String path) {
        JsonNode v = s.get(keyword);
        if (v == null) {
            return absent;
        }
        if (!v.isNumber()) {
            throw new SchemaException(path, "'" + keyword + "' must be a number");
        }
        double d = v.asDouble();
        boolean lower = keyword.toLowerCase(java.util.Locale.ROOT).endsWith("minimum");
        double rounded = lower ? Math.ceil(d) : Math.floor(d);
        if (exclusive != 0 && rounded == d) {
            rounded += exclusive;
        }
        return (long) Math.max(-WIDEST - 1, Math.min(WIDEST + 1, rounded));
    }

    private static int count(JsonNode s, String keyword, int absent, String path) {
        JsonNode v = s.get(keyword);
        if (v == null) {
            return absent;
        }
        if (!v.canConvertToExactIntegral() || !v.canConvertToInt() || v.asInt() < 0) {
            throw new SchemaException(path, "'" + keyword + "' must be a non-negative integer");
        }
        return v.asInt();
    }

    private static Node.Lit literal(JsonNode value) {
        return Automaton.literal(value.toString());
    }

    private static String quoted(String name) {
        try {
            return JSON.writeValueAsString(name);
        } catch (JsonProcessingException e) {
            throw new IllegalStateException(e);
        }
    }
}
