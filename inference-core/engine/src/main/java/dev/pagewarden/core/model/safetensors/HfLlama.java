package dev.pagewarden.core.model.safetensors;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.pagewarden.core.model.Architecture;
import dev.pagewarden.core.model.DType;
import dev.pagewarden.core.model.LlamaTensors;
import dev.pagewarden.core.model.LlamaWeights;
import dev.pagewarden.core.model.ModelConfig;
import dev.pagewarden.core.model.ModelFormatException;
import dev.pagewarden.core.model.RopeScaling;
import dev.pagewarden.core.model.RowSource;
import dev.pagewarden.core.model.Tensor;

import java.io.IOException;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.function.Function;

/**
 * Maps a Hugging Face transformers checkpoint ({@code config.json} and safetensors named as
 * {@code LlamaForCausalLM}, {@code MistralForCausalLM}, {@code Qwen2ForCausalLM} and
 * {@code Qwen3ForCausalLM} name them) to {@link LlamaWeights}, so that the engine sees exactly what it
 * sees from the GGUF llama.cpp's converter makes of the same folder:
 * <ul>
 * <li>llama and mistral Q/K rows are permuted as the converter permutes them (Hugging Face rotates the
 * two halves of a head, GGUF's llama rotates adjacent pairs); qwen keeps Hugging Face's order and the
 * engine rotates halves for it;</li>
 * <li>vectors (norms, biases) become F32, as GGUF stores them;</li>
 * <li>matrices stay in their file type (F32, F16, BF16) as views over the mapping.</li>
 * </ul>
 */
public final class HfLlama {
    public static final String CONFIG = "config.json";
    /** The format name a model loaded from a folder reports. */
    public static final String FORMAT = "safetensors";

    private HfLlama() {
    }

    /** A folder's JSON file ({@code config.json}, {@code generation_config.json}) that must hold one object. */
    static JsonNode jsonObject(Path file) {
        JsonNode c;
        try {
            c = new ObjectMapper().readTree(file.toFile());
        } catch (IOException e) {
            throw new ModelFormatException(file + ": not valid JSON: " + e.getMessage(), e);
        }
        if (c == null || !c.isObject()) {
            throw new ModelFormatException(file + ": should hold a JSON object");
        }
        return c;
    }

    /** The model shape of {@code dir/config.json}. */
    public static ModelConfig config(Path dir) {
        Path file = dir.resolve(CONFIG);
        if (!Files.isRegularFile(file)) {
            throw new ModelFormatException(dir + ": no " + CONFIG + " (not a Hugging Face model folder)");
        }
        JsonNode c = jsonObject(file);
        try {
            return config(c);
        } catch (ModelFormatException e) {
            throw new ModelFormatException(file + ": " + e.getMessage(), e);
        }
    }

    static ModelConfig config(JsonNode c) {
        Architecture arch = architecture(c);
        int dim = integer(c, "hidden_size", -1);
        int heads = integer(c, "num_attention_heads", -1);
        int kvHeads = integer(c, "num_key_value_heads", heads);
        int headSize = c.hasNonNull("head_dim") ? integer(c, "head_dim", -1)
                : heads > 0 && dim % heads == 0 ? dim / heads : -1;
        if (headSize < 0) {
            throw new ModelFormatException("hidden_size " + dim + " is not a multiple of num_attention_heads "
                    + heads + " and head_dim is not given");
        }
        float eps = (float) number(c, "rms_norm_eps", 1e-6);
        float theta = (float) number(c, "rope_theta", 10000);
        // tie_word_embeddings defaults to true in transformers' PretrainedConfig
        boolean tied = !c.has("tie_word_embeddings") || c.get("tie_word_embeddings").asBoolean(true);
        ModelConfig cfg = new ModelConfig(dim, integer(c, "intermediate_size", -1), integer(c, "num_hidden_layers", -1),
                heads, kvHeads, integer(c, "vocab_size", -1), integer(c, "max_position_embeddings", 2048), eps, theta,
                tied, arch, headSize, null);
        return cfg.with(arch, headSize, ropeScaling(c, arch, headSize, theta));
    }

