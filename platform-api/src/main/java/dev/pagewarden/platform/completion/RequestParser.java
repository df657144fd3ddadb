package dev.pagewarden.platform.completion;

import dev.pagewarden.core.grammar.JsonGrammar;
import dev.pagewarden.core.grammar.SchemaException;
import dev.pagewarden.platform.engine.ModelIds;
import dev.pagewarden.platform.error.ApiException;
import dev.pagewarden.platform.error.JsonProblems;
import org.springframework.beans.factory.annotation.Value;
import org.springframework.stereotype.Component;
import tools.jackson.core.JacksonException;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.json.JsonMapper;

import java.nio.ByteBuffer;
import java.nio.charset.CharacterCodingException;
import java.nio.charset.CodingErrorAction;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.function.BiPredicate;

/**
 * Reads a request body strictly: valid UTF-8, a JSON object, every field of the right type and
 * range, each error naming its parameter. Unknown fields are refused (as OpenAI does), so a typo
 * such as {@code max_token} never silently changes what runs; OpenAI fields we do not implement are
 * accepted only at their neutral value ({@code best_of} only at 1: it was removed upstream, ask for {@code n}).
 */
@Component
final class RequestParser {
    static final int MAX_STOP = 4;

    private static final Set<String> COMMON = Set.of("model", "max_tokens", "temperature", "top_p", "seed", "stop",
            "stream", "stream_options", "n", "user", "frequency_penalty", "presence_penalty", "logit_bias", "logprobs",
            "metadata", "store", "service_tier", "top_k", "min_p", "repetition_penalty", "prompt_cache_key", "cache_salt");
    /** The most alternatives per token: chat's top_logprobs, and the legacy completions' logprobs. */
    static final int MAX_TOP_LOGPROBS = 20;
    static final int MAX_COMPLETION_LOGPROBS = 5;
    private static final Set<String> COMPLETION_ONLY = Set.of("prompt", "echo", "best_of", "suffix");
    private static final Set<String> CHAT_ONLY = Set.of("messages", "max_completion_tokens", "top_logprobs",
            "response_format", "tools", "tool_choice", "parallel_tool_calls", "functions", "function_call",
            "chat_template_kwargs", "reasoning_effort");
    /** The legacy function calling, replaced upstream by tools: refused in any form - even empty - rather than ignored. */
    private static final List<String> TOOLING = List.of("functions", "function_call");
    private static final Set<String> MESSAGE_FIELDS = Set.of("role", "content", "tool_calls", "tool_call_id");
    /** OpenAI's other message fields: defined, but they would change the request, so refused as unsupported. */
    private static final Set<String> MESSAGE_UNSUPPORTED = Set.of("name", "function_call", "refusal", "audio");
    private static final Set<String> ROLES = Set.of("system", "developer", "user", "assistant", "tool");

    private final JsonMapper json;
    private final int maxN;

    RequestParser(JsonMapper json, @Value("${pagewarden.api.max-n:8}") int maxN) {
        if (maxN < 1) {
            throw new IllegalArgumentException("pagewarden.api.max-n must be at least 1, got " + maxN);
        }
        this.json = json;
        this.maxN = maxN;
    }

