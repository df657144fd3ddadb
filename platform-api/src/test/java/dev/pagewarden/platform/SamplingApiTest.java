package dev.pagewarden.platform;

import com.openai.client.OpenAIClient;
import com.openai.client.okhttp.OpenAIOkHttpClient;
import com.openai.core.http.StreamResponse;
import com.openai.models.chat.completions.ChatCompletion;
import com.openai.models.chat.completions.ChatCompletionChunk;
import com.openai.models.chat.completions.ChatCompletionCreateParams;
import com.openai.models.chat.completions.ChatCompletionTokenLogprob;
import com.openai.models.completions.Completion;
import com.openai.models.completions.CompletionCreateParams;
import dev.pagewarden.platform.testing.PlatformTest;
import org.junit.jupiter.api.Test;
import org.springframework.http.HttpStatus;
import org.springframework.http.MediaType;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

import static org.assertj.core.api.Assertions.assertThat;

/** Log probabilities, n choices and the logit controls through the API, read by the official OpenAI SDK where it can. */
class SamplingApiTest extends PlatformTest {

    private OpenAIClient sdk(String key) {
        return OpenAIOkHttpClient.builder().apiKey(key).baseUrl(baseUrl() + "/v1").maxRetries(0).build();
    }

    private Map<?, ?> post(String key, String uri, Map<String, Object> body) {
        return as(key).post().uri(uri).contentType(MediaType.APPLICATION_JSON).bodyValue(body)
                .exchange().expectStatus().isOk().expectBody(Map.class).returnResult().getResponseBody();
    }

    private List<Map<?, ?>> stream(String key, String uri, Map<String, Object> body) {
        String raw = as(key).post().uri(uri).contentType(MediaType.APPLICATION_JSON).bodyValue(body)
                .exchange().expectStatus().isOk().expectBody(String.class).returnResult().getResponseBody();
        assertOpenAiEventStream(raw);
        List<String> data = sseData(raw);
        assertThat(data.getLast()).isEqualTo("[DONE]");
        List<Map<?, ?>> chunks = new ArrayList<>();
        for (String d : data.subList(0, data.size() - 1)) {
            Map<?, ?> chunk = Json.parse(d);
            assertThat(chunk.containsKey("error")).as(d).isFalse();
            chunks.add(chunk);
        }
        return chunks;
    }

    @Test
    void chatLogprobsInOpenAisShapeStreamedAndNot() {
        OpenAIClient openai = sdk(newTenant("lp-chat")[1]);
        ChatCompletionCreateParams params = ChatCompletionCreateParams.builder().model(MODEL)
                .addUserMessage("Tell me about a dog.").maxCompletionTokens(10).temperature(0.0)
                .logprobs(true).topLogprobs(3).build();
        ChatCompletion answer = openai.chat().completions().create(params);
        answer.validate();
        ChatCompletion.Choice choice = answer.choices().getFirst();
        List<ChatCompletionTokenLogprob> content = choice.logprobs().orElseThrow().content().orElseThrow();
        assertThat(content).hasSize((int) answer.usage().orElseThrow().completionTokens());
        StringBuilder joined = new StringBuilder();
        for (ChatCompletionTokenLogprob t : content) {
            assertThat(t.logprob()).isLessThanOrEqualTo(0.0);
            assertThat(t.topLogprobs()).hasSize(3);
            // greedy: the chosen token is the most likely one, with the same number
            assertThat(t.topLogprobs().getFirst().token()).isEqualTo(t.token());
            assertThat(t.topLogprobs().getFirst().logprob()).isEqualTo(t.logprob());
            assertThat(t.topLogprobs().get(1).logprob()).isLessThanOrEqualTo(t.logprob());
            byte[] bytes = new byte[t.bytes().orElseThrow().size()];
            for (int i = 0; i < bytes.length; i++) {
                bytes[i] = t.bytes().orElseThrow().get(i).byteValue();
            }
            assertThat(new String(bytes, java.nio.charset.StandardCharsets.UTF_8)).isEqualTo(t.token());
            joined.append(t.token());
        }
        assertThat(joined.toString()).isEqualTo(choice.message().content().orElseThrow());

        List<ChatCompletionTokenLogprob> streamed = new ArrayList<>();
        try (StreamResponse<ChatCompletionChunk> stream = openai.chat().completions().createStreaming(params)) {
            stream.stream().forEach(chunk -> chunk.choices().forEach(c -> c.logprobs()
                    .flatMap(ChatCompletionChunk.Choice.Logprobs::content).ifPresent(streamed::addAll)));
        }
        assertThat(streamed).hasSameSizeAs(content);
        for (int i = 0; i < content.size(); i++) {
            assertThat(streamed.get(i).token()).isEqualTo(content.get(i).token());
            assertThat(streamed.get(i).logprob()).isEqualTo(content.get(i).logprob());
        }

        // without logprobs: null, as before
        ChatCompletion plain = openai.chat().completions().create(params.toBuilder().logprobs(false)
                .topLogprobs(com.openai.core.JsonMissing.of()).build());
        assertThat(plain.choices().getFirst().logprobs()).isEmpty();
    }

