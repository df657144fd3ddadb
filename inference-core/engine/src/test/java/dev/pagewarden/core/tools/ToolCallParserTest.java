package dev.pagewarden.core.tools;

import org.junit.jupiter.api.Test;

import java.util.ArrayList;
import java.util.List;
import java.util.Set;

import static org.assertj.core.api.Assertions.assertThat;

/** Each family's way of writing calls, read back; what is not a call stays text. */
class ToolCallParserTest {
    private static final Set<String> NAMES = Set.of("get_weather", "add");

    private static ToolCallParser parser(ToolFormat f) {
        return new ToolCallParser(f, NAMES);
    }

    @Test
    void hermesBlocksAreCallsAndTheTextAroundThemIsContent() {
        ToolCallParser.Parsed p = parser(ToolFormat.HERMES).parse("Let me check.\n<tool_call>\n{\"name\": \"get_weather\", "
                + "\"arguments\": {\"city\": \"Paris\"}}\n</tool_call>\n<tool_call>\n{\"name\": \"add\", \"arguments\": "
                + "{\"a\": 1, \"b\": 2}}\n</tool_call>");
        assertThat(p.calls()).containsExactly(new ToolCall("get_weather", "{\"city\":\"Paris\"}"),
                new ToolCall("add", "{\"a\":1,\"b\":2}"));
        assertThat(p.content()).isEqualTo("Let me check.");
        // an unterminated last block still counts when it parses (the model stopped at its end of turn)
        assertThat(parser(ToolFormat.HERMES).parse("<tool_call>\n{\"name\": \"add\", \"arguments\": {}}").calls())
                .containsExactly(new ToolCall("add", "{}"));
        // malformed JSON, an unknown name: left as text
        String bad = "<tool_call>\n{\"name\": \"add\", \"arguments\": {\n</tool_call> and <tool_call>{\"name\": \"rm\", "
                + "\"arguments\": {}}</tool_call>";
        assertThat(parser(ToolFormat.HERMES).parse(bad)).isEqualTo(new ToolCallParser.Parsed(bad, List.of()));
        assertThat(parser(ToolFormat.HERMES).parse("plain answer")).isEqualTo(new ToolCallParser.Parsed("plain answer", List.of()));
    }

    @Test
    void llamaCallsAreBareJsonWithParametersOrLedByThePythonTag() {
        assertThat(parser(ToolFormat.LLAMA3).parse("{\"name\": \"get_weather\", \"parameters\": {\"city\": \"Oslo\"}}")
                .calls()).containsExactly(new ToolCall("get_weather", "{\"city\":\"Oslo\"}"));
        assertThat(parser(ToolFormat.LLAMA3).parse("<|python_tag|>{\"name\": \"add\", \"parameters\": {\"a\": 1}}; "
                + "{\"name\": \"add\", \"parameters\": {\"a\": 2}}").calls())
                .containsExactly(new ToolCall("add", "{\"a\":1}"), new ToolCall("add", "{\"a\":2}"));
        ToolCallParser.Parsed p = parser(ToolFormat.LLAMA3).parse("The answer is {\"name\": \"add\"}");
        assertThat(p.calls()).isEmpty();
        assertThat(p.content()).isEqualTo("The answer is {\"name\": \"add\"}");
        // trailing text after the object: not a call
        assertThat(parser(ToolFormat.LLAMA3).parse("{\"name\": \"add\", \"parameters\": {}} thanks").calls()).isEmpty();
    }

    @Test
    void mistralCallsFollowTheMarkerAsAnArray() {
        ToolCallParser.Parsed p = parser(ToolFormat.MISTRAL).parse("[TOOL_CALLS][{\"name\": \"add\", \"arguments\": "
                + "{\"a\": 1}}, {\"name\": \"get_weather\", \"arguments\": \"{\\\"city\\\": \\\"Rome\\\"}\"}]");
        assertThat(p.calls()).containsExactly(new ToolCall("add", "{\"a\":1}"),
                new ToolCall("get_weather", "{\"city\":\"Rome\"}"));
        assertThat(p.content()).isNull();
        // the marker is a control token: without its text the array alone is read
        assertThat(parser(ToolFormat.MISTRAL).parse("[{\"name\": \"add\", \"arguments\": {}}]").calls()).hasSize(1);
        assertThat(parser(ToolFormat.MISTRAL).parse("[1, 2]").calls()).isEmpty();
    }

    @Test
    void theJsonConventionIsOneObjectOrAnArrayPossiblyFenced() {
        assertThat(parser(ToolFormat.JSON).parse(" {\"name\": \"add\", \"arguments\": {\"a\": 3}}\n").calls())
                .containsExactly(new ToolCall("add", "{\"a\":3}"));
        assertThat(parser(ToolFormat.JSON).parse("```json\n[{\"name\": \"add\", \"arguments\": {}}]\n```").calls())
                .containsExactly(new ToolCall("add", "{}"));
        assertThat(parser(ToolFormat.JSON).parse("{\"name\": \"add\", \"arguments\": [1]}").calls()).isEmpty();
        assertThat(parser(ToolFormat.JSON).parse("{\"a\": 1}").content()).isEqualTo("{\"a\": 1}");
    }

    /** Whatever way the output is cut into deltas, the stream says what the whole parse says. */
    @Test
    void theStreamAgreesWithTheWholeParseWhereverTheDeltasAreCut() {
        List<Object[]> cases = List.of(
                new Object[]{ToolFormat.HERMES, "Hi <tool<tool_call>\n{\"name\": \"add\", \"arguments\": {\"a\": 1}}\n"
                        + "</tool_call> bye"},
                new Object[]{ToolFormat.HERMES, "no calls, just < and <tool"},
                new Object[]{ToolFormat.LLAMA3, "<|python_tag|>{\"name\": \"add\", \"parameters\": {}}"},
                new Object[]{ToolFormat.LLAMA3, "Sure: {\"name\": \"add\"}"},
                new Object[]{ToolFormat.MISTRAL, "ok [TOOL_CALLS][{\"name\": \"add\", \"arguments\": {}}]"},
                new Object[]{ToolFormat.JSON, "  {\"name\": \"get_weather\", \"arguments\": {\"city\": \"x\"}}"},
                new Object[]{ToolFormat.JSON, "{not json"});
        for (Object[] c : cases) {
            ToolCallParser parser = parser((ToolFormat) c[0]);
            String text = (String) c[1];
            ToolCallParser.Parsed whole = parser.parse(text);
            for (int cut = 1; cut <= 4; cut++) {
                ToolCallStream stream = new ToolCallStream(parser);
                List<ToolCallStream.Event> events = new ArrayList<>();
                for (int i = 0; i < text.length(); i += cut) {
                    events.addAll(stream.accept(text.substring(i, Math.min(text.length(), i + cut))));
                }
                events.addAll(stream.finish());
                StringBuilder content = new StringBuilder();
                List<ToolCall> calls = new ArrayList<>();
                String name = null;
                for (ToolCallStream.Event e : events) {
                    switch (e) {
                        case ToolCallStream.Event.Text t -> content.append(t.text());
                        case ToolCallStream.Event.CallStart s -> {
                            assertThat(s.index()).isEqualTo(calls.size());
                            name = s.name();
                        }
                        case ToolCallStream.Event.Arguments a -> calls.add(new ToolCall(name, a.fragment()));
                    }
                }
                assertThat(calls).as(text).isEqualTo(whole.calls());
                String expected = whole.calls().isEmpty() ? whole.content() : whole.content() == null ? ""
                        : whole.content();
                assertThat(content.toString().strip()).as(text).isEqualTo(expected.strip());
            }
        }
    }
}