    CompletionRequest parse(CompletionRequest.Kind kind, byte[] body) {
        JsonNode root = readObject(body);
        for (Map.Entry<String, JsonNode> field : root.properties()) {
            String name = field.getKey();
            boolean known = COMMON.contains(name)
                    || (kind == CompletionRequest.Kind.COMPLETION ? COMPLETION_ONLY : CHAT_ONLY).contains(name);
            if (!known) {
                throw ApiException.invalid(name, "unknown_parameter", "Unrecognized request argument supplied: " + name);
            }
        }
        requireNeutral(root);
        String model = string(root, "model", true);
        if (!ModelIds.valid(model)) {
            throw ApiException.invalid("model", "'model' is not a valid model id: " + ModelIds.problem());
        }
        String prompt = null;
        int[] promptTokens = null;
        List<ChatMessage> messages = null;
        if (kind == CompletionRequest.Kind.COMPLETION) {
            JsonNode p = root.get("prompt");
            if (p == null || p.isNull()) {
                throw ApiException.invalid("prompt", "'prompt' is required");
            }
            if (p.isString()) {
                prompt = p.stringValue();
            } else if (p.isArray() && !p.isEmpty() && p.get(0).isIntegralNumber()) {
                promptTokens = tokenArray(p);
            } else if (p.isArray() && p.size() == 1 && p.get(0).isString()) {
                prompt = p.get(0).stringValue();
            } else if (p.isArray()) {
                throw ApiException.invalid("prompt", "'prompt' must be a string, an array of one string or an array of "
                        + "token ids (several prompts in one request are not supported; send one request each)");
            } else {
                throw ApiException.invalid("prompt", "'prompt' must be a string or an array of token ids, got "
                        + p.getNodeType().name().toLowerCase());
            }
        } else {
            messages = messages(root.get("messages"));
        }
        Integer maxTokens = optionalInt(root, "max_tokens");
        if (kind == CompletionRequest.Kind.CHAT) {
            Integer mct = optionalInt(root, "max_completion_tokens");
            if (mct != null && maxTokens != null && !mct.equals(maxTokens)) {
                throw ApiException.invalid("max_completion_tokens", "max_tokens and max_completion_tokens disagree");
            }
            maxTokens = maxTokens != null ? maxTokens : mct;
        }
        float temperature = (float) number(root, "temperature", 1.0, 0.0, 2.0);
        float topP = (float) number(root, "top_p", 1.0, 0.0, 1.0);
        if (topP == 0f) {
            throw ApiException.invalid("top_p", "top_p must be greater than 0");
        }
        Long seed = root.has("seed") && !root.get("seed").isNull() ? integral(root.get("seed"), "seed") : null;
        long n = root.has("n") && !root.get("n").isNull() ? integral(root.get("n"), "n") : 1;
        if (n < 1 || n > maxN) {
            throw ApiException.invalid("n", "n must be between 1 and " + maxN + ", got " + n);
        }
        boolean stream = bool(root, "stream", false);
        boolean includeUsage = false;
        JsonNode so = root.get("stream_options");
        if (so != null && !so.isNull()) {
            if (!so.isObject()) {
                throw ApiException.invalid("stream_options", "'stream_options' must be an object");
            }
            if (!stream) {
                throw ApiException.invalid("stream_options", "'stream_options' is only allowed when 'stream' is true");
            }
            for (String name : so.propertyNames()) {
                if (!name.equals("include_usage")) {
                    throw ApiException.invalid("stream_options." + name, "unknown_parameter",
                            "Unrecognized request argument supplied: stream_options." + name);
                }
            }
            includeUsage = bool(so, "include_usage", false);
        }
        CompletionRequest.Controls controls = controls(kind, root);
        ToolRequest tools = kind == CompletionRequest.Kind.CHAT ? ToolRequest.parse(root, false) : null;
        checkFormatWithTools(tools, controls.format(), "response_format");
        // as OpenAI: json_object without the word JSON in the messages tends to run on with whitespace
        if (controls.format() == JsonGrammar.anyObject() && messages != null && messages.stream()
                .noneMatch(m -> m.content() != null && m.content().toLowerCase(Locale.ROOT).contains("json"))) {
            throw ApiException.invalid("messages", "'messages' must contain the word 'json' in some form, to use "
                    + "'response_format' of type 'json_object'.");
        }
        return new CompletionRequest(kind, model, prompt, promptTokens, messages, maxTokens, temperature, topP, seed,
                stop(root.get("stop")), stream, includeUsage, string(root, "user", false), (int) n, controls,
                cacheKey(root, "prompt_cache_key"), cacheKey(root, "cache_salt"), tools,
                kind == CompletionRequest.Kind.CHAT ? Thinking.ofChat(root) : Thinking.NONE);
    }

