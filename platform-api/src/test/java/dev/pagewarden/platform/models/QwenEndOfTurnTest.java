package dev.pagewarden.platform.models;

import com.fasterxml.jackson.databind.JsonNode;
import dev.pagewarden.core.model.write.ModelGenerator;
import dev.pagewarden.core.model.write.ModelShape;
import dev.pagewarden.core.model.DType;
import dev.pagewarden.core.model.ModelConfig;
import dev.pagewarden.core.model.gguf.GgufLlama;
import dev.pagewarden.core.model.gguf.GgufValue;
import dev.pagewarden.core.model.gguf.GgufWriter;
import dev.pagewarden.core.template.ChatTemplates;
import dev.pagewarden.core.tokenizer.HfTokenizer;
import dev.pagewarden.core.tokenizer.TextTokenizer;
import dev.pagewarden.core.tokenizer.TokenizerSpec;
import dev.pagewarden.oracle.LlamaCpp;
import dev.pagewarden.platform.testing.PlainHttp;
import dev.pagewarden.platform.testing.StandalonePlatform;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.springframework.context.ConfigurableApplicationContext;

import java.net.http.HttpResponse;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.List;
import java.util.Map;

import static dev.pagewarden.platform.models.QwenChatServingTest.ADMIN;
import static dev.pagewarden.platform.models.QwenChatServingTest.JSON;
import static dev.pagewarden.platform.models.QwenChatServingTest.MAX_TOKENS;
import static dev.pagewarden.platform.models.QwenChatServingTest.QWEN3;
import static org.assertj.core.api.Assertions.assertThat;

/** A served Qwen3 with the real tokenizer ends its turn at {@code <|im_end|>}, as llama.cpp does on the same file. */
class QwenEndOfTurnTest {

    /**
     * Generation stops at the model's end of turn, which is never sent: a Qwen3 whose every token has
     * the same embedding and whose layers add nothing sees the same last hidden state after any
     * prompt, and its classifier row for {@code <|im_end|>} points along it - so its first greedy token
     * is {@code <|im_end|>}, for llama.cpp as for the engine.
     */
    @Test
    void generationStopsAtImEndWhichIsNeverSent(@TempDir Path dir) throws Exception {
        QwenChatServingTest.requireOracles();
        TokenizerSpec spec = HfTokenizer.load(QWEN3);
        TextTokenizer tokenizer = spec.build();
        String template = ChatTemplates.fromHfFolder(QWEN3).source();
        int imEnd = tokenizer.id("<|im_end|>").orElseThrow();
        ModelConfig cfg = ModelShape.parse("dim=64,hidden=128,layers=2,heads=4,kv_heads=2,vocab=512,seq=256,shared=false")
                .forArchitecture("qwen3", null).config().withVocabSize(spec.pieces().size());
        float[] e = new float[cfg.dim()];
        for (int j = 0; j < e.length; j++) {
            e[j] = (j % 3 == 0 ? 0.2f : -0.1f);
        }
        Path stops = dir.resolve("qwen3-stops.gguf");
        GgufWriter w = GgufLlama.writer(cfg, null, DType.F32, "stops", slot -> switch (slot.role()) {
            case TOKEN_EMBD -> (row, dst) -> System.arraycopy(e, 0, dst, 0, dst.length);
            case WO, W2 -> (row, dst) -> Arrays.fill(dst, 0f);
            case OUTPUT -> (row, dst) -> {
                if (row == imEnd) {
                    for (int j = 0; j < dst.length; j++) {
                        dst[j] = 4 * e[j];
                    }
                } else {
                    ModelGenerator.weights(3, slot).fill(row, dst);
                }
            };
            default -> ModelGenerator.weights(3, slot);
        });
        GgufLlama.putTokenizer(w, spec);
        w.put("tokenizer.chat_template", GgufValue.string(template));
        w.write(stops, b -> { });

        int[] prompt = LlamaCpp.tokenize(stops, QwenChatServingTest.oracleRendering(template, dir, "Hi"), true, false);
        LlamaCpp.Greedy oracle = LlamaCpp.greedy(stops, prompt, MAX_TOKENS);
        assertThat(oracle.ids()).as("llama.cpp's first greedy token ends the turn").containsExactly(imEnd);
        assertThat(oracle.stoppedAtEog()).isTrue();

        ConfigurableApplicationContext other = StandalonePlatform.start("pagewarden.home=" + dir.resolve("home"),
                "pagewarden.admin-token=" + ADMIN, "pagewarden.model.path=" + stops, "pagewarden.engine.canary-interval=0s");
        try {
            PlainHttp h = new PlainHttp("http://localhost:" + other.getEnvironment().getProperty("local.server.port"));
            String k = h.newTenantKey(ADMIN, "stops");
            HttpResponse<String> r = h.send(h.post("/v1/chat/completions", k, JSON.writeValueAsString(Map.of(
                    "model", "qwen3-stops", "max_tokens", MAX_TOKENS, "temperature", 0,
                    "messages", List.of(Map.of("role", "user", "content", "Hi"))))));
            assertThat(r.statusCode()).as(r.body()).isEqualTo(200);
            JsonNode choice = JSON.readTree(r.body()).path("choices").get(0);
            assertThat(choice.path("finish_reason").asText()).isEqualTo("stop");
            assertThat(choice.path("message").path("content").asText()).as("the end of turn is not sent").isEmpty();
            assertThat(JSON.readTree(r.body()).path("usage").path("prompt_tokens").asInt()).isEqualTo(prompt.length);
        } finally {
            other.close();
        }
    }
}
