package dev.pagewarden.platform.completion;

import dev.pagewarden.core.grammar.JsonGrammar;
import dev.pagewarden.core.grammar.SchemaException;
import dev.pagewarden.platform.engine.ModelIds;
import dev.pagewarden.platform.error.ApiException;
import org.springframework.stereotype.Component;
import tools.jackson.databind.JsonNode;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * Reads a {@code POST /v1/responses} body as strictly as {@link RequestParser} reads the others (same JSON reading,
 * same field checks) and maps it onto a chat: {@code instructions} becomes a system message ahead of the
 * {@code input} messages, {@code max_output_tokens} the chat's max_tokens; function tools, {@code tool_choice} and
 * {@code text.format} (json_object, json_schema) map onto the chat's tools and response format, and the
 * {@code function_call} / {@code function_call_output} input items onto an assistant's tool calls and tool messages.
 * Nothing is stored: {@code store: true} and the fields that need a stored response are refused, each naming its
 * field.
 */
@Component
final class ResponsesParser {
    /** A metadata object as OpenAI bounds it: 16 keys of at most 64 characters, values of at most 512. */
    static final int METADATA_KEYS = 16;

    private static final Set<String> FIELDS = Set.of("model", "input", "instructions", "max_output_tokens",
            "temperature", "top_p", "stream", "stream_options", "store", "metadata", "user", "tools", "tool_choice",
            "parallel_tool_calls", "text", "previous_response_id", "conversation", "reasoning", "truncation", "include",
            "background", "service_tier", "prompt", "prompt_cache_key", "safety_identifier", "max_tool_calls",
            "top_logprobs");
    private static final Set<String> ROLES = Set.of("system", "developer", "user", "assistant");
    private static final Set<String> ITEM_FIELDS = Set.of("type", "role", "content", "id", "status");
    private static final Set<String> CALL_FIELDS = Set.of("type", "call_id", "name", "arguments", "id", "status");
    private static final Set<String> OUTPUT_FIELDS = Set.of("type", "call_id", "output", "id", "status");

    private final RequestParser parser;

    ResponsesParser(RequestParser parser) {
        this.parser = parser;
    }

    /**
     * A response request: the chat it runs as, and what the response object echoes back ({@code tools} in the
     * Responses shape, {@code toolChoice} as sent or "auto", {@code textFormat} as sent or text).
     */
    record ResponseRequest(CompletionRequest chat, String instructions, Map<String, String> metadata,
                           boolean parallelToolCalls, List<Map<String, Object>> tools, Object toolChoice,
                           Object textFormat) {
    }