    /**
     * A forced call is the whole answer, so it cannot also be a response format; with tools offered on auto the
     * answer is either a call or the format (see {@link ToolCalling#grammar}).
     */
    static void checkFormatWithTools(ToolRequest tools, JsonGrammar format, String param) {
        if (tools != null && tools.forced() && format != null) {
            throw ApiException.invalid(param, param + " cannot be combined with " + tools.describeChoice()
                    + ": the answer is a function call; use tool_choice \"auto\" or none");
        }
    }

    /** Penalties, bias, the vLLM filters and log probabilities; each bad value a 400 naming its parameter. */
    private static CompletionRequest.Controls controls(CompletionRequest.Kind kind, JsonNode root) {
        float presence = (float) number(root, "presence_penalty", 0.0, -2.0, 2.0);
        float frequency = (float) number(root, "frequency_penalty", 0.0, -2.0, 2.0);
        double repetition = number(root, "repetition_penalty", 1.0, 0.0, Float.MAX_VALUE);
        if (repetition == 0.0) {
            throw ApiException.invalid("repetition_penalty", "repetition_penalty must be greater than 0");
        }
        Integer topK = optionalInt(root, "top_k");
        if (topK != null && topK < -1) {
            throw ApiException.invalid("top_k", "top_k must be -1 or 0 (no limit) or at least 1, got " + topK);
        }
        float minP = (float) number(root, "min_p", 0.0, 0.0, 1.0);
        return new CompletionRequest.Controls(presence, frequency, (float) repetition,
                topK == null || topK == -1 ? 0 : topK, minP, logitBias(root.get("logit_bias")), logprobs(kind, root),
                responseFormat(root));
    }

    private static Map<Integer, Float> logitBias(JsonNode node) {
        if (node == null || node.isNull()) {
            return Map.of();
        }
        if (!node.isObject()) {
            throw ApiException.invalid("logit_bias", "'logit_bias' must be an object of token id to bias");
        }
        Map<Integer, Float> bias = new HashMap<>();
        for (Map.Entry<String, JsonNode> e : node.properties()) {
            int id;
            try {
                id = Integer.parseInt(e.getKey());
            } catch (NumberFormatException ex) {
                id = -1;
            }
            if (id < 0 || !e.getKey().equals(Integer.toString(id))) {
                throw ApiException.invalid("logit_bias", "logit_bias keys must be token ids (non-negative integers as "
                        + "strings), got '" + e.getKey() + "'");
            }
            JsonNode v = e.getValue();
            if (!v.isNumber() || !(v.doubleValue() >= -100 && v.doubleValue() <= 100)) {
                throw ApiException.invalid("logit_bias", "logit_bias values must be numbers between -100 and 100, got "
                        + e.getKey() + ": " + v);
            }
            bias.put(id, v.floatValue());
        }
        return Map.copyOf(bias);
    }

    /** The alternatives per token to return, or -1 for no log probabilities. */
    private static int logprobs(CompletionRequest.Kind kind, JsonNode root) {
        JsonNode lp = root.get("logprobs");
        boolean given = lp != null && !lp.isNull();
        if (kind == CompletionRequest.Kind.COMPLETION) {
            if (!given) {
                return -1;
            }
            long k = integral(lp, "logprobs");
            if (k < 0 || k > MAX_COMPLETION_LOGPROBS) {
                throw ApiException.invalid("logprobs", "logprobs must be between 0 and " + MAX_COMPLETION_LOGPROBS
                        + ", got " + k);
            }
            return (int) k;
        }
        boolean on = bool(root, "logprobs", false);
        JsonNode top = root.get("top_logprobs");
        if (top == null || top.isNull()) {
            return on ? 0 : -1;
        }
        long k = integral(top, "top_logprobs");
        if (k < 0 || k > MAX_TOP_LOGPROBS) {
            throw ApiException.invalid("top_logprobs", "top_logprobs must be between 0 and " + MAX_TOP_LOGPROBS
                    + ", got " + k);
        }
        if (!on) {
            throw ApiException.invalid("top_logprobs", "top_logprobs needs logprobs set to true");
        }
        return (int) k;
    }

