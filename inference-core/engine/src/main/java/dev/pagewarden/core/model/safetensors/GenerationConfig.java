package dev.pagewarden.core.model.safetensors;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.pagewarden.core.model.ModelFormatException;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;

/**
 * The token ids of a Hugging Face folder's {@code generation_config.json}: {@code bos_token_id} and
 * {@code eos_token_id}, which transformers lets be one id or a list (Llama 3.1 and Qwen 3 list several
 * ids that each end a reply).
 *
 * @param bos BOS id, -1 when not given
 * @param eos the ids that end generation, in file order (empty when not given)
 */
public record GenerationConfig(int bos, List<Integer> eos) {
    public static final String FILE = "generation_config.json";
    public static final GenerationConfig NONE = new GenerationConfig(-1, List.of());

    public GenerationConfig {
        eos = List.copyOf(eos);
    }

    /** {@code dir/generation_config.json}, or {@link #NONE} when the folder has none. */
    public static GenerationConfig read(Path dir) {
        Path file = dir.resolve(FILE);
        if (!Files.isRegularFile(file)) {
            return NONE;
        }
        JsonNode c = HfLlama.jsonObject(file);
        int bos = -1;
        JsonNode b = c.get("bos_token_id");
        if (b != null && !b.isNull()) {
            bos = id(file, "bos_token_id", b);
        }
        List<Integer> eos = new ArrayList<>();
        JsonNode e = c.get("eos_token_id");
        if (e != null && e.isArray()) {
            for (JsonNode id : e) {
                eos.add(id(file, "eos_token_id", id));
            }
        } else if (e != null && !e.isNull()) {
            eos.add(id(file, "eos_token_id", e));
        }
        return new GenerationConfig(bos, eos);
    }

    private static int id(Path file, String key, JsonNode v) {
        if (!v.isIntegralNumber() || !v.canConvertToInt() || v.asInt() < 0) {
            throw new ModelFormatException(file + ": " + key + " should be a token id or a list of token ids, got " + v);
        }
        return v.asInt();
    }

    /** Refuses ids outside a vocabulary of {@code size} tokens, naming {@code what} holds that many. */
    public GenerationConfig requireWithin(int size, Path dir, String what) {
        List<Integer> all = new ArrayList<>(eos);
        if (bos >= 0) {
            all.add(bos);
        }
        for (int id : all) {
            if (id >= size) {
                throw new ModelFormatException(dir.resolve(FILE) + ": token id " + id + " lies outside the "
                        + size + " tokens of " + what);
            }
        }
        return this;
    }

    /** Writes this as {@code dir/generation_config.json} (keys left out when not set). */
    public void write(Path dir) throws IOException {
        ObjectNode c = new ObjectMapper().createObjectNode();
        if (bos >= 0) {
            c.put("bos_token_id", bos);
        }
        if (eos.size() == 1) {
            c.put("eos_token_id", eos.getFirst());
        } else if (!eos.isEmpty()) {
            eos.forEach(c.putArray("eos_token_id")::add);
        }
        Files.writeString(dir.resolve(FILE), c.toPrettyString());
    }
}
