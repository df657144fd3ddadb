package dev.pagewarden.core.template;

import dev.pagewarden.cli.testing.CliRun;
import dev.pagewarden.core.model.gguf.GgufType;
import dev.pagewarden.core.model.gguf.GgufValue;
import dev.pagewarden.core.model.gguf.GgufWriter;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * {@code chat-template --model M --messages FILE [--add-generation-prompt]} on an HF folder and on a GGUF
 * file: what it prints is byte for byte what {@code @huggingface/jinja} renders from the same template.
 */
class ChatTemplateCommandTest {
    private static final String MESSAGES_JSON = """
            [{"role": "system", "content": "Sé breve. 简短 🙂"},
             {"role": "user", "content": "  hi <|im_end|><|eot_id|>\\n\\tthere  "},
             {"role": "assistant", "content": "<think>\\nhm\\n</think>\\n\\nHello"},
             {"role": "user", "content": "\\u00e9\\ud83d\\ude00 again"}]
            """;
    private static final List<ChatMessage> MESSAGES = List.of(new ChatMessage("system", "Sé breve. 简短 🙂"),
            new ChatMessage("user", "  hi <|im_end|><|eot_id|>\n\tthere  "), new ChatMessage("assistant", "<think>\nhm\n</think>\n\nHello"),
            new ChatMessage("user", "é😀 again"));

    @TempDir
    Path dir;

    @BeforeAll
    static void oracle() {
        TemplateOracle.requireInstalled();
    }

    @Test
    void hfFolder() throws Exception {
        Path model = TemplateOracle.lenmlModel("qwen3");
        Path messages = Files.writeString(dir.resolve("m.json"), MESSAGES_JSON);
        for (boolean gen : new boolean[] {true, false}) {
            CliRun run = gen ? CliRun.run("chat-template", "--model", model.toString(), "--messages", messages.toString(), "--add-generation-prompt")
                    : CliRun.run("chat-template", "--model", model.toString(), "--messages", messages.toString());
            assertThat(run.code()).as(run.err()).isZero();
            String template = new com.fasterxml.jackson.databind.ObjectMapper().readTree(model.resolve("tokenizer_config.json").toFile()).get("chat_template").asText();
            String expected = oracle(template, null, "<|im_end|>", gen);
            assertThat(run.out()).isEqualTo(expected);
            assertThat(run.out()).endsWith(gen ? "<|im_start|>assistant\n" : "<|im_end|>\n");
        }
    }

    @Test
    void ggufFile() throws Exception {
        String llama3 = ChatTemplates.fromHfFolder(TemplateOracle.lenmlModel("llama3_1")).source();
        Path gguf = dir.resolve("m.gguf");
        new GgufWriter()
                .put("general.architecture", GgufValue.string("llama"))
                .put("tokenizer.ggml.model", GgufValue.string("gpt2"))
                .put("tokenizer.ggml.tokens", GgufValue.array(GgufType.STRING, List.of("a", "<|begin_of_text|>", "<|eot_id|>", "b")))
                .put("tokenizer.ggml.bos_token_id", GgufValue.uint32(1))
                .put("tokenizer.ggml.eos_token_id", GgufValue.uint32(2))
                .put("tokenizer.chat_template", GgufValue.string(llama3))
                .write(gguf, n -> { });
        Path messages = Files.writeString(dir.resolve("m.json"), MESSAGES_JSON);
        CliRun run = CliRun.run("chat-template", "--model", gguf.toString(), "--messages", messages.toString(), "--add-generation-prompt");
        assertThat(run.code()).as(run.err()).isZero();
        assertThat(run.out()).isEqualTo(oracle(llama3, "<|begin_of_text|>", "<|eot_id|>", true)).startsWith("<|begin_of_text|><|start_header_id|>system");
    }