    JsonNode readObject(byte[] body) {
        if (body == null || body.length == 0) {
            throw ApiException.invalid(null, "the request body is empty; send a JSON object");
        }
        String text;
        try {
            text = StandardCharsets.UTF_8.newDecoder().onMalformedInput(CodingErrorAction.REPORT)
                    .onUnmappableCharacter(CodingErrorAction.REPORT).decode(ByteBuffer.wrap(body)).toString();
        } catch (CharacterCodingException e) {
            throw ApiException.invalid(null, "the request body is not valid UTF-8");
        }
        JsonNode root;
        try {
            root = json.readTree(text);
        } catch (JacksonException e) {
            throw JsonProblems.toApi(e);
        }
        if (root == null || !root.isObject()) {
            throw ApiException.invalid(null, "the request body must be a JSON object");
        }
        return root;
    }

    /** OpenAI fields we do not implement: accepted only when they would change nothing. */
    private static void requireNeutral(JsonNode root) {
        for (String f : List.of("echo")) {
            JsonNode v = root.get(f);
            if (v != null && !v.isNull() && !(v.isBoolean() && !v.booleanValue())
                    && !(v.isNumber() && v.doubleValue() == 0.0)) {
                throw ApiException.invalid(f, f + " is not supported");
            }
        }
        for (String f : List.of("metadata")) {
            JsonNode v = root.get(f);
            if (v != null && !v.isNull() && !(v.isObject() && v.isEmpty())) {
                throw ApiException.invalid(f, f + " is not supported");
            }
        }
        JsonNode bestOf = root.get("best_of");
        if (bestOf != null && !bestOf.isNull() && !(bestOf.isIntegralNumber() && bestOf.longValue() == 1)) {
            throw ApiException.invalid("best_of", "best_of is not supported (only 1)");
        }
        for (String f : List.of("suffix", "service_tier")) {
            JsonNode v = root.get(f);
            if (v != null && !v.isNull() && !(f.equals("service_tier") && v.isString() && (v.stringValue().equals("auto")
                    || v.stringValue().equals("default")))) {
                throw ApiException.invalid(f, f + " is not supported");
            }
        }
        for (String f : TOOLING) {
            JsonNode v = root.get(f);
            if (v != null && !v.isNull()) {
                throw ApiException.invalid(f, f + " is not supported: legacy function calling was replaced by tools; "
                        + "send 'tools' and 'tool_choice' instead");
            }
        }
    }

    /**
     * {@code response_format}: text (null), json_object (any JSON object) or json_schema (a schema compiled to the
     * grammar decoding follows; what it cannot take is a 400 naming the keyword and where it is).
     */
    private static JsonGrammar responseFormat(JsonNode root) {
        JsonNode format = root.get("response_format");
        if (format == null || format.isNull()) {
            return null;
        }
        JsonNode type = format.isObject() ? format.get("type") : null;
        String name = type != null && type.isString() ? type.stringValue() : "";
        return switch (name) {
            case "text" -> null;
            case "json_object" -> JsonGrammar.anyObject();
            case "json_schema" -> jsonSchema(format.get("json_schema"));
            default -> throw ApiException.invalid("response_format", "response_format must be an object with type "
                    + "'text', 'json_object' or 'json_schema'");
        };
    }

