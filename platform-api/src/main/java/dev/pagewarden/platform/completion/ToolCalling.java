package dev.pagewarden.platform.completion;

import dev.pagewarden.core.grammar.JsonGrammar;
import dev.pagewarden.core.template.ChatTemplate;
import dev.pagewarden.core.tools.ToolCall;
import dev.pagewarden.core.tools.ToolCallParser;
import dev.pagewarden.core.tools.ToolCallStream;
import dev.pagewarden.core.tools.ToolFormat;
import dev.pagewarden.core.tools.ToolPrompt;
import dev.pagewarden.platform.error.ApiException;

import java.security.SecureRandom;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * Tool calling around a generation: the prompt (tools through the model's own template, or the JSON convention of
 * {@link ToolPrompt} for templates that cannot show them), the grammar of a forced call, and the calls read back out
 * of the output in OpenAI's shapes. {@code tool_choice: "none"} leaves the tools out of the prompt and reads no calls;
 * earlier calls and results in the conversation are rendered either way.
 */
final class ToolCalling {
    private static final SecureRandom IDS = new SecureRandom();
    private static final String ALPHABET = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789";

    private ToolCalling() {
    }

    private static boolean offered(CompletionRequest request) {
        return request.tools() != null && request.tools().offered();
    }

    /** The chat's prompt segments, with the tools where they are offered and the client's template variables. */
    static List<ChatTemplate.Segment> segments(ChatTemplate template, CompletionRequest request) {
        List<dev.pagewarden.core.template.ChatMessage> messages = request.messages().stream()
                .map(ChatMessage::toTemplate).toList();
        boolean offered = offered(request);
        if (template.rendersTools()) {
            return template.renderSegments(messages, offered ? request.tools().definitions() : null, true,
                    request.thinking().templateVariables());
        }
        boolean toolTurns = messages.stream().anyMatch(m -> !m.toolCalls().isEmpty() || m.role().equals("tool"));
        if (offered || toolTurns) {
            messages = ToolPrompt.inline(messages, offered ? request.tools().definitions() : null);
        }
        return template.renderSegments(messages, true, request.thinking().templateVariables());
    }

    /**
     * What decoding must follow: a forced call's grammar; with tools on auto and a response format, either a call or
     * the format; otherwise the response format alone (null: free text).
     */
    static JsonGrammar grammar(ChatTemplate template, CompletionRequest request) {
        JsonGrammar format = request.controls().format();
        if (!offered(request)) {
            return format;
        }
        JsonGrammar call = request.tools().callGrammar(ToolFormat.of(template));
        if (request.tools().forced()) {
            return call;
        }
        return format == null ? null : JsonGrammar.oneOf(List.of(call, format));
    }

    /**
     * The engine refused the grammar (engine nodes decode without one): for a forced call without a response format,
     * the refusal names tool_choice, what the request asked for.
     */
    static ApiException inToolTerms(CompletionRequest request, ApiException e) {
        if (!"response_format".equals(e.error().param()) || !offered(request) || !request.tools().forced()
                || request.controls().format() != null) {
            return e;
        }
        return ApiException.invalid("tool_choice", request.tools().describeChoice() + " needs constrained decoding, "
                + "which is not available when serving from engine nodes; use \"auto\"");
    }

    /** The reader of calls in this request's output; null when no tools are offered. */
    static ToolCallParser parser(ChatTemplate template, CompletionRequest request) {
        return offered(request) ? new ToolCallParser(ToolFormat.of(template), request.tools().names()) : null;
    }

    /** A fresh call id: {@code call_} and 24 letters and digits. */
    static String callId() {
        StringBuilder sb = new StringBuilder("call_");
        for (int i = 0; i < 24; i++) {
            sb.append(ALPHABET.charAt(IDS.nextInt(ALPHABET.length())));
        }
        return sb.toString();
    }

    /** A chat answer: its content (null when it is only calls) and its {@code tool_calls}, when it made any. */
    static Map<String, Object> message(ToolCallParser parser, String text) {
        Map<String, Object> message = new LinkedHashMap<>();
        message.put("role", "assistant");
        if (parser == null) {
            message.put("content", text);
            return message;
        }
        ToolCallParser.Parsed parsed = parser.parse(text);
        message.put("content", parsed.content());
        if (!parsed.calls().isEmpty()) {
            List<Map<String, Object>> calls = new ArrayList<>();
            for (ToolCall c : parsed.calls()) {
                calls.add(call(callId(), c.name(), c.arguments()));
            }
            message.put("tool_calls", calls);
        }
        return message;
    }

    private static Map<String, Object> call(String id, String name, String arguments) {
        Map<String, Object> function = new LinkedHashMap<>();
        function.put("name", name);
        function.put("arguments", arguments);
        Map<String, Object> call = new LinkedHashMap<>();
        call.put("id", id);
        call.put("type", "function");
        call.put("function", function);
        return call;
    }

    /** {@code tool_calls} when the answer made calls, else the generation's own reason. */
    static String finishReason(boolean called, String reason) {
        return called ? "tool_calls" : reason;
    }

    /**
     * A streamed chat choice's deltas: text as {@code {"content":...}}; a call's first delta carries its index, id,
     * type, name and empty arguments, the next ones fragments of its arguments.
     */
    static final class Deltas {
        private final ToolCallStream stream;

        Deltas(ToolCallParser parser) {
            this.stream = new ToolCallStream(parser);
        }

        List<Map<String, Object>> accept(String text) {
            return shape(stream.accept(text));
        }

        List<Map<String, Object>> finish() {
            return shape(stream.finish());
        }

        boolean called() {
            return stream.calls() > 0;
        }

        private static List<Map<String, Object>> shape(List<ToolCallStream.Event> events) {
            List<Map<String, Object>> out = new ArrayList<>(events.size());
            for (ToolCallStream.Event e : events) {
                switch (e) {
                    case ToolCallStream.Event.Text t -> out.add(Map.of("content", t.text()));
                    case ToolCallStream.Event.CallStart s -> {
                        Map<String, Object> call = call(callId(), s.name(), "");
                        call.put("index", s.index());
                        out.add(Map.of("tool_calls", List.of(reorder(call))));
                    }
                    case ToolCallStream.Event.Arguments a -> out.add(Map.of("tool_calls", List.of(Map.of(
                            "index", a.index(), "function", Map.of("arguments", a.fragment())))));
                }
            }
            return out;
        }

        /** index first, as OpenAI writes it. */
        private static Map<String, Object> reorder(Map<String, Object> call) {
            Map<String, Object> m = new LinkedHashMap<>();
            m.put("index", call.get("index"));
            call.forEach((k, v) -> {
                if (!k.equals("index")) {
                    m.put(k, v);
                }
            });
            return m;
        }
    }
}