    ResponseRequest parse(byte[] body) {
        JsonNode root = parser.readObject(body);
        for (String name : root.propertyNames()) {
            if (!FIELDS.contains(name)) {
                throw ApiException.invalid(name, "unknown_parameter", "Unrecognized request argument supplied: " + name);
            }
        }
        refuseUnsupported(root);
        JsonGrammar format = textFormat(root.get("text"));
        ToolRequest tools = ToolRequest.parse(root, true);
        RequestParser.checkFormatWithTools(tools, format, "text.format");
        String model = RequestParser.string(root, "model", true);
        if (!ModelIds.valid(model)) {
            throw ApiException.invalid("model", "'model' is not a valid model id: " + ModelIds.problem());
        }
        String instructions = RequestParser.string(root, "instructions", false);
        List<ChatMessage> messages = new ArrayList<>();
        if (instructions != null) {
            messages.add(new ChatMessage("system", instructions));
        }
        messages.addAll(input(root.get("input")));
        Integer maxOutputTokens = RequestParser.optionalInt(root, "max_output_tokens");
        if (maxOutputTokens != null && maxOutputTokens < 1) {
            throw ApiException.invalid("max_output_tokens", "max_output_tokens must be at least 1, got " + maxOutputTokens);
        }
        float temperature = (float) RequestParser.number(root, "temperature", 1.0, 0.0, 2.0);
        float topP = (float) RequestParser.number(root, "top_p", 1.0, 0.0, 1.0);
        if (topP == 0f) {
            throw ApiException.invalid("top_p", "top_p must be greater than 0");
        }
        boolean stream = RequestParser.bool(root, "stream", false);
        JsonNode so = root.get("stream_options");
        if (so != null && !so.isNull()) {
            if (!stream) {
                throw ApiException.invalid("stream_options", "'stream_options' is only allowed when 'stream' is true");
            }
            if (!so.isObject()) {
                throw ApiException.invalid("stream_options", "'stream_options' must be an object");
            }
            for (String name : so.propertyNames()) {
                // obfuscation pads deltas against length side channels; the stream carries none, so either value is true
                if (!name.equals("include_obfuscation")) {
                    throw ApiException.invalid("stream_options." + name, "unknown_parameter",
                            "Unrecognized request argument supplied: stream_options." + name);
                }
                RequestParser.bool(so, name, false);
            }
        }
        boolean parallelToolCalls = RequestParser.bool(root, "parallel_tool_calls", true);
        RequestParser.string(root, "safety_identifier", false); // accepted as a hint; it changes nothing here
        // prompt_cache_key narrows the tenant's prefix cache scope, as on chat
        CompletionRequest chat = new CompletionRequest(CompletionRequest.Kind.RESPONSE, model, null, null,
                List.copyOf(messages), maxOutputTokens, temperature, topP, null, List.of(), stream, false,
                RequestParser.string(root, "user", false), 1, format == null ? CompletionRequest.Controls.NONE
                : new CompletionRequest.Controls(0f, 0f, 1f, 0, 0f, Map.of(), -1, format),
                RequestParser.cacheKey(root, "prompt_cache_key"), null, tools, Thinking.ofResponse(root));
        JsonNode choice = root.get("tool_choice");
        JsonNode text = root.get("text");
        return new ResponseRequest(chat, instructions, metadata(root.get("metadata")), parallelToolCalls,
                toolsEcho(tools), choice == null || choice.isNull() ? "auto" : ToolRequest.plain(choice),
                text == null || text.isNull() || text.path("format").isNull() || text.path("format").isMissingNode()
                        ? Map.of("type", "text") : ToolRequest.plain(text.get("format")));
    }

    /**
     * Fields for what this endpoint does not do: accepted at their neutral value only, otherwise a 400 that names
     * the field. Nothing is stored, so {@code store} must be false (absent is taken as false: nothing is stored).
     */
    private static void refuseUnsupported(JsonNode root) {
        if (RequestParser.bool(root, "store", false)) {
            throw ApiException.invalid("store", "store: true is not supported: responses are never stored here; "
                    + "send \"store\": false");
        }
        JsonNode text = root.get("text");
        if (text != null && !text.isNull()) {
            if (!text.isObject()) {
                throw ApiException.invalid("text", "'text' must be an object");
            }
            for (String name : text.propertyNames()) {
                JsonNode v = text.get(name);
                switch (name) {
                    case "format" -> {
                        // read by textFormat
                    }
                    case "verbosity" -> {
                        if (!v.isNull() && !(v.isString() && v.stringValue().equals("medium"))) {
                            throw ApiException.invalid("text.verbosity", "only text.verbosity \"medium\" is supported");
                        }
                    }
                    default -> throw ApiException.invalid("text." + name, "unknown_parameter",
                            "Unrecognized request argument supplied: text." + name);
                }
            }
        }
        for (String f : List.of("previous_response_id", "conversation")) {
            JsonNode v = root.get(f);
            if (v != null && !v.isNull()) {
                throw ApiException.invalid(f, f + " is not supported: responses are not stored, so there is none to "
                        + "continue; send the whole conversation as 'input'");
            }
        }
        for (String f : List.of("prompt")) {
            JsonNode v = root.get(f);
            if (v != null && !v.isNull() && !(v.isObject() && v.isEmpty())) {
                throw ApiException.invalid(f, f + " is not supported");
            }
        }
        JsonNode truncation = root.get("truncation");
        if (truncation != null && !truncation.isNull()
                && !(truncation.isString() && truncation.stringValue().equals("disabled"))) {
            throw ApiException.invalid("truncation", "only truncation \"disabled\" is supported: an input longer than "
                    + "the context is refused, never cut");
        }
        JsonNode include = root.get("include");
        if (include != null && !include.isNull() && !(include.isArray() && include.isEmpty())) {
            throw ApiException.invalid("include", "include is not supported: there is nothing extra to include");
        }
        if (RequestParser.bool(root, "background", false)) {
            throw ApiException.invalid("background", "background: true is not supported: responses are not stored");
        }
        JsonNode tier = root.get("service_tier");
        if (tier != null && !tier.isNull() && !(tier.isString()
                && (tier.stringValue().equals("auto") || tier.stringValue().equals("default")))) {
            throw ApiException.invalid("service_tier", "service_tier is not supported");
        }
        for (String f : List.of("max_tool_calls", "top_logprobs")) {
            JsonNode v = root.get(f);
            if (v != null && !v.isNull() && !(v.isNumber() && v.doubleValue() == 0.0)) {
                throw ApiException.invalid(f, f + " is not supported");
            }
        }
    }