    private static JsonGrammar jsonSchema(JsonNode js) {
        if (js == null || !js.isObject()) {
            throw ApiException.invalid("response_format", "response_format.json_schema is required for type "
                    + "'json_schema' and must be an object");
        }
        JsonNode name = js.get("name");
        if (name == null || !name.isString() || !name.stringValue().matches("[a-zA-Z0-9_-]{1,64}")) {
            throw ApiException.invalid("response_format", "response_format.json_schema.name is required: up to 64 "
                    + "letters, digits, underscores and dashes");
        }
        JsonNode strict = js.get("strict");
        if (strict != null && !strict.isNull() && !strict.isBoolean()) {
            throw ApiException.invalid("response_format", "response_format.json_schema.strict must be a boolean");
        }
        JsonNode schema = js.get("schema");
        if (schema == null || !schema.isObject()) {
            throw ApiException.invalid("response_format", "response_format.json_schema.schema is required and must "
                    + "be an object");
        }
        try {
            return JsonGrammar.compile(schema.toString());
        } catch (SchemaException e) {
            throw ApiException.invalid("response_format", "response_format.json_schema.schema" + e.path() + ": "
                    + e.getMessage());
        }
    }

    private static List<ChatMessage> messages(JsonNode node) {
        if (node == null || node.isNull()) {
            throw ApiException.invalid("messages", "'messages' is required");
        }
        if (!node.isArray() || node.isEmpty()) {
            throw ApiException.invalid("messages", "'messages' must be a non-empty array");
        }
        List<ChatMessage> out = new ArrayList<>();
        for (int i = 0; i < node.size(); i++) {
            JsonNode m = node.get(i);
            String where = "messages[" + i + "]";
            if (!m.isObject()) {
                throw ApiException.invalid(where, where + " must be an object");
            }
            for (String name : m.propertyNames()) {
                if (MESSAGE_UNSUPPORTED.contains(name) && !m.get(name).isNull()) {
                    throw ApiException.invalid(where + "." + name, where + "." + name + " is not supported");
                }
                if (!MESSAGE_FIELDS.contains(name) && !MESSAGE_UNSUPPORTED.contains(name)) {
                    throw ApiException.invalid(where + "." + name, "unknown_parameter",
                            "Unrecognized request argument supplied: " + where + "." + name);
                }
            }
            JsonNode role = m.get("role");
            if (role == null || !role.isString() || !ROLES.contains(role.stringValue())) {
                throw ApiException.invalid(where + ".role", where + ".role must be one of " + ROLES);
            }
            out.add(ToolMessages.read(m, where, role.stringValue(), c -> content(c, where + ".content")));
        }
        return out;
    }

    /** Chat's text parts: {@code {"type":"text","text":...}} and nothing else in a part. */
    private static final TextParts CHAT_PARTS = new TextParts(Set.of("text"),
            "only text content parts ({\"type\":\"text\",\"text\":...}) are supported", "text parts", (type, field) -> false);

    private static String content(JsonNode c, String where) {
        return text(c, where, CHAT_PARTS);
    }

    /**
     * The text parts a message's content may hold: their {@code types}, the message naming them when a part is
     * not one, how the array is named when the content is neither string nor array, and which extra fields a part
     * of a type may carry (type, field).
     */
    record TextParts(Set<String> types, String onlyMessage, String arrayName, BiPredicate<String, String> extra) {
    }

    /** A message's content as text: a string, or an array of text parts of {@code kinds} joined. */
    static String text(JsonNode c, String where, TextParts kinds) {
        if (c == null || c.isNull()) {
            throw ApiException.invalid(where, where + " is required");
        }
        if (c.isString()) {
            return c.stringValue();
        }
        if (!c.isArray()) {
            throw ApiException.invalid(where, where + " must be a string or an array of " + kinds.arrayName());
        }
        StringBuilder sb = new StringBuilder();
        for (int j = 0; j < c.size(); j++) {
            JsonNode part = c.get(j);
            String at = where + "[" + j + "]";
            String type = part.isObject() ? part.path("type").asString("") : "";
            if (!kinds.types().contains(type) || !part.path("text").isString()) {
                throw ApiException.invalid(at, kinds.onlyMessage());
            }
            for (String name : part.propertyNames()) {
                if (!name.equals("type") && !name.equals("text") && !kinds.extra().test(type, name)) {
                    throw ApiException.invalid(at + "." + name, "unknown_parameter",
                            "Unrecognized request argument supplied: " + at + "." + name);
                }
            }
            sb.append(part.get("text").stringValue());
        }
        return sb.toString();
    }

