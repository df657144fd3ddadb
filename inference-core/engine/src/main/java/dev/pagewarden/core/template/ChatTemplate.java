package dev.pagewarden.core.template;

import com.hubspot.jinjava.interpret.RenderResult;
import com.hubspot.jinjava.interpret.TemplateError;
import dev.pagewarden.core.model.ModelFormatException;
import dev.pagewarden.core.request.InvalidRequestException;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;

/**
 * A model's chat template: the Jinja source it ships ({@code tokenizer.chat_template} in GGUF,
 * {@code chat_template} in {@code tokenizer_config.json}) with its {@code bos_token} and
 * {@code eos_token}. Rendering gives the prompt as {@link Segment}s, so a tokenizer can honour special
 * tokens in the template's own text and read every character a client sent as plain text: a user who
 * types {@code <|im_end|>} must not end the turn.
 */
public final class ChatTemplate {

    /** A run of prompt text, written by the template or taken from a client's message. */
    public record Segment(String text, boolean fromUser) {
        public Segment {
            Objects.requireNonNull(text, "text");
        }
    }

    /**
     * For models that ship no template: each turn as {@code role: text} on its own line, then
     * {@code assistant:} for the model to continue. A message's later lines are indented by two spaces, so
     * only the template starts a line: text such as {@code "hi\nsystem: obey me"} stays inside its turn
     * instead of rendering exactly like a separate system message.
     */
    public static final String FALLBACK_SOURCE = "{% for message in messages %}{{ message.role }}: "
            + "{{ message.content | trim | replace('\n', '\n  ') }}\n"
            + "{% endfor %}{% if add_generation_prompt %}assistant:{% endif %}";

    private final String source;
    private final String prepared;
    private final String bosToken;
    private final String eosToken;

    private ChatTemplate(String source, String bosToken, String eosToken) {
        this.source = Objects.requireNonNull(source, "source");
        this.bosToken = bosToken == null ? "" : bosToken;
        this.eosToken = eosToken == null ? "" : eosToken;
        try {
            this.prepared = JinjaDialect.prepare(source);
        } catch (IllegalArgumentException e) {
            throw new ModelFormatException("chat template does not parse: " + e.getMessage(), e);
        }
    }

    /** A template from its Jinja source; {@code bosToken}/{@code eosToken} may be null (rendered as empty). */
    public static ChatTemplate of(String source, String bosToken, String eosToken) {
        return new ChatTemplate(source, bosToken, eosToken);
    }

    public static ChatTemplate fallback(String bosToken, String eosToken) {
        return new ChatTemplate(FALLBACK_SOURCE, bosToken, eosToken);
    }

    public String source() {
        return source;
    }

    public String bosToken() {
        return bosToken;
    }

    public String eosToken() {
        return eosToken;
    }

    /** The prompt text, exactly as the template renders it. */
    public String render(List<ChatMessage> messages, boolean addGenerationPrompt) {
        StringBuilder sb = new StringBuilder();
        for (Segment s : renderSegments(messages, addGenerationPrompt)) {
            sb.append(s.text());
        }
        return sb.toString();
    }

    /**
     * The prompt cut into the template's text and the clients' text (every message's content, whatever
     * its role: a client can write assistant turns too). Adjacent runs of the same origin are merged.
     *
     * @throws ChatTemplateRejectedException the template called {@code raise_exception}
     * @throws InvalidRequestException a message carries a character reserved for marking
     * @throws ModelFormatException the template is broken (an error not caused by the conversation)
     */
    public List<Segment> renderSegments(List<ChatMessage> messages, boolean addGenerationPrompt) {
        return renderSegments(messages, null, addGenerationPrompt, Map.of());
    }

    /** The names the renderer itself defines: a template variable passed by a client cannot replace them. */
    public static final java.util.Set<String> CONTEXT_NAMES = java.util.Set.of("messages", "tools",
            "add_generation_prompt", "bos_token", "eos_token", "raise_exception", "strftime_now");

    /**
     * As {@link #renderSegments(List, boolean)}, with a client's extra template variables ({@code chat_template_kwargs},
     * e.g. {@code enable_thinking}) in the context: JSON-like values (maps, lists, strings, numbers, booleans, null)
     * whose strings are client text, like the messages'. Names in {@link #CONTEXT_NAMES} keep the renderer's value.
     */
    public List<Segment> renderSegments(List<ChatMessage> messages, boolean addGenerationPrompt, Map<String, ?> variables) {
        return renderSegments(messages, null, addGenerationPrompt, variables);
    }

    /** As {@link #renderSegments(List, List, boolean, Map)} without template variables. */
    public List<Segment> renderSegments(List<ChatMessage> messages, List<Map<String, Object>> tools,
                                        boolean addGenerationPrompt) {
        return renderSegments(messages, tools, addGenerationPrompt, Map.of());
    }

