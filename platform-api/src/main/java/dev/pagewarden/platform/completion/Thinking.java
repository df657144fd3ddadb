package dev.pagewarden.platform.completion;

import dev.pagewarden.core.template.ChatTemplate;
import dev.pagewarden.core.template.ReasoningSplitter;
import dev.pagewarden.platform.error.ApiException;
import tools.jackson.databind.JsonNode;

import java.util.ArrayList;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * What a request says about the model's thinking: its extra chat template variables ({@code chat_template_kwargs},
 * rendered into the template's context) and the reasoning effort it asked for. An effort only switches thinking:
 * {@code none} and {@code minimal} render the template with {@code enable_thinking} false, {@code low}, {@code medium}
 * and {@code high} with it true; a template that takes no such variable ignores it.
 *
 * @param templateVariables the variables the chat is rendered with (JSON values: maps, lists, strings, numbers,
 *                          booleans, null), {@code enable_thinking} from the effort included
 * @param effort            the effort as asked ({@code reasoning_effort}, or Responses' {@code reasoning.effort});
 *                          null when not given
 */
record Thinking(Map<String, Object> templateVariables, String effort) {
    static final Thinking NONE = new Thinking(Map.of(), null);
    static final String ENABLE = "enable_thinking";
    private static final List<String> EFFORTS = List.of("none", "minimal", "low", "medium", "high");
    private static final Set<String> REASONING_FIELDS = Set.of("effort", "summary", "generate_summary");
    private static final Set<String> SUMMARIES = Set.of("auto", "concise", "detailed");

    /** A chat's {@code chat_template_kwargs} and {@code reasoning_effort}; each bad value a 400 naming it. */
    static Thinking ofChat(JsonNode root) {
        JsonNode kwargs = root.get("chat_template_kwargs");
        Map<String, Object> variables = new LinkedHashMap<>();
        if (kwargs != null && !kwargs.isNull()) {
            if (!kwargs.isObject()) {
                throw ApiException.invalid("chat_template_kwargs", "'chat_template_kwargs' must be an object of "
                        + "template variables, got " + kwargs.getNodeType().name().toLowerCase());
            }
            for (Map.Entry<String, JsonNode> e : kwargs.properties()) {
                if (ChatTemplate.CONTEXT_NAMES.contains(e.getKey())) {
                    throw ApiException.invalid("chat_template_kwargs." + e.getKey(), "chat_template_kwargs."
                            + e.getKey() + " is set by the server from the request and cannot be passed as a variable");
                }
                variables.put(e.getKey(), value(e.getValue()));
            }
            Object enable = variables.get(ENABLE);
            if (enable != null && !(enable instanceof Boolean)) {
                throw ApiException.invalid("chat_template_kwargs." + ENABLE, "chat_template_kwargs." + ENABLE
                        + " must be a boolean");
            }
        }
        return withEffort(variables, effort(root.get("reasoning_effort"), "reasoning_effort"), "reasoning_effort");
    }

    /** Responses' {@code reasoning}: {@code effort} switches thinking; a summary may be asked for, none is made. */
    static Thinking ofResponse(JsonNode root) {
        JsonNode reasoning = root.get("reasoning");
        if (reasoning == null || reasoning.isNull()) {
            return NONE;
        }
        if (!reasoning.isObject()) {
            throw ApiException.invalid("reasoning", "'reasoning' must be an object");
        }
        for (String name : reasoning.propertyNames()) {
            if (!REASONING_FIELDS.contains(name)) {
                throw ApiException.invalid("reasoning." + name, "unknown_parameter",
                        "Unrecognized request argument supplied: reasoning." + name);
            }
            JsonNode v = reasoning.get(name);
            if (!name.equals("effort") && !v.isNull() && !(v.isString() && SUMMARIES.contains(v.stringValue()))) {
                throw ApiException.invalid("reasoning." + name, "reasoning." + name + " must be one of " + SUMMARIES);
            }
        }
        return withEffort(new LinkedHashMap<>(), effort(reasoning.get("effort"), "reasoning.effort"), "reasoning.effort");
    }

    /**
     * A splitter for this chat's output, when its model's template thinks; null otherwise (the answer then has no
     * reasoning field at all). {@code prompt}: the rendered chat, which may end inside a think span it opened.
     */
    static ReasoningSplitter splitter(ChatTemplate template, List<ChatTemplate.Segment> prompt) {
        if (template == null || !ReasoningSplitter.thinks(template.source())) {
            return null;
        }
        StringBuilder tail = new StringBuilder();
        for (int i = prompt.size() - 1; i >= 0 && tail.length() < 256; i--) {
            tail.insert(0, prompt.get(i).text());
        }
        return new ReasoningSplitter(ReasoningSplitter.opensThinking(tail.toString()));
    }

    private static String effort(JsonNode v, String param) {
        if (v == null || v.isNull()) {
            return null;
        }
        if (!v.isString() || !EFFORTS.contains(v.stringValue())) {
            throw ApiException.invalid(param, param + " must be one of " + EFFORTS + ", got " + v);
        }
        return v.stringValue();
    }

    private static Thinking withEffort(Map<String, Object> variables, String effort, String param) {
        if (effort != null) {
            boolean think = !effort.equals("none") && !effort.equals("minimal");
            Object asked = variables.putIfAbsent(ENABLE, think);
            if (asked != null && !asked.equals(think)) {
                throw ApiException.invalid(param, param + " '" + effort + "' " + (think ? "asks for" : "switches off")
                        + " thinking, but chat_template_kwargs." + ENABLE + " is " + asked);
            }
        }
        return variables.isEmpty() && effort == null ? NONE
                : new Thinking(Collections.unmodifiableMap(variables), effort);
    }

    /** A JSON value as the template sees it. */
    private static Object value(JsonNode v) {
        if (v.isObject()) {
            Map<String, Object> m = new LinkedHashMap<>();
            v.properties().forEach(e -> m.put(e.getKey(), value(e.getValue())));
            return m;
        }
        if (v.isArray()) {
            List<Object> l = new ArrayList<>(v.size());
            v.forEach(e -> l.add(value(e)));
            return l;
        }
        if (v.isString()) {
            return v.stringValue();
        }
        if (v.isBoolean()) {
            return v.booleanValue();
        }
        if (v.isIntegralNumber() && v.canConvertToLong()) {
            return v.longValue();
        }
        if (v.isNumber()) {
            return v.doubleValue();
        }
        return null;
    }
}
