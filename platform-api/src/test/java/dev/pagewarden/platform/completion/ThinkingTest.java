package dev.pagewarden.platform.completion;

import dev.pagewarden.core.template.ChatTemplate;
import dev.pagewarden.core.template.ReasoningSplitter;
import dev.pagewarden.platform.error.ApiException;
import org.junit.jupiter.api.Test;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.json.JsonMapper;

import java.util.List;
import java.util.Map;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

class ThinkingTest {
    private static final JsonMapper JSON = JsonMapper.builder().build();

    private static JsonNode json(String text) {
        return JSON.readTree(text);
    }

    @Test
    void anEffortOnlySwitchesThinking() {
        assertThat(Thinking.ofChat(json("{}"))).isSameAs(Thinking.NONE);
        for (String off : List.of("none", "minimal")) {
            assertThat(Thinking.ofChat(json("{\"reasoning_effort\":\"" + off + "\"}")).templateVariables())
                    .isEqualTo(Map.of("enable_thinking", false));
        }
        for (String on : List.of("low", "medium", "high")) {
            Thinking t = Thinking.ofChat(json("{\"reasoning_effort\":\"" + on + "\"}"));
            assertThat(t.templateVariables()).isEqualTo(Map.of("enable_thinking", true));
            assertThat(t.effort()).isEqualTo(on);
        }
        assertThat(Thinking.ofResponse(json("{\"reasoning\":{\"effort\":\"none\",\"summary\":\"auto\"}}"))
                .templateVariables()).isEqualTo(Map.of("enable_thinking", false));
        // the client's variables pass as JSON values; an agreeing effort is fine
        assertThat(Thinking.ofChat(json("{\"chat_template_kwargs\":{\"enable_thinking\":false,\"x\":[1,\"a\",null]},"
                + "\"reasoning_effort\":\"none\"}")).templateVariables())
                .containsEntry("enable_thinking", false).containsKey("x");
    }

    @Test
    void badValuesAreRefusedNamingTheirField() {
        for (String[] c : List.of(
                new String[] {"{\"chat_template_kwargs\":true}", "chat_template_kwargs"},
                new String[] {"{\"chat_template_kwargs\":{\"bos_token\":\"x\"}}", "chat_template_kwargs.bos_token"},
                new String[] {"{\"reasoning_effort\":\"max\"}", "reasoning_effort"},
                new String[] {"{\"reasoning_effort\":\"high\",\"chat_template_kwargs\":{\"enable_thinking\":false}}",
                        "reasoning_effort"})) {
            assertThatThrownBy(() -> Thinking.ofChat(json(c[0]))).isInstanceOfSatisfying(ApiException.class,
                    e -> assertThat(e.error().param()).isEqualTo(c[1]));
        }
        for (String[] c : List.of(
                new String[] {"{\"reasoning\":\"high\"}", "reasoning"},
                new String[] {"{\"reasoning\":{\"effort\":\"huge\"}}", "reasoning.effort"},
                new String[] {"{\"reasoning\":{\"summary\":\"all\"}}", "reasoning.summary"},
                new String[] {"{\"reasoning\":{\"budget\":10}}", "reasoning.budget"})) {
            assertThatThrownBy(() -> Thinking.ofResponse(json(c[0]))).isInstanceOfSatisfying(ApiException.class,
                    e -> assertThat(e.error().param()).isEqualTo(c[1]));
        }
    }

    @Test
    void onlyATemplateThatThinksGetsASplitterStartingInsideWhenItsPromptOpensTheSpan() {
        List<ChatTemplate.Segment> plain = List.of(new ChatTemplate.Segment("<|im_start|>assistant\n", false));
        List<ChatTemplate.Segment> opened = List.of(new ChatTemplate.Segment("<|im_start|>assistant\n<think>\n", false));
        assertThat(Thinking.splitter(ChatTemplate.fallback(null, null), plain)).isNull();
        ChatTemplate thinks = ChatTemplate.of("{% if enable_thinking is false %}<think></think>{% endif %}", null, null);
        ReasoningSplitter fromStart = Thinking.splitter(thinks, plain);
        assertThat(fromStart.accept("answer")).isEqualTo(new ReasoningSplitter.Part("", "answer"));
        ReasoningSplitter inside = Thinking.splitter(thinks, opened);
        assertThat(inside.accept("hmm")).isEqualTo(new ReasoningSplitter.Part("hmm", ""));
    }
}
