package dev.pagewarden.core.tools;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.pagewarden.core.template.ChatMessage;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * The tool convention for chat templates that cannot show tools ({@link ToolFormat#JSON}): the functions are
 * listed in the system message after {@code Functions:}, one JSON object a line, then the instruction
 * {@code To call one, answer only {"name": <function name>, "arguments": {<arguments>}}.}; earlier calls become their assistant turn's text in that
 * form, and a tool's result a user turn {@code Result of <name> (<call id>): <content>}.
 */
public final class ToolPrompt {
    private static final ObjectMapper JSON = new ObjectMapper();
    static final String INSTRUCTION = "To call one, answer only {\"name\": <function name>, \"arguments\": "
            + "{<arguments>}}.";

    private ToolPrompt() {
    }

    /** The system text listing {@code tools} (OpenAI's shape, {@code {"type":"function","function":{...}}}). */
    public static String system(List<Map<String, Object>> tools) {
        StringBuilder sb = new StringBuilder("Functions:\n");
        for (Map<String, Object> t : tools) {
            sb.append(json(t.get("function"))).append('\n');
        }
        return sb.append(INSTRUCTION).toString();
    }

    /**
     * {@code messages} for a template without tools: the tool listing joined to the first system message (or a
     * system message of its own first, when {@code tools} is not null), calls and results as text.
     */
    public static List<ChatMessage> inline(List<ChatMessage> messages, List<Map<String, Object>> tools) {
        List<ChatMessage> out = new ArrayList<>(messages.size() + 1);
        Map<String, String> names = new HashMap<>();
        boolean listed = tools == null;
        for (ChatMessage m : messages) {
            if (!listed && (m.role().equals("system") || m.role().equals("developer"))) {
                out.add(new ChatMessage(m.role(), m.content().isEmpty() ? system(tools) : m.content() + "\n\n"
                        + system(tools)));
                listed = true;
            } else if (!m.toolCalls().isEmpty()) {
                List<String> calls = new ArrayList<>();
                for (ChatMessage.ToolCall c : m.toolCalls()) {
                    names.put(c.id(), c.name());
                    calls.add("{\"name\": " + json(c.name()) + ", \"arguments\": " + c.arguments() + "}");
                }
                String text = calls.size() == 1 ? calls.getFirst() : "[" + String.join(", ", calls) + "]";
                out.add(new ChatMessage(m.role(), m.content().isEmpty() ? text : m.content() + "\n" + text));
            } else if (m.role().equals("tool")) {
                out.add(new ChatMessage("user", "Result of " + names.getOrDefault(m.toolCallId(), "the function")
                        + " (" + m.toolCallId() + "): " + m.content()));
            } else {
                out.add(m);
            }
        }
        if (!listed) {
            out.addFirst(new ChatMessage("system", system(tools)));
        }
        return out;
    }

    private static String json(Object o) {
        try {
            return JSON.writeValueAsString(o);
        } catch (JsonProcessingException e) {
            throw new IllegalStateException(e);
        }
    }
}