    private static Architecture architecture(JsonNode c) {
        String type = c.path("model_type").asText("");
        if (type.isEmpty() && c.path("architectures").isArray() && !c.path("architectures").isEmpty()) {
            type = switch (c.path("architectures").get(0).asText()) {
                case "LlamaForCausalLM" -> "llama";
                case "MistralForCausalLM" -> "mistral";
                case "Qwen2ForCausalLM" -> "qwen2";
                case "Qwen3ForCausalLM" -> "qwen3";
                default -> c.path("architectures").get(0).asText();
            };
        }
        return switch (type) {
            case "llama", "mistral" -> Architecture.LLAMA;
            case "qwen2" -> Architecture.QWEN2;
            case "qwen3" -> Architecture.QWEN3;
            default -> throw new ModelFormatException("model_type '" + type + "' (architectures "
                    + c.path("architectures") + ") is not supported (supported: llama, mistral, qwen2, qwen3)");
        };
    }

    private static RopeScaling ropeScaling(JsonNode c, Architecture arch, int headSize, float theta) {
        JsonNode s = c.get("rope_scaling");
        if (s == null || s.isNull()) {
            return null;
        }
        String type = s.path("rope_type").asText(s.path("type").asText(""));
        if (type.equals("default")) {
            return null;
        }
        if (!type.equals("llama3") || arch != Architecture.LLAMA) {
            throw new ModelFormatException("rope_scaling type '" + type + "' is not supported for " + arch
                    + " (supported: llama3 for llama)");
        }
        return RopeScaling.llama3(number(s, "factor", -1), number(s, "low_freq_factor", -1),
                number(s, "high_freq_factor", -1), integer(s, "original_max_position_embeddings", -1), headSize,
                theta);
    }

    private static int integer(JsonNode c, String key, int absent) {
        JsonNode v = c.get(key);
        if (v == null || v.isNull()) {
            if (absent < 0) {
                throw new ModelFormatException("missing " + key);
            }
            return absent;
        }
        if (!v.isIntegralNumber() || !v.canConvertToInt()) {
            throw new ModelFormatException(key + " should be an integer, got " + v);
        }
        return v.asInt();
    }

    private static double number(JsonNode c, String key, double absent) {
        JsonNode v = c.get(key);
        if (v == null || v.isNull()) {
            if (absent < 0) {
                throw new ModelFormatException("missing " + key);
            }
            return absent;
        }
        if (!v.isNumber()) {
            throw new ModelFormatException(key + " should be a number, got " + v);
        }
        return v.asDouble();
    }

    /** The {@code model_type} names {@link #writeConfig} writes. */
    public static final List<String> MODEL_TYPES = List.of("llama", "mistral", "qwen2", "qwen3");

    /**
     * Writes {@code dir/config.json} for {@code cfg} as transformers writes it for {@code modelType}
     * (llama, mistral, qwen2 or qwen3): every field {@link #config(Path)} reads, so the folder loads
     * back as {@code cfg}. Llama 3 RoPE scaling is written as Llama 3.2's published numbers, the only
     * scaling generated models carry.
     */
    public static void writeConfig(Path dir, ModelConfig cfg, String modelType, DType dtype) throws IOException {
        Architecture arch = switch (modelType) {
            case "llama", "mistral" -> Architecture.LLAMA;
            case "qwen2" -> Architecture.QWEN2;
            case "qwen3" -> Architecture.QWEN3;
            default -> throw new ModelFormatException("model_type '" + modelType + "' is not supported (supported: "
                    + String.join(", ", MODEL_TYPES) + ")");
        };
        if (arch != cfg.architecture()) {
            throw new ModelFormatException("model_type " + modelType + " does not fit a " + cfg.architecture() + " model");
        }
        ObjectNode c = new ObjectMapper().createObjectNode();
        c.putArray("architectures").add(switch (modelType) {
            case "llama" -> "LlamaForCausalLM";
            case "mistral" -> "MistralForCausalLM";
            case "qwen2" -> "Qwen2ForCausalLM";
            default -> "Qwen3ForCausalLM";
        });
        c.put("model_type", modelType);
        c.put("hidden_size", cfg.dim());
        c.put("intermediate_size", cfg.hiddenDim());
        c.put("num_hidden_layers", cfg.nLayers());
        c.put("num_attention_heads", cfg.nHeads());
        c.put("num_key_value_heads", cfg.nKvHeads());
        c.put("head_dim", cfg.headSize());
        c.put("vocab_size", cfg.vocabSize());
        c.put("max_position_embeddings", cfg.seqLen());
        // the float's shortest decimal, so that 1e-6f reads back as the same float
        c.put("rms_norm_eps", Double.parseDouble(Float.toString(cfg.rmsEps())));
        c.put("rope_theta", Double.parseDouble(Float.toString(cfg.ropeTheta())));
        c.put("tie_word_embeddings", cfg.sharedClassifier());
        c.put("hidden_act", "silu");
        c.put("torch_dtype", switch (dtype) {
            case F32 -> "float32";
            case F16 -> "float16";
            case BF16 -> "bfloat16";
            default -> throw new ModelFormatException("safetensors holds f32, f16 or bf16, not " + dtype);
        });
        if (cfg.ropeScaling() != null) {
            if (!cfg.ropeScaling().equals(RopeScaling.llama32(cfg.headSize(), cfg.ropeTheta()))) {
                throw new ModelFormatException("only Llama 3.2's RoPE scaling can be written to " + CONFIG);
            }
            c.putObject("rope_scaling").put("rope_type", "llama3").put("factor", 32.0).put("low_freq_factor", 1.0)
                    .put("high_freq_factor", 4.0).put("original_max_position_embeddings", 8192);
        }
        Files.writeString(dir.resolve(CONFIG), c.toPrettyString());
    }