    /**
     * {@code text.format}: text (null), json_object or json_schema ({@code {"type":"json_schema","name","schema",
     * "strict","description"}}), compiled as chat's {@code response_format}.
     */
    private static JsonGrammar textFormat(JsonNode text) {
        JsonNode f = text == null || !text.isObject() ? null : text.get("format");
        if (f == null || f.isNull()) {
            return null;
        }
        String type = f.isObject() ? f.path("type").asString("") : "";
        Set<String> fields = switch (type) {
            case "text", "json_object" -> Set.of("type");
            case "json_schema" -> Set.of("type", "name", "schema", "strict", "description");
            default -> throw ApiException.invalid("text.format", "text.format must be an object with type 'text', "
                    + "'json_object' or 'json_schema'");
        };
        for (String name : f.propertyNames()) {
            if (!fields.contains(name)) {
                throw ApiException.invalid("text.format." + name, "unknown_parameter",
                        "Unrecognized request argument supplied: text.format." + name);
            }
        }
        return switch (type) {
            case "json_object" -> JsonGrammar.anyObject();
            case "json_schema" -> {
                JsonNode name = f.get("name");
                if (name == null || !name.isString() || !name.stringValue().matches("[a-zA-Z0-9_-]{1,64}")) {
                    throw ApiException.invalid("text.format", "text.format.name is required: up to 64 letters, digits, "
                            + "underscores and dashes");
                }
                JsonNode strict = f.get("strict");
                if (strict != null && !strict.isNull() && !strict.isBoolean()) {
                    throw ApiException.invalid("text.format", "text.format.strict must be a boolean");
                }
                JsonNode schema = f.get("schema");
                if (schema == null || !schema.isObject()) {
                    throw ApiException.invalid("text.format", "text.format.schema is required and must be an object");
                }
                try {
                    yield JsonGrammar.compile(schema.toString());
                } catch (SchemaException e) {
                    throw ApiException.invalid("text.format", "text.format.schema" + e.path() + ": " + e.getMessage());
                }
            }
            default -> null;
        };
    }

    /** The function tools as a response shows them: type, name, description, parameters and strict. */
    private static List<Map<String, Object>> toolsEcho(ToolRequest tools) {
        if (tools == null) {
            return List.of();
        }
        List<Map<String, Object>> out = new ArrayList<>();
        for (Map<String, Object> d : tools.definitions()) {
            Map<?, ?> fn = (Map<?, ?>) d.get("function");
            Map<String, Object> t = new LinkedHashMap<>();
            t.put("type", "function");
            t.put("name", fn.get("name"));
            t.put("description", fn.get("description"));
            t.put("parameters", fn.get("parameters"));
            t.put("strict", true);
            out.add(t);
        }
        return out;
    }

