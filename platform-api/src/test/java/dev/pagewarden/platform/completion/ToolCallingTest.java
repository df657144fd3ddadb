package dev.pagewarden.platform.completion;

import dev.pagewarden.platform.error.ApiException;
import org.junit.jupiter.api.Test;
import tools.jackson.databind.json.JsonMapper;

import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;

/** How a forced call's refusal by an engine without grammars is named, and how calls are shaped for a chat. */
class ToolCallingTest {
    private static final JsonMapper JSON = JsonMapper.builder().build();

    private static CompletionRequest chat(String tools) {
        ToolRequest t = ToolRequest.parse(JSON.readTree(tools), false);
        return new CompletionRequest(CompletionRequest.Kind.CHAT, "m", null, null,
                List.of(new ChatMessage("user", "hi")), 10, 1f, 1f, null, List.of(), false, false, null, 1,
                CompletionRequest.Controls.NONE, null, null, t, Thinking.NONE);
    }

    @Test
    void aForcedCallRefusedForItsGrammarNamesToolChoice() {
        String tools = "\"tools\":[{\"type\":\"function\",\"function\":{\"name\":\"f\"}}]";
        ApiException refused = ApiException.invalid("response_format", "no grammars here");
        ApiException required = ToolCalling.inToolTerms(chat("{" + tools + ",\"tool_choice\":\"required\"}"), refused);
        assertThat(required.error().param()).isEqualTo("tool_choice");
        assertThat(required.error().message()).startsWith("tool_choice \"required\" needs constrained decoding");
        ApiException named = ToolCalling.inToolTerms(chat("{" + tools + ",\"tool_choice\":{\"type\":\"function\","
                + "\"function\":{\"name\":\"f\"}}}"), refused);
        assertThat(named.error().message()).startsWith("tool_choice naming function 'f' needs");
        assertThat(ToolCalling.inToolTerms(chat("{" + tools + "}"), refused)).isSameAs(refused);
        ApiException other = ApiException.invalid("logprobs", "x");
        assertThat(ToolCalling.inToolTerms(chat("{" + tools + ",\"tool_choice\":\"required\"}"), other)).isSameAs(other);
    }
}