    /**
     * A safetensors writer holding every tensor of {@code cfg} under its Hugging Face name, in
     * {@code dtype} (vectors too, as transformers saves them). {@code ggufRows} gives each tensor's rows
     * in GGUF's layout; llama Q/K rows are put back into Hugging Face's order, so the folder loads as
     * the GGUF file made from the same rows.
     */
    public static SafetensorsWriter writer(ModelConfig cfg, DType dtype,
                                           Function<LlamaTensors.Slot, RowSource> ggufRows) {
        SafetensorsWriter.requireType(dtype);
        SafetensorsWriter w = new SafetensorsWriter();
        for (LlamaTensors.Slot slot : LlamaTensors.ggufOrder(cfg)) {
            if (slot.role() == LlamaTensors.Role.ROPE_FREQS) {
                continue; // config.json's rope_scaling stands for it
            }
            RowSource rows = ggufRows.apply(slot);
            if (slot.role().isVector()) {
                w.addVector(hfName(slot), dtype, slot.cols(), rows);
                continue;
            }
            boolean permute = cfg.architecture() == Architecture.LLAMA
                    && (slot.role() == LlamaTensors.Role.WQ || slot.role() == LlamaTensors.Role.WK);
            int headRows = slot.rows() / (slot.role() == LlamaTensors.Role.WQ ? cfg.nHeads() : cfg.nKvHeads());
            w.addMatrix(hfName(slot), dtype, slot.rows(), slot.cols(),
                    permute ? (row, dst) -> rows.fill(ggufRow(row, headRows), dst) : rows);
        }
        return w;
    }

    /** The inverse of {@link #permuteRows}: Hugging Face row {@code j * half + i} of a head is GGUF row {@code 2 * i + j}. */
    static int ggufRow(int hfRow, int headRows) {
        int half = headRows / 2;
        int inHead = hfRow % headRows;
        return hfRow - inHead + 2 * (inHead % half) + inHead / half;
    }

    /** The Hugging Face name of a slot's tensor, e.g. {@code model.layers.3.self_attn.q_proj.weight}. */
    public static String hfName(LlamaTensors.Slot slot) {
        String l = "model.layers." + slot.layer() + ".";
        return switch (slot.role()) {
            case TOKEN_EMBD -> "model.embed_tokens.weight";
            case OUTPUT_NORM -> "model.norm.weight";
            case OUTPUT -> "lm_head.weight";
            case ATTN_NORM -> l + "input_layernorm.weight";
            case FFN_NORM -> l + "post_attention_layernorm.weight";
            case WQ -> l + "self_attn.q_proj.weight";
            case WK -> l + "self_attn.k_proj.weight";
            case WV -> l + "self_attn.v_proj.weight";
            case WO -> l + "self_attn.o_proj.weight";
            case BQ -> l + "self_attn.q_proj.bias";
            case BK -> l + "self_attn.k_proj.bias";
            case BV -> l + "self_attn.v_proj.bias";
            case Q_NORM -> l + "self_attn.q_norm.weight";
            case K_NORM -> l + "self_attn.k_norm.weight";
            case W1 -> l + "mlp.gate_proj.weight";
            case W2 -> l + "mlp.down_proj.weight";
            case W3 -> l + "mlp.up_proj.weight";
            case ROPE_FREQS -> throw new IllegalArgumentException("rope_freqs has no Hugging Face tensor");
        };
    }

