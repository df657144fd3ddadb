package dev.pagewarden.core.template;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.pagewarden.core.model.ModelFormatException;
import dev.pagewarden.core.model.gguf.GgufFile;
import dev.pagewarden.core.model.gguf.GgufReader;

import java.io.IOException;
import java.lang.foreign.Arena;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;

/** Finds a model's chat template: in a GGUF file's metadata or a Hugging Face folder's {@code tokenizer_config.json}. */
public final class ChatTemplates {
    private ChatTemplates() {
    }

    /** From a GGUF file or an HF folder; a model without a template gets {@link ChatTemplate#fallback}. */
    public static ChatTemplate load(Path model) {
        if (Files.isDirectory(model)) {
            return fromHfFolder(model);
        }
        if (Files.isRegularFile(model)) {
            try (Arena arena = Arena.ofConfined()) {
                return fromGguf(GgufReader.read(model, arena));
            }
        }
        throw new ModelFormatException(model + ": no such GGUF file or model folder");
    }

    /**
     * {@code tokenizer.chat_template}, with {@code bos_token}/{@code eos_token} the vocabulary strings of
     * {@code tokenizer.ggml.bos_token_id}/{@code eos_token_id}.
     */
    public static ChatTemplate fromGguf(GgufFile gguf) {
        String bos = null;
        String eos = null;
        if (gguf.get("tokenizer.ggml.tokens").isPresent()) {
            List<String> tokens = gguf.strings("tokenizer.ggml.tokens");
            bos = token(gguf, tokens, "tokenizer.ggml.bos_token_id");
            eos = token(gguf, tokens, "tokenizer.ggml.eos_token_id");
        }
        return gguf.get("tokenizer.chat_template").isPresent()
                ? ChatTemplate.of(gguf.string("tokenizer.chat_template"), bos, eos)
                : ChatTemplate.fallback(bos, eos);
    }

    private static String token(GgufFile gguf, List<String> tokens, String key) {
        if (gguf.get(key).isEmpty()) {
            return null;
        }
        return tokens.get((int) gguf.integer(key, 0, tokens.size() - 1));
    }

    /**
     * {@code tokenizer_config.json}'s {@code chat_template} (a string, or a list of named templates of
     * which {@code default} is taken), else a {@code chat_template.jinja} file beside it, else the fallback.
     */
    public static ChatTemplate fromHfFolder(Path dir) {
        Path configFile = dir.resolve("tokenizer_config.json");
        if (!Files.isRegularFile(configFile)) {
            throw new ModelFormatException(dir + ": no tokenizer_config.json");
        }
        JsonNode config;
        try {
            config = new ObjectMapper().readTree(configFile.toFile());
        } catch (IOException e) {
            throw new ModelFormatException(configFile + ": not valid JSON: " + e.getMessage(), e);
        }
        if (config == null || !config.isObject()) {
            throw new ModelFormatException(configFile + ": should hold a JSON object");
        }
        String bos = specialToken(configFile, config, "bos_token");
        String eos = specialToken(configFile, config, "eos_token");
        JsonNode t = config.get("chat_template");
        if (t != null && t.isTextual()) {
            return ChatTemplate.of(t.asText(), bos, eos);
        }
        if (t != null && t.isArray()) {
            for (JsonNode named : t) {
                if ("default".equals(named.path("name").asText()) && named.path("template").isTextual()) {
                    return ChatTemplate.of(named.get("template").asText(), bos, eos);
                }
            }
            throw new ModelFormatException(configFile + ": chat_template is a list without a \"default\" entry");
        }
        if (t != null && !t.isNull()) {
            throw new ModelFormatException(configFile + ": chat_template should be a string or a list, got " + t.getNodeType());
        }
        Path jinja = dir.resolve("chat_template.jinja");
        if (Files.isRegularFile(jinja)) {
            try {
                return ChatTemplate.of(Files.readString(jinja), bos, eos);
            } catch (IOException e) {
                throw new ModelFormatException(jinja + ": " + e.getMessage(), e);
            }
        }
        return ChatTemplate.fallback(bos, eos);
    }

    /** A special token is a string, an added-token object with {@code content}, or null. */
    private static String specialToken(Path file, JsonNode config, String key) {
        JsonNode v = config.get(key);
        if (v == null || v.isNull()) {
            return null;
        }
        if (v.isTextual()) {
            return v.asText();
        }
        if (v.isObject() && v.path("content").isTextual()) {
            return v.get("content").asText();
        }
        throw new ModelFormatException(file + ": " + key + " should be a string or an object with \"content\", got " + v);
    }
}