    /** {@code input}: a string (one user message) or an array of message items. */
    private static List<ChatMessage> input(JsonNode input) {
        if (input == null || input.isNull()) {
            throw ApiException.invalid("input", "'input' is required");
        }
        if (input.isString()) {
            return List.of(new ChatMessage("user", input.stringValue()));
        }
        if (!input.isArray() || input.isEmpty()) {
            throw ApiException.invalid("input", "'input' must be a string or a non-empty array of message items");
        }
        List<ChatMessage> out = new ArrayList<>();
        for (int i = 0; i < input.size(); i++) {
            JsonNode item = input.get(i);
            String where = "input[" + i + "]";
            if (!item.isObject()) {
                throw ApiException.invalid(where, where + " must be an object ({\"role\":...,\"content\":...})");
            }
            JsonNode type = item.get("type");
            String kind = type == null || type.isNull() ? "message" : type.isString() ? type.stringValue() : "";
            if (kind.equals("function_call") || kind.equals("function_call_output")) {
                toolItem(item, where, kind, out);
                continue;
            }
            if (!kind.equals("message")) {
                throw ApiException.invalid(where + ".type", where + ".type " + type + " is not supported: only message, "
                        + "function_call and function_call_output items are");
            }
            for (String name : item.propertyNames()) {
                if (!ITEM_FIELDS.contains(name)) {
                    throw ApiException.invalid(where + "." + name, "unknown_parameter",
                            "Unrecognized request argument supplied: " + where + "." + name);
                }
            }
            JsonNode role = item.get("role");
            if (role == null || !role.isString() || !ROLES.contains(role.stringValue())) {
                throw ApiException.invalid(where + ".role", where + ".role must be one of " + ROLES);
            }
            out.add(new ChatMessage(role.stringValue(), content(item.get("content"), where + ".content")));
        }
        return out;
    }

    /**
     * A call the model made earlier joins the assistant turn before it (or starts one); its output becomes a tool
     * message.
     */
    private static void toolItem(JsonNode item, String where, String kind, List<ChatMessage> out) {
        boolean call = kind.equals("function_call");
        for (String name : item.propertyNames()) {
            if (!(call ? CALL_FIELDS : OUTPUT_FIELDS).contains(name)) {
                throw ApiException.invalid(where + "." + name, "unknown_parameter",
                        "Unrecognized request argument supplied: " + where + "." + name);
            }
        }
        String callId = required(item, "call_id", where);
        if (!call) {
            out.add(new ChatMessage("tool", required(item, "output", where), List.of(), callId));
            return;
        }
        dev.pagewarden.core.template.ChatMessage.ToolCall tc = new dev.pagewarden.core.template.ChatMessage.ToolCall(
                callId, required(item, "name", where), required(item, "arguments", where));
        ChatMessage last = out.isEmpty() ? null : out.getLast();
        if (last != null && last.role().equals("assistant")) {
            List<dev.pagewarden.core.template.ChatMessage.ToolCall> calls = new ArrayList<>(last.toolCalls());
            calls.add(tc);
            out.set(out.size() - 1, new ChatMessage("assistant", last.content(), List.copyOf(calls), null));
        } else {
            out.add(new ChatMessage("assistant", "", List.of(tc), null));
        }
    }

    private static String required(JsonNode item, String field, String where) {
        JsonNode v = item.get(field);
        if (v == null || !v.isString()) {
            throw ApiException.invalid(where + "." + field, where + "." + field + " is required and must be a string");
        }
        return v.stringValue();
    }

    /**
     * Text parts: {@code input_text}, and {@code output_text}, what earlier assistant turns hold; an earlier
     * answer's output_text comes back with its (empty) annotations and logprobs.
     */
    private static final RequestParser.TextParts PARTS = new RequestParser.TextParts(Set.of("input_text", "output_text"),
            "only text parts ({\"type\":\"input_text\",\"text\":...}) are supported", "input_text parts",
            (type, field) -> type.equals("output_text") && (field.equals("annotations") || field.equals("logprobs")));

    private static String content(JsonNode c, String where) {
        return RequestParser.text(c, where, PARTS);
    }

    /** Echoed back unchanged; never used. At most 16 string values. */
    private static Map<String, String> metadata(JsonNode m) {
        if (m == null || m.isNull()) {
            return Map.of();
        }
        if (!m.isObject()) {
            throw ApiException.invalid("metadata", "'metadata' must be an object of strings");
        }
        if (m.size() > METADATA_KEYS) {
            throw ApiException.invalid("metadata", "'metadata' may hold at most " + METADATA_KEYS + " keys, got " + m.size());
        }
        Map<String, String> out = new LinkedHashMap<>();
        for (String name : m.propertyNames()) {
            JsonNode v = m.get(name);
            if (name.length() > 64 || !v.isString() || v.stringValue().length() > 512) {
                throw ApiException.invalid("metadata." + name, "metadata keys are at most 64 characters and values "
                        + "strings of at most 512");
            }
            out.put(name, v.stringValue());
        }
        return out;
    }
}