    /**
     * The weights of the folder {@code dir}; memory the permuted and converted tensors need comes from
     * {@code arena}, which also owns the mappings.
     */
    public static LlamaWeights weights(Path dir, Arena arena) {
        ModelConfig cfg = config(dir);
        Map<String, SafetensorsTensor> tensors = SafetensorsReader.readFolder(dir, arena);
        // a tied model may still ship lm_head.weight (a copy of the embedding): transformers ignores it, and so do we
        Set<String> used = new HashSet<>();
        for (LlamaTensors.Slot slot : LlamaTensors.ggufOrder(cfg)) {
            if (slot.role() != LlamaTensors.Role.ROPE_FREQS) {
                used.add(hfName(slot));
            }
        }
        for (SafetensorsTensor t : tensors.values()) {
            boolean ignorable = t.name().endsWith("rotary_emb.inv_freq")
                    || (cfg.sharedClassifier() && t.name().equals("lm_head.weight"));
            if (!used.contains(t.name()) && !ignorable) {
                throw new ModelFormatException(t.file() + ": tensor " + t.name() + " is not part of a "
                        + cfg.architecture() + " model of " + cfg.nLayers() + " layers (not supported)");
            }
        }
        return LlamaTensors.assemble(cfg, slot -> tensor(cfg, tensors, slot, arena, dir));
    }

    private static Tensor tensor(ModelConfig cfg, Map<String, SafetensorsTensor> tensors, LlamaTensors.Slot slot,
                                 Arena arena, Path dir) {
        String name = hfName(slot);
        SafetensorsTensor t = tensors.get(name);
        if (t == null) {
            throw new ModelFormatException(dir + ": missing tensor " + name);
        }
        List<Long> expected = slot.role().isVector() ? List.of((long) slot.cols())
                : List.of((long) slot.rows(), (long) slot.cols());
        if (!t.shape().equals(expected)) {
            throw new ModelFormatException(t.file() + ": tensor " + name + ": shape " + t.shape()
                    + " does not match the expected " + expected + " from " + CONFIG);
        }
        try {
            if (slot.role().isVector()) {
                return new Tensor(name, DType.F32, 1, slot.cols(), toF32(t, arena));
            }
            Tensor view = new Tensor(name, t.type(), slot.rows(), slot.cols(), t.data());
            boolean permute = cfg.architecture() == Architecture.LLAMA
                    && (slot.role() == LlamaTensors.Role.WQ || slot.role() == LlamaTensors.Role.WK);
            if (!permute) {
                return view;
            }
            int heads = slot.role() == LlamaTensors.Role.WQ ? cfg.nHeads() : cfg.nKvHeads();
            return new Tensor(name, t.type(), slot.rows(), slot.cols(), permuteRows(view, heads, arena));
        } catch (ModelFormatException e) {
            throw new ModelFormatException(t.file() + ": " + e.getMessage(), e);
        }
    }

    /**
     * llama.cpp's converter permutation of a Q or K matrix: within each head, row {@code j * half + i}
     * (Hugging Face, halves rotated together) moves to row {@code 2 * i + j} (GGUF llama, adjacent pairs).
     */
    static MemorySegment permuteRows(Tensor t, int heads, Arena arena) {
        int headRows = t.rows() / heads;
        int half = headRows / 2;
        long rowBytes = t.rowBytes();
        MemorySegment out = arena.allocate(t.data().byteSize(), 64);
        for (int h = 0; h < heads; h++) {
            for (int i = 0; i < half; i++) {
                for (int j = 0; j < 2; j++) {
                    long from = (long) h * headRows + (long) j * half + i;
                    long to = (long) h * headRows + 2L * i + j;
                    MemorySegment.copy(t.data(), from * rowBytes, out, to * rowBytes, rowBytes);
                }
            }
        }
        return out;
    }

    /** A vector in F32 (exact for F16 and BF16), as GGUF keeps norms and biases. */
    private static MemorySegment toF32(SafetensorsTensor t, Arena arena) {
        int n = (int) t.elements();
        Tensor src = new Tensor(t.name(), t.type(), 1, n, t.data());
        MemorySegment out = arena.allocate(4L * n, 64);
        for (int i = 0; i < n; i++) {
            out.set(Tensor.F32_LE, 4L * i, src.get(0, i));
        }
        return out;
    }
}