    private static List<String> stop(JsonNode node) {
        if (node == null || node.isNull()) {
            return List.of();
        }
        List<String> stops = new ArrayList<>();
        if (node.isString()) {
            stops.add(node.stringValue());
        } else if (node.isArray()) {
            for (JsonNode s : node) {
                if (!s.isString()) {
                    throw ApiException.invalid("stop", "'stop' must be a string or an array of strings");
                }
                stops.add(s.stringValue());
            }
        } else {
            throw ApiException.invalid("stop", "'stop' must be a string or an array of strings");
        }
        if (stops.size() > MAX_STOP) {
            throw ApiException.invalid("stop", "at most " + MAX_STOP + " stop sequences are allowed, got " + stops.size());
        }
        for (String s : stops) {
            if (s.isEmpty()) {
                throw ApiException.invalid("stop", "stop sequences must not be empty");
            }
        }
        return List.copyOf(stops);
    }

    private static int[] tokenArray(JsonNode p) {
        int[] tokens = new int[p.size()];
        for (int i = 0; i < tokens.length; i++) {
            JsonNode t = p.get(i);
            if (!t.isIntegralNumber() || !t.canConvertToInt()) {
                throw ApiException.invalid("prompt", "prompt[" + i + "] must be an integer token id");
            }
            tokens[i] = t.intValue();
        }
        return tokens;
    }

    static String string(JsonNode root, String name, boolean required) {
        JsonNode v = root.get(name);
        if (v == null || v.isNull()) {
            if (required) {
                throw ApiException.invalid(name, "'" + name + "' is required");
            }
            return null;
        }
        if (!v.isString()) {
            throw ApiException.invalid(name, "'" + name + "' must be a string");
        }
        return v.stringValue();
    }

    /** The longest prompt_cache_key or cache_salt accepted, in characters. */
    static final int MAX_CACHE_KEY = 256;

    /** A prompt cache key or salt: absent, or a string of 1 to {@link #MAX_CACHE_KEY} characters. */
    static String cacheKey(JsonNode root, String name) {
        String v = string(root, name, false);
        if (v != null && (v.isEmpty() || v.length() > MAX_CACHE_KEY)) {
            throw ApiException.invalid(name, "'" + name + "' must be 1 to " + MAX_CACHE_KEY + " characters, got "
                    + v.length());
        }
        return v;
    }

    static Integer optionalInt(JsonNode root, String name) {
        JsonNode v = root.get(name);
        if (v == null || v.isNull()) {
            return null;
        }
        long value = integral(v, name);
        if (value > Integer.MAX_VALUE || value < Integer.MIN_VALUE) {
            throw ApiException.invalid(name, name + " is out of range: " + value);
        }
        return (int) value;
    }

    private static long integral(JsonNode v, String name) {
        if (!v.isIntegralNumber() || !v.canConvertToLong()) {
            throw ApiException.invalid(name, "'" + name + "' must be an integer, got "
                    + (v.isNumber() ? v.asString() : v.getNodeType().name().toLowerCase()));
        }
        return v.longValue();
    }

    static double number(JsonNode root, String name, double dflt, double min, double max) {
        JsonNode v = root.get(name);
        if (v == null || v.isNull()) {
            return dflt;
        }
        if (!v.isNumber()) {
            throw ApiException.invalid(name, "'" + name + "' must be a number, got " + v.getNodeType().name().toLowerCase());
        }
        double d = v.doubleValue();
        if (!(d >= min && d <= max)) {
            throw ApiException.invalid(name, name + " must be between " + min + " and " + max + ", got " + d);
        }
        return d;
    }

    static boolean bool(JsonNode root, String name, boolean dflt) {
        JsonNode v = root.get(name);
        if (v == null || v.isNull()) {
            return dflt;
        }
        if (!v.isBoolean()) {
            throw ApiException.invalid(name, "'" + name + "' must be a boolean");
        }
        return v.booleanValue();
    }
}
