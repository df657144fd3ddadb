package dev.pagewarden.platform;

import com.openai.client.OpenAIClient;
import com.openai.client.okhttp.OpenAIOkHttpClient;
import com.openai.core.http.StreamResponse;
import com.openai.errors.NotFoundException;
import com.openai.models.chat.completions.ChatCompletion;
import com.openai.models.chat.completions.ChatCompletionChunk;
import com.openai.models.chat.completions.ChatCompletionCreateParams;
import com.openai.models.completions.Completion;
import com.openai.models.completions.CompletionCreateParams;
import dev.pagewarden.platform.testing.IsolatedReference;
import dev.pagewarden.platform.testing.PlatformTest;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/** The official OpenAI Java SDK, unmodified, against the platform: the proof that existing clients work. */
class OpenAiSdkCompatibilityTest extends PlatformTest {

    private OpenAIClient sdk(String key) {
        return OpenAIOkHttpClient.builder().apiKey(key).baseUrl(baseUrl() + "/v1").maxRetries(0).build();
    }

    @Test
    void completionsAndChatStreamedAndNot() throws Exception {
        OpenAIClient openai = sdk(newTenant("sdk-user")[1]);
        String expected = IsolatedReference.complete("Once upon a time", 30);

        Completion completion = openai.completions().create(CompletionCreateParams.builder()
                .model(MODEL).prompt("Once upon a time").maxTokens(30).temperature(0.0).build());
        assertThat(completion.choices().getFirst().text()).isEqualTo(expected);
        assertThat(completion.usage().orElseThrow().completionTokens()).isEqualTo(30);
        assertThat(completion._additionalProperties().get("pagewarden_receipt").toString()).contains("pwr1.");

        ChatCompletionCreateParams chat = ChatCompletionCreateParams.builder().model(MODEL)
                .addUserMessage("Tell me about a cat.").maxCompletionTokens(20).temperature(0.0).build();
        String chatExpected = IsolatedReference.complete("user: Tell me about a cat.\nassistant:", 20);
        ChatCompletion answer = openai.chat().completions().create(chat);
        assertThat(answer.choices().getFirst().message().content()).contains(chatExpected);

        StringBuilder streamed = new StringBuilder();
        try (StreamResponse<ChatCompletionChunk> stream = openai.chat().completions().createStreaming(chat)) {
            stream.stream().forEach(chunk -> chunk.choices().forEach(c -> c.delta().content().ifPresent(streamed::append)));
        }
        assertThat(streamed.toString()).isEqualTo(chatExpected);

        StringBuilder streamedText = new StringBuilder();
        try (StreamResponse<Completion> stream = openai.completions().createStreaming(CompletionCreateParams.builder()
                .model(MODEL).prompt("Once upon a time").maxTokens(30).temperature(0.0).build())) {
            stream.stream().forEach(chunk -> chunk.choices().forEach(c -> streamedText.append(c.text())));
        }
        assertThat(streamedText.toString()).isEqualTo(expected);

        assertThatThrownBy(() -> openai.completions().create(CompletionCreateParams.builder()
                .model("gpt-99").prompt("hi").build()))
                .isInstanceOf(NotFoundException.class).hasMessageContaining("gpt-99");
    }
}
