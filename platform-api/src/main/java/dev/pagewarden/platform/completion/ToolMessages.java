package dev.pagewarden.platform.completion;

import dev.pagewarden.core.template.ChatMessage.ToolCall;
import dev.pagewarden.platform.error.ApiException;
import tools.jackson.databind.JsonNode;

import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.function.Function;

/**
 * The tool fields of a chat message: an assistant's {@code tool_calls} (its content may then be null) and a tool
 * message's {@code tool_call_id}, each error naming the field.
 */
final class ToolMessages {
    private ToolMessages() {
    }

    /** Message {@code m} at {@code where}, of {@code role}; {@code content} reads its content (it refuses null). */
    static ChatMessage read(JsonNode m, String where, String role, Function<JsonNode, String> content) {
        List<ToolCall> calls = calls(m.get("tool_calls"), where, role);
        JsonNode id = m.get("tool_call_id");
        String toolCallId = null;
        if (role.equals("tool")) {
            if (id == null || !id.isString() || id.stringValue().isEmpty()) {
                throw ApiException.invalid(where + ".tool_call_id", where + ".tool_call_id is required for a tool "
                        + "message: the id of the call it answers");
            }
            toolCallId = id.stringValue();
        } else if (id != null && !id.isNull()) {
            throw ApiException.invalid(where + ".tool_call_id", where + ".tool_call_id belongs to tool messages only");
        }
        JsonNode c = m.get("content");
        String text = (c == null || c.isNull()) && !calls.isEmpty() ? "" : content.apply(c);
        return new ChatMessage(role, text, calls, toolCallId);
    }

    private static List<ToolCall> calls(JsonNode node, String where, String role) {
        if (node == null || node.isNull()) {
            return List.of();
        }
        String at = where + ".tool_calls";
        if (!role.equals("assistant")) {
            throw ApiException.invalid(at, at + " belongs to assistant messages only");
        }
        if (!node.isArray()) {
            throw ApiException.invalid(at, at + " must be an array of function calls");
        }
        List<ToolCall> out = new ArrayList<>();
        for (int j = 0; j < node.size(); j++) {
            JsonNode call = node.get(j);
            String here = at + "[" + j + "]";
            if (!call.isObject() || !"function".equals(call.path("type").asString(""))) {
                throw ApiException.invalid(here, here + " must be {\"id\":...,\"type\":\"function\",\"function\":"
                        + "{\"name\":...,\"arguments\":...}}");
            }
            unknown(call, Set.of("id", "type", "function"), here);
            JsonNode fn = call.get("function");
            if (fn == null || !fn.isObject()) {
                throw ApiException.invalid(here + ".function", here + ".function is required and must be an object");
            }
            unknown(fn, Set.of("name", "arguments"), here + ".function");
            out.add(new ToolCall(string(call, "id", here), string(fn, "name", here + ".function"),
                    string(fn, "arguments", here + ".function")));
        }
        return List.copyOf(out);
    }

    private static String string(JsonNode node, String field, String where) {
        JsonNode v = node.get(field);
        if (v == null || !v.isString()) {
            throw ApiException.invalid(where + "." + field, where + "." + field + " is required and must be a string");
        }
        return v.stringValue();
    }

    private static void unknown(JsonNode node, Set<String> fields, String where) {
        for (String f : node.propertyNames()) {
            if (!fields.contains(f)) {
                throw ApiException.invalid(where + "." + f, "unknown_parameter",
                        "Unrecognized request argument supplied: " + where + "." + f);
            }
        }
    }
}