    @Test
    void completionLogprobsInTheLegacyShapeStreamedAndNot() {
        String key = newTenant("lp-text")[1];
        Map<String, Object> request = Map.of("model", MODEL, "prompt", "The little dog", "max_tokens", 8,
                "temperature", 0, "logprobs", 2);
        Map<?, ?> body = post(key, "/v1/completions", request);
        Map<?, ?> choice = (Map<?, ?>) ((List<?>) body.get("choices")).getFirst();
        Map<?, ?> lp = (Map<?, ?>) choice.get("logprobs");
        List<?> tokens = (List<?>) lp.get("tokens");
        List<?> values = (List<?>) lp.get("token_logprobs");
        List<?> top = (List<?>) lp.get("top_logprobs");
        List<?> offsets = (List<?>) lp.get("text_offset");
        assertThat(tokens).hasSize(8);
        assertThat(values).hasSize(8);
        assertThat(top).hasSize(8);
        assertThat(offsets).hasSize(8);
        int at = 0;
        for (int i = 0; i < 8; i++) {
            assertThat(((Number) offsets.get(i)).intValue()).isEqualTo(at);
            at += ((String) tokens.get(i)).length();
            Map<?, ?> alternatives = (Map<?, ?>) top.get(i);
            assertThat(alternatives.size()).isBetween(2, 3);
            assertThat(alternatives.containsKey(tokens.get(i))).isTrue();
            assertThat(((Number) alternatives.get(tokens.get(i))).doubleValue())
                    .isEqualTo(((Number) values.get(i)).doubleValue());
        }
        assertThat(String.join("", tokens.stream().map(String.class::cast).toList())).isEqualTo(choice.get("text"));

        Map<String, Object> streamed = new HashMap<>(request);
        streamed.put("stream", true);
        List<Object> streamedTokens = new ArrayList<>();
        List<Object> streamedOffsets = new ArrayList<>();
        for (Map<?, ?> chunk : stream(key, "/v1/completions", streamed)) {
            Map<?, ?> c = (Map<?, ?>) ((List<?>) chunk.get("choices")).getFirst();
            if (c.get("logprobs") instanceof Map<?, ?> part) {
                streamedTokens.addAll((List<?>) part.get("tokens"));
                streamedOffsets.addAll((List<?>) part.get("text_offset"));
            }
        }
        assertThat(streamedTokens).isEqualTo(tokens);
        assertThat(streamedOffsets).isEqualTo(offsets);

        // the SDK reads the same shape
        Completion sdkAnswer = sdk(key).completions().create(CompletionCreateParams.builder().model(MODEL)
                .prompt("The little dog").maxTokens(8).temperature(0.0).logprobs(2).build());
        sdkAnswer.validate();
        assertThat(sdkAnswer.choices().getFirst().logprobs().orElseThrow().tokens().orElseThrow()).isEqualTo(tokens);
    }

