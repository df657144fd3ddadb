package dev.pagewarden.platform;

import dev.langchain4j.agent.tool.Tool;
import dev.langchain4j.data.message.ToolExecutionResultMessage;
import dev.langchain4j.model.chat.Capability;
import dev.langchain4j.model.chat.request.ChatRequest;
import dev.langchain4j.model.chat.request.ToolChoice;
import dev.langchain4j.model.openai.OpenAiChatModel;
import dev.langchain4j.service.AiServices;
import dev.pagewarden.platform.testing.PlatformTest;
import org.junit.jupiter.api.Test;

import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * LangChain4j's AiServices, unmodified, against the OpenAI-compatible API: a {@code @Tool} method is called with
 * arguments LangChain4j can bind (the first request forces a call), and a record return type comes back through
 * {@code response_format} json_schema. The test model's weights are random: shapes are asserted, not meaning.
 */
class LangChain4jCompatibilityTest extends PlatformTest {

    interface Assistant {
        String chat(String message);
    }

    static final class Calculator {
        final List<long[]> calls = new CopyOnWriteArrayList<>();

        @Tool("Adds two integers")
        double add(long a, long b) {
            calls.add(new long[]{a, b});
            return (double) a + b;
        }
    }

    enum Kind { DOG, CAT }

    record Pet(Kind kind, boolean friendly, int legs) {
    }

    interface Describer {
        Pet describe(String text);
    }

    private OpenAiChatModel.OpenAiChatModelBuilder model(String key) {
        return OpenAiChatModel.builder().baseUrl(baseUrl() + "/v1").apiKey(key).modelName(MODEL).maxTokens(80)
                .temperature(1.0).seed(3).maxRetries(0);
    }

    @Test
    void aToolMethodIsCalledWithBoundArgumentsAndTheAnswerComesAfterItsResult() {
        Calculator calculator = new Calculator();
        // the first request must call (the model is random); the one carrying the result leaves the choice to it
        Assistant assistant = AiServices.builder(Assistant.class)
                .chatModel(model(newTenant("lc4j-tools")[1]).strictTools(true).build())
                .tools(calculator)
                .maxSequentialToolsInvocations(4)
                .chatRequestTransformer(r -> r.messages().stream().anyMatch(m -> m instanceof ToolExecutionResultMessage)
                        ? r : ChatRequest.builder().messages(r.messages()).parameters(r.parameters().overrideWith(
                        dev.langchain4j.model.chat.request.ChatRequestParameters.builder()
                                .toolChoice(ToolChoice.REQUIRED).build())).build())
                .build();
        String answer = assistant.chat("What is 2 + 3?");
        assertThat(calculator.calls).as("the forced call reached the method").isNotEmpty();
        assertThat(answer).isNotNull();
    }

    @Test
    void aRecordComesBackThroughAJsonSchemaResponseFormat() {
        Describer describer = AiServices.create(Describer.class, model(newTenant("lc4j-structured")[1])
                .supportedCapabilities(Capability.RESPONSE_FORMAT_JSON_SCHEMA).strictJsonSchema(true).build());
        for (int i = 0; i < 3; i++) {
            Pet pet = describer.describe("A pet, number " + i + ".");
            assertThat(pet.kind()).isIn(Kind.DOG, Kind.CAT);
        }
    }
}
