package dev.pagewarden.platform.completion;

import dev.pagewarden.core.grammar.JsonGrammar;
import dev.pagewarden.core.grammar.SchemaException;
import dev.pagewarden.core.tools.ToolFormat;
import dev.pagewarden.core.tools.ToolSpec;
import dev.pagewarden.platform.error.ApiException;
import tools.jackson.databind.JsonNode;

import java.util.ArrayList;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * A request's tools: the functions (OpenAI's shape, as templates take them, and compiled), which of them the model
 * must or may call, and whether it may call several at once. Every parameter schema is compiled even when no call
 * is forced, so a schema the grammar cannot take is a 400 naming the keyword, as for {@code response_format}.
 *
 * @param definitions {@code {"type":"function","function":{"name","description","parameters"}}} each
 * @param named       the function {@code tool_choice} names; null unless {@link Choice#NAMED}
 */
record ToolRequest(List<Map<String, Object>> definitions, List<ToolSpec> specs, Choice choice, String named,
                   boolean parallel) {

    /** {@code tool_choice}: none (tools not offered), auto (the model decides), required (some call), named. */
    enum Choice {
        NONE, AUTO, REQUIRED, NAMED
    }

    /** The forced choice as an error message names it. */
    String describeChoice() {
        return choice == Choice.NAMED ? "tool_choice naming function '" + named + "'"
                : "tool_choice \"" + choice.name().toLowerCase(java.util.Locale.ROOT) + "\"";
    }

    private static final Set<String> CHAT_FUNCTION_FIELDS = Set.of("name", "description", "parameters", "strict");
    private static final Set<String> RESPONSES_TOOL_FIELDS = Set.of("type", "name", "description", "parameters", "strict");
    private static final String EMPTY_PARAMETERS = "{\"type\":\"object\",\"properties\":{}}";

    /** Whether the tools are offered: rendered into the prompt and looked for in the output. */
    boolean offered() {
        return choice != Choice.NONE && !specs.isEmpty();
    }

    /** Whether the answer must be a call: decoding follows the call grammar. */
    boolean forced() {
        return choice == Choice.REQUIRED || choice == Choice.NAMED;
    }

    /** The grammar of one call to an allowed function (the named one, or any), in {@code format}. */
    JsonGrammar callGrammar(ToolFormat format) {
        return format.forcedCall(choice == Choice.NAMED
                ? specs.stream().filter(s -> s.name().equals(named)).toList() : specs);
    }

    /** The function names, for reading calls back. */
    Set<String> names() {
        Set<String> names = new HashSet<>();
        specs.forEach(s -> names.add(s.name()));
        return names;
    }

    /**
     * {@code tools}, {@code tool_choice} and {@code parallel_tool_calls} of a chat ({@code responses}: of a
     * {@code POST /v1/responses}, whose function tools are flat: {@code {"type":"function","name",...}}); null
     * when none of them is given.
     */
    static ToolRequest parse(JsonNode root, boolean responses) {
        JsonNode tools = root.get("tools");
        JsonNode choice = root.get("tool_choice");
        boolean parallel = RequestParser.bool(root, "parallel_tool_calls", true);
        boolean given = tools != null && !tools.isNull();
        if (!given && (choice == null || choice.isNull()) && !root.has("parallel_tool_calls")) {
            return null;
        }
        List<Map<String, Object>> definitions = new ArrayList<>();
        List<ToolSpec> specs = new ArrayList<>();
        if (given) {
            if (!tools.isArray()) {
                throw ApiException.invalid("tools", "'tools' must be an array of function tools");
            }
            for (int i = 0; i < tools.size(); i++) {
                definition(tools.get(i), "tools[" + i + "]", responses, definitions, specs);
            }
        }
        Set<String> names = new HashSet<>();
        for (ToolSpec s : specs) {
            if (!names.add(s.name())) {
                throw ApiException.invalid("tools", "function names must be unique; '" + s.name() + "' is given twice");
            }
        }
        Choice c = specs.isEmpty() ? Choice.NONE : Choice.AUTO;
        String named = null;
        if (choice != null && !choice.isNull()) {
            if (choice.isString()) {
                c = switch (choice.stringValue()) {
                    case "none" -> Choice.NONE;
                    case "auto" -> c;
                    case "required" -> Choice.REQUIRED;
                    default -> throw ApiException.invalid("tool_choice", "tool_choice must be \"none\", \"auto\", "
                            + "\"required\" or a function to call");
                };
            } else {
                named = namedChoice(choice, responses);
                if (!names.contains(named)) {
                    throw ApiException.invalid("tool_choice", "tool_choice names function '" + named + "', which is not "
                            + "in 'tools'");
                }
                c = Choice.NAMED;
            }
            if (c == Choice.REQUIRED && specs.isEmpty()) {
                throw ApiException.invalid("tool_choice", "tool_choice \"required\" needs at least one function in 'tools'");
            }
        }
        return new ToolRequest(List.copyOf(definitions), List.copyOf(specs), c, named, parallel);
    }

    private static String namedChoice(JsonNode choice, boolean responses) {
        JsonNode name = !choice.isObject() || !"function".equals(choice.path("type").asString("")) ? null
                : responses ? choice.get("name") : choice.path("function").get("name");
        if (name == null || !name.isString()) {
            throw ApiException.invalid("tool_choice", "tool_choice must be \"none\", \"auto\", \"required\" or "
                    + (responses ? "{\"type\":\"function\",\"name\":...}" : "{\"type\":\"function\",\"function\":{\"name\":...}}"));
        }
        return name.stringValue();
    }

    private static void definition(JsonNode tool, String where, boolean responses, List<Map<String, Object>> out,
                                   List<ToolSpec> specs) {
        if (!tool.isObject() || !"function".equals(tool.path("type").asString(""))) {
            throw ApiException.invalid(where + ".type", where + " must be a function tool ({\"type\":\"function\", ...}); "
                    + "other tool types are not supported");
        }
        JsonNode fn;
        String at;
        if (responses) {
            fn = tool;
            at = where;
            unknown(tool, RESPONSES_TOOL_FIELDS, where);
        } else {
            unknown(tool, Set.of("type", "function"), where);
            fn = tool.get("function");
            at = where + ".function";
            if (fn == null || !fn.isObject()) {
                throw ApiException.invalid(at, at + " is required and must be an object");
            }
            unknown(fn, CHAT_FUNCTION_FIELDS, at);
        }
        JsonNode name = fn.get("name");
        if (name == null || !name.isString() || !name.stringValue().matches("[a-zA-Z0-9_-]{1,64}")) {
            throw ApiException.invalid(at + ".name", at + ".name is required: up to 64 letters, digits, underscores "
                    + "and dashes");
        }
        JsonNode description = fn.get("description");
        if (description != null && !description.isNull() && !description.isString()) {
            throw ApiException.invalid(at + ".description", at + ".description must be a string");
        }
        JsonNode strict = fn.get("strict");
        if (strict != null && !strict.isNull() && !strict.isBoolean()) {
            throw ApiException.invalid(at + ".strict", at + ".strict must be a boolean");
        }
        JsonNode parameters = fn.get("parameters");
        if (parameters != null && !parameters.isNull() && !parameters.isObject()) {
            throw ApiException.invalid(at + ".parameters", at + ".parameters must be a JSON schema object");
        }
        String schema = parameters == null || parameters.isNull() ? EMPTY_PARAMETERS : parameters.toString();
        JsonGrammar grammar;
        try {
            grammar = JsonGrammar.compile(schema);
        } catch (SchemaException e) {
            throw ApiException.invalid(at + ".parameters", at + ".parameters" + e.path() + ": " + e.getMessage());
        }
        specs.add(new ToolSpec(name.stringValue(), grammar));
        Map<String, Object> function = new LinkedHashMap<>();
        function.put("name", name.stringValue());
        if (description != null && description.isString()) {
            function.put("description", description.stringValue());
        }
        function.put("parameters", parameters == null || parameters.isNull()
                ? Map.of("type", "object", "properties", Map.of()) : plain(parameters));
        Map<String, Object> definition = new LinkedHashMap<>();
        definition.put("type", "function");
        definition.put("function", function);
        out.add(definition);
    }

    private static void unknown(JsonNode node, Set<String> fields, String where) {
        for (String f : node.propertyNames()) {
            if (!fields.contains(f)) {
                throw ApiException.invalid(where + "." + f, "unknown_parameter",
                        "Unrecognized request argument supplied: " + where + "." + f);
            }
        }
    }

    /** JSON as plain Java values (maps in order, lists, strings, numbers, booleans, null), as templates take them. */
    static Object plain(JsonNode n) {
        if (n.isObject()) {
            Map<String, Object> m = new LinkedHashMap<>();
            n.properties().forEach(e -> m.put(e.getKey(), plain(e.getValue())));
            return m;
        }
        if (n.isArray()) {
            List<Object> l = new ArrayList<>();
            n.forEach(x -> l.add(plain(x)));
            return l;
        }
        if (n.isString()) {
            return n.stringValue();
        }
        if (n.isNumber()) {
            return n.isIntegralNumber() && n.canConvertToLong() ? (Object) n.longValue() : (Object) n.doubleValue();
        }
        if (n.isBoolean()) {
            return n.booleanValue();
        }
        return null;
    }
}