    @Test
    void nChoicesAreCountedTogetherAndStreamInterleavedByIndex() {
        String key = newTenant("n-choices")[1];
        Map<String, Object> one = Map.of("model", MODEL, "messages", List.of(Map.of("role", "user", "content", "Hi")),
                "max_tokens", 12, "temperature", 0.9, "seed", 11, "logprobs", true);
        Map<String, Object> three = new HashMap<>(one);
        three.put("n", 3);
        Map<?, ?> body = post(key, "/v1/chat/completions", three);
        List<?> choices = (List<?>) body.get("choices");
        assertThat(choices).hasSize(3);
        int tokens = 0;
        List<String> texts = new ArrayList<>();
        for (int i = 0; i < 3; i++) {
            Map<?, ?> c = (Map<?, ?>) choices.get(i);
            assertThat(c.get("index")).isEqualTo(i);
            assertThat((String) c.get("pagewarden_receipt")).startsWith("pwr1.");
            tokens += ((List<?>) ((Map<?, ?>) c.get("logprobs")).get("content")).size();
            texts.add((String) ((Map<?, ?>) c.get("message")).get("content"));
        }
        Map<?, ?> usage = (Map<?, ?>) body.get("usage");
        Map<?, ?> single = post(key, "/v1/chat/completions", one);
        assertThat(usage.get("prompt_tokens")).isEqualTo(((Map<?, ?>) single.get("usage")).get("prompt_tokens"));
        assertThat(usage.get("completion_tokens")).isEqualTo(tokens);
        assertThat(usage.get("total_tokens")).isEqualTo((Integer) usage.get("prompt_tokens") + tokens);
        // choice i samples with seed + i: choice 0 is the n=1 answer, choice 1 the n=1 answer with seed 12
        assertThat(texts.getFirst()).isEqualTo(((Map<?, ?>) ((Map<?, ?>) ((List<?>) single.get("choices")).getFirst())
                .get("message")).get("content"));
        Map<String, Object> seed12 = new HashMap<>(one);
        seed12.put("seed", 12);
        assertThat(texts.get(1)).isEqualTo(((Map<?, ?>) ((Map<?, ?>) ((List<?>) post(key, "/v1/chat/completions", seed12)
                .get("choices")).getFirst()).get("message")).get("content"));
        // the same request again: the same choices
        List<?> again = (List<?>) post(key, "/v1/chat/completions", three).get("choices");
        for (int i = 0; i < 3; i++) {
            assertThat(((Map<?, ?>) ((Map<?, ?>) again.get(i)).get("message")).get("content")).isEqualTo(texts.get(i));
        }

        Map<String, Object> streamed = new HashMap<>(three);
        streamed.put("stream", true);
        streamed.put("stream_options", Map.of("include_usage", true));
        StringBuilder[] joined = {new StringBuilder(), new StringBuilder(), new StringBuilder()};
        int finished = 0;
        Map<?, ?> streamedUsage = null;
        for (Map<?, ?> chunk : stream(key, "/v1/chat/completions", streamed)) {
            List<?> cs = (List<?>) chunk.get("choices");
            if (cs.isEmpty()) {
                streamedUsage = (Map<?, ?>) chunk.get("usage");
                continue;
            }
            assertThat(streamedUsage).as("usage comes last").isNull();
            Map<?, ?> c = (Map<?, ?>) cs.getFirst();
            int index = (Integer) c.get("index");
            Object content = ((Map<?, ?>) c.get("delta")).get("content");
            if (content != null) {
                joined[index].append(content);
            }
            if (c.get("finish_reason") != null) {
                finished++;
            }
        }
        assertThat(finished).isEqualTo(3);
        assertThat(streamedUsage).isEqualTo(usage);
        for (int i = 0; i < 3; i++) {
            assertThat(joined[i].toString()).isEqualTo(texts.get(i));
        }

        // greedy: every choice is the same
        Map<String, Object> greedy = new HashMap<>(three);
        greedy.put("temperature", 0);
        List<?> same = (List<?>) post(key, "/v1/chat/completions", greedy).get("choices");
        assertThat(same.stream().map(c -> ((Map<?, ?>) ((Map<?, ?>) c).get("message")).get("content")).distinct()).hasSize(1);
    }