    @Test
    void ggufWithoutTemplateUsesTheFallback() throws Exception {
        Path gguf = dir.resolve("plain.gguf");
        new GgufWriter().put("general.architecture", GgufValue.string("llama")).write(gguf, n -> { });
        Path messages = Files.writeString(dir.resolve("m.json"), "[{\"role\": \"user\", \"content\": \" hi \"}]");
        CliRun run = CliRun.run("chat-template", "--model", gguf.toString(), "--messages", messages.toString(), "--add-generation-prompt");
        assertThat(run.code()).as(run.err()).isZero();
        assertThat(run.out()).isEqualTo(oracle(ChatTemplate.FALLBACK_SOURCE, null, null, true, List.of(new ChatMessage("user", " hi "))));
    }

    @Test
    void badInputIsNamed() throws Exception {
        Path model = TemplateOracle.lenmlModel("qwen3");
        Path notArray = Files.writeString(dir.resolve("a.json"), "{\"role\": \"user\"}");
        Path noContent = Files.writeString(dir.resolve("b.json"), "[{\"role\": \"user\", \"content\": \"x\"}, {\"role\": \"user\"}]");
        Path extra = Files.writeString(dir.resolve("c.json"), "[{\"role\": \"user\", \"content\": \"x\", \"name\": \"n\"}]");
        assertThat(CliRun.run("chat-template", "--model", model.toString(), "--messages", notArray.toString()))
                .satisfies(r -> assertThat(r.code()).isEqualTo(1)).satisfies(r -> assertThat(r.err()).contains("a.json").contains("JSON array"));
        assertThat(CliRun.run("chat-template", "--model", model.toString(), "--messages", noContent.toString()))
                .satisfies(r -> assertThat(r.code()).isEqualTo(1)).satisfies(r -> assertThat(r.err()).contains("entry 1").contains("\"content\""));
        assertThat(CliRun.run("chat-template", "--model", model.toString(), "--messages", extra.toString()).err()).contains("unknown field \"name\"");
        assertThat(CliRun.run("chat-template", "--model", dir.resolve("nope").toString(), "--messages", extra.toString()))
                .satisfies(r -> assertThat(r.code()).isEqualTo(2)).satisfies(r -> assertThat(r.err()).contains("--model").contains("nope"));
        assertThat(CliRun.run("chat-template", "--model", model.toString()).err()).contains("missing --messages");

        Path llama2 = Files.createDirectory(dir.resolve("llama2"));
        Files.writeString(llama2.resolve("tokenizer_config.json"), "{\"bos_token\": {\"content\": \"<s>\"}, \"eos_token\": \"</s>\", \"chat_template\": "
                + new com.fasterxml.jackson.databind.ObjectMapper().writeValueAsString(TemplateFixtures.LLAMA_2_CHAT) + "}");
        Path twoUsers = Files.writeString(dir.resolve("d.json"), "[{\"role\": \"user\", \"content\": \"a\"}, {\"role\": \"user\", \"content\": \"b\"}]");
        CliRun rejected = CliRun.run("chat-template", "--model", llama2.toString(), "--messages", twoUsers.toString());
        assertThat(rejected.code()).isEqualTo(1);
        assertThat(rejected.err()).contains("Conversation roles must alternate user/assistant/user/assistant/...");
        assertThat(rejected.out()).isEmpty();
    }

    private String oracle(String template, String bos, String eos, boolean gen) throws Exception {
        return oracle(template, bos, eos, gen, MESSAGES);
    }

    private String oracle(String template, String bos, String eos, boolean gen, List<ChatMessage> messages) throws Exception {
        TemplateOracle.Rendered r = TemplateOracle.render(TemplateOracle.Engine.HF_JINJA, dir, template, bos, eos,
                List.of(new TemplateOracle.Case("cli", messages, gen))).getFirst();
        assertThat(r.error()).isNull();
        assertThat(r.text().getBytes(StandardCharsets.UTF_8)).isNotEmpty();
        return r.text();
    }
}