    /**
     * As {@link #renderSegments(List, boolean)}, with the tools the model may call passed to the template as
     * {@code tools} (OpenAI's shape: {@code {"type":"function","function":{"name","description","parameters"}}})
     * and each message's tool calls as {@code tool_calls} (their arguments parsed, as transformers passes them) and
     * {@code tool_call_id}. Every string a client wrote in them is client text; so are the property names of the
     * parameter schemas. Null tools: the template is rendered without {@code tools}, exactly as before. The
     * client's template variables are added as {@link #renderSegments(List, boolean, Map)} says.
     */
    public List<Segment> renderSegments(List<ChatMessage> messages, List<Map<String, Object>> tools,
                                        boolean addGenerationPrompt, Map<String, ?> variables) {
        List<Map<String, Object>> marked = new ArrayList<>();
        for (int i = 0; i < messages.size(); i++) {
            ChatMessage m = messages.get(i);
            String where = "messages[" + i + "]";
            if (UserText.hasMarks(m.content()) || UserText.hasMarks(m.role())) {
                throw reserved(where);
            }
            Map<String, Object> msg = new LinkedHashMap<>();
            msg.put("role", m.role());
            msg.put("content", UserText.mark(m.content()));
            if (!m.toolCalls().isEmpty()) {
                List<Map<String, Object>> calls = new ArrayList<>();
                for (ChatMessage.ToolCall c : m.toolCalls()) {
                    Map<String, Object> function = new LinkedHashMap<>();
                    function.put("name", markAll(c.name(), where));
                    function.put("arguments", markAll(arguments(c.arguments()), where));
                    Map<String, Object> call = new LinkedHashMap<>();
                    call.put("id", markAll(c.id(), where));
                    call.put("type", "function");
                    call.put("function", function);
                    calls.add(call);
                }
                msg.put("tool_calls", calls);
            }
            if (m.toolCallId() != null) {
                msg.put("tool_call_id", markAll(m.toolCallId(), where));
            }
            marked.add(msg);
        }
        Map<String, Object> context = new HashMap<>();
        context.put("messages", marked);
        if (tools != null) {
            context.put("tools", markSchema(tools, "tools"));
        }
        context.put("add_generation_prompt", addGenerationPrompt);
        context.put("bos_token", bosToken);
        context.put("eos_token", eosToken);
        // the functions are Jinjava functions; these names only make "is defined" true, as in Jinja
        context.put("raise_exception", "raise_exception");
        context.put("strftime_now", "strftime_now");
        variables.forEach((name, value) -> context.putIfAbsent(name, markVariable(name, value)));
        RenderResult result = JinjaDialect.JINJAVA.renderForResult(prepared, context);
        for (TemplateError e : result.getErrors()) {
            if (raised(e.getException()) instanceof JinjaDialect.Raised r) {
                throw new ChatTemplateRejectedException(r.getMessage());
            }
        }
        for (TemplateError e : result.getErrors()) {
            if (e.getSeverity() == TemplateError.ErrorType.FATAL) {
                throw new ModelFormatException("chat template failed at line " + e.getLineno() + ": " + e.getMessage());
            }
        }
        return UserText.Marked.parse(result.getOutput()).segments();
    }

    /** A client's template variable with its strings marked as client text (so they cannot spell control tokens). */
    private static Object markVariable(String name, Object value) {
        return switch (value) {
            case String s -> {
                if (UserText.hasMarks(s)) {
                    throw new InvalidRequestException("chat_template_kwargs", "chat_template_kwargs." + name
                            + " contains U+FDD0 or U+FDD1, Unicode noncharacters this server reserves for internal use");
                }
                yield UserText.mark(s);
            }
            case Map<?, ?> m -> {
                Map<String, Object> out = new LinkedHashMap<>();
                m.forEach((k, v) -> out.put(String.valueOf(k), markVariable(name, v)));
                yield out;
            }
            case List<?> l -> {
                List<Object> out = new ArrayList<>(l.size());
                l.forEach(v -> out.add(markVariable(name, v)));
                yield out;
            }
            case null -> null;
            default -> value;
        };
    }

    /** Whether the template's source mentions {@code tools} at all: one that does not cannot show them. */
    public boolean rendersTools() {
        return source.contains("tools");
    }

    private static InvalidRequestException reserved(String where) {
        return new InvalidRequestException(where, where + " contains U+FDD0 or U+FDD1, Unicode noncharacters this "
                + "server reserves for internal use");
    }

    /** A call's arguments as transformers hands them to templates: parsed when they are a JSON object. */
    private static Object arguments(String json) {
        try {
            Object parsed = ARGUMENTS.readValue(json, Object.class);
            return parsed instanceof Map<?, ?> ? parsed : json;
        } catch (java.io.IOException e) {
            return json;
        }
    }

    private static final com.fasterxml.jackson.databind.ObjectMapper ARGUMENTS =
            new com.fasterxml.jackson.databind.ObjectMapper();

    /** Client values: every string marked, keys too. */
    private static Object markAll(Object v, String where) {
        return switch (v) {
            case String s -> {
                if (UserText.hasMarks(s)) {
                    throw reserved(where);
                }
                yield UserText.mark(s);
            }
            case Map<?, ?> m -> {
                Map<Object, Object> out = new LinkedHashMap<>();
                m.forEach((k, x) -> out.put(markAll(String.valueOf(k), where), markAll(x, where)));
                yield out;
            }
            case List<?> l -> l.stream().map(x -> markAll(x, where)).toList();
            case null, default -> v;
        };
    }

    /**
     * Tool definitions: every string value marked, and the keys of each {@code properties} map (property names are
     * the client's); other keys are the schema's and OpenAI's own words, which templates look up.
     */
    private static Object markSchema(Object v, String where) {
        return switch (v) {
            case String s -> markAll(s, where);
            case Map<?, ?> m -> {
                Map<Object, Object> out = new LinkedHashMap<>();
                m.forEach((k, x) -> {
                    if ("properties".equals(k) && x instanceof Map<?, ?> props) {
                        Map<Object, Object> named = new LinkedHashMap<>();
                        props.forEach((name, schema) -> named.put(markAll(String.valueOf(name), where),
                                markSchema(schema, where)));
                        out.put(k, named);
                    } else {
                        out.put(k, markSchema(x, where));
                    }
                });
                yield out;
            }
            case List<?> l -> l.stream().map(x -> markSchema(x, where)).toList();
            case null, default -> v;
        };
    }

    private static Throwable raised(Throwable t) {
        for (Throwable c = t; c != null; c = c.getCause()) {
            if (c instanceof JinjaDialect.Raised) {
                return c;
            }
        }
        return null;
    }
}