    @Test
    void penaltiesAndBiasChangeTheGreedyOutput() {
        String key = newTenant("controls")[1];
        Map<String, Object> base = Map.of("model", MODEL, "prompt", "Once upon a time", "max_tokens", 30, "temperature", 0,
                "logprobs", 0);
        String plain = (String) ((Map<?, ?>) ((List<?>) post(key, "/v1/completions", base).get("choices")).getFirst()).get("text");
        for (Map<String, Object> extra : List.<Map<String, Object>>of(Map.of("frequency_penalty", 1.5),
                Map.of("presence_penalty", 2), Map.of("repetition_penalty", 1.8))) {
            Map<String, Object> body = new HashMap<>(base);
            body.putAll(extra);
            String text = (String) ((Map<?, ?>) ((List<?>) post(key, "/v1/completions", body).get("choices")).getFirst()).get("text");
            assertThat(text).as("%s", extra).isNotEqualTo(plain);
        }
        // filters keep greedy's choice
        Map<String, Object> filtered = new HashMap<>(base);
        filtered.putAll(Map.of("top_k", 5, "min_p", 0.5, "top_p", 0.5));
        assertThat(((Map<?, ?>) ((List<?>) post(key, "/v1/completions", filtered).get("choices")).getFirst()).get("text"))
                .isEqualTo(plain);
    }

    @Test
    void eachBadValueIsA400NamingItsParameter() {
        String key = newTenant("bad-sampling")[1];
        Map<String, Object> chat = Map.of("model", MODEL, "messages", List.of(Map.of("role", "user", "content", "Hi")));
        Map<String, Object> text = Map.of("model", MODEL, "prompt", "hi");
        record Case(String uri, Map<String, Object> base, Map<String, Object> extra, String param) {
        }
        for (Case c : List.of(
                new Case("/v1/chat/completions", chat, Map.of("logprobs", true, "top_logprobs", 21), "top_logprobs"),
                new Case("/v1/chat/completions", chat, Map.of("top_logprobs", 2), "top_logprobs"),
                new Case("/v1/chat/completions", chat, Map.of("logprobs", 1), "logprobs"),
                new Case("/v1/completions", text, Map.of("logprobs", 6), "logprobs"),
                new Case("/v1/completions", text, Map.of("logit_bias", Map.of("99999", 1)), "logit_bias"),
                new Case("/v1/completions", text, Map.of("logit_bias", Map.of("abc", 1)), "logit_bias"),
                new Case("/v1/completions", text, Map.of("logit_bias", Map.of("5", 101)), "logit_bias"),
                new Case("/v1/completions", text, Map.of("n", 9), "n"),
                new Case("/v1/completions", text, Map.of("n", 0), "n"),
                new Case("/v1/completions", text, Map.of("best_of", 2), "best_of"),
                new Case("/v1/completions", text, Map.of("presence_penalty", 2.5), "presence_penalty"),
                new Case("/v1/completions", text, Map.of("frequency_penalty", -3), "frequency_penalty"),
                new Case("/v1/completions", text, Map.of("repetition_penalty", 0), "repetition_penalty"),
                new Case("/v1/completions", text, Map.of("top_k", -2), "top_k"),
                new Case("/v1/completions", text, Map.of("min_p", 1.5), "min_p"))) {
            Map<String, Object> body = new HashMap<>(c.base());
            body.putAll(c.extra());
            as(key).post().uri(c.uri()).contentType(MediaType.APPLICATION_JSON).bodyValue(body).exchange()
                    .expectStatus().isEqualTo(HttpStatus.BAD_REQUEST)
                    .expectBody().jsonPath("$.error.param").isEqualTo(c.param())
                    .jsonPath("$.error.message").isNotEmpty();
        }
    }
}
