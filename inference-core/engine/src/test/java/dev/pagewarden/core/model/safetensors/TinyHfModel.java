package dev.pagewarden.core.model.safetensors;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.pagewarden.core.model.write.ModelGenerator;
import dev.pagewarden.core.model.Architecture;
import dev.pagewarden.core.model.DType;
import dev.pagewarden.core.model.LlamaTensors;
import dev.pagewarden.core.model.ModelConfig;
import dev.pagewarden.core.model.RowSource;
import dev.pagewarden.core.model.gguf.GgufLlama;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.SplittableRandom;

/**
 * A random-weight Hugging Face checkpoint held in Hugging Face's layout and names, written as a model
 * folder (config.json plus safetensors, optionally sharded) and as its GGUF twin the way llama.cpp's
 * converter writes one (llama Q/K rows permuted, vectors in F32).
 */
final class TinyHfModel {
    final ModelConfig cfg;
    final String modelType;
    final String dtype;
    /** Hugging Face name to values (row-major, Hugging Face's row order) and shape. */
    final Map<String, float[]> values = new LinkedHashMap<>();
    final Map<String, List<Long>> shapes = new LinkedHashMap<>();

    private TinyHfModel(ModelConfig cfg, String modelType, String dtype) {
        this.cfg = cfg;
        this.modelType = modelType;
        this.dtype = dtype;
    }

    static TinyHfModel random(ModelConfig cfg, String modelType, String dtype, long seed) {
        TinyHfModel m = new TinyHfModel(cfg, modelType, dtype);
        SplittableRandom rnd = new SplittableRandom(seed);
        int d = cfg.dim();
        m.add("model.embed_tokens.weight", rnd, 1.0, 0, cfg.vocabSize(), d);
        for (int l = 0; l < cfg.nLayers(); l++) {
            String p = "model.layers." + l + ".";
            m.add(p + "input_layernorm.weight", rnd, 0.2, 1, d);
            m.add(p + "self_attn.q_proj.weight", rnd, 0.3, 0, cfg.qDim(), d);
            m.add(p + "self_attn.k_proj.weight", rnd, 0.3, 0, cfg.kvDim(), d);
            m.add(p + "self_attn.v_proj.weight", rnd, 0.3, 0, cfg.kvDim(), d);
            if (cfg.architecture() == Architecture.QWEN2) {
                m.add(p + "self_attn.q_proj.bias", rnd, 0.2, 0, cfg.qDim());
                m.add(p + "self_attn.k_proj.bias", rnd, 0.2, 0, cfg.kvDim());
                m.add(p + "self_attn.v_proj.bias", rnd, 0.2, 0, cfg.kvDim());
            }
            if (cfg.architecture() == Architecture.QWEN3) {
                m.add(p + "self_attn.q_norm.weight", rnd, 0.2, 1, cfg.headSize());
                m.add(p + "self_attn.k_norm.weight", rnd, 0.2, 1, cfg.headSize());
            }
            m.add(p + "self_attn.o_proj.weight", rnd, 0.3, 0, d, cfg.qDim());
            m.add(p + "post_attention_layernorm.weight", rnd, 0.2, 1, d);
            m.add(p + "mlp.gate_proj.weight", rnd, 0.3, 0, cfg.hiddenDim(), d);
            m.add(p + "mlp.up_proj.weight", rnd, 0.3, 0, cfg.hiddenDim(), d);
            m.add(p + "mlp.down_proj.weight", rnd, 0.3, 0, d, cfg.hiddenDim());
        }
        m.add("model.norm.weight", rnd, 0.2, 1, d);
        if (!cfg.sharedClassifier()) {
            m.add("lm_head.weight", rnd, 0.5, 0, cfg.vocabSize(), d);
        }
        return m;
    }

    /** Uniform values around {@code center}, rounded to the checkpoint's type so that both files hold the same numbers. */
    private void add(String name, SplittableRandom rnd, double spread, double center, int... shape) {
        int n = 1;
        List<Long> s = new ArrayList<>();
        for (int x : shape) {
            n *= x;
            s.add((long) x);
        }
        float[] v = new float[n];
        for (int i = 0; i < n; i++) {
            float x = (float) (center + rnd.nextDouble(-spread, spread));
            v[i] = switch (dtype) {
                case "F32" -> x;
                case "F16" -> Float.float16ToFloat(Float.floatToFloat16(x));
                case "BF16" -> Float.intBitsToFloat(Float.floatToRawIntBits(x) & 0xffff0000);
                default -> throw new IllegalArgumentException(dtype);
            };
        }
        values.put(name, v);
        shapes.put(name, s);
    }

    /** config.json as transformers writes it for this architecture. */
    void writeConfig(Path dir) throws IOException {
        ObjectNode c = new ObjectMapper().createObjectNode();
        c.putArray("architectures").add(switch (modelType) {
            case "llama" -> "LlamaForCausalLM";
            case "mistral" -> "MistralForCausalLM";
            case "qwen2" -> "Qwen2ForCausalLM";
            case "qwen3" -> "Qwen3ForCausalLM";
            default -> modelType;
        });
        c.put("model_type", modelType);
        c.put("hidden_size", cfg.dim());
        c.put("intermediate_size", cfg.hiddenDim());
        c.put("num_hidden_layers", cfg.nLayers());
        c.put("num_attention_heads", cfg.nHeads());
        c.put("num_key_value_heads", cfg.nKvHeads());
        if (cfg.headSize() * cfg.nHeads() != cfg.dim()) {
            c.put("head_dim", cfg.headSize());
        }
        c.put("vocab_size", cfg.vocabSize());
        c.put("max_position_embeddings", cfg.seqLen());
        c.put("rms_norm_eps", (double) cfg.rmsEps());
        c.put("rope_theta", (double) cfg.ropeTheta());
        c.put("tie_word_embeddings", cfg.sharedClassifier());
        c.put("torch_dtype", switch (dtype) {
            case "F32" -> "float32";
            case "F16" -> "float16";
            default -> "bfloat16";
        });
        c.put("hidden_act", "silu");
        if (cfg.ropeScaling() != null) {
            c.putObject("rope_scaling").put("rope_type", "llama3").put("factor", 8.0).put("low_freq_factor", 1.0)
                    .put("high_freq_factor", 4.0).put("original_max_position_embeddings", 32);
        }
        Files.writeString(dir.resolve("config.json"), c.toPrettyString());
    }

    /** The folder: config.json and one {@code model.safetensors}, or {@code shards} files with an index. */
    Path writeFolder(Path dir, int shards) throws IOException {
        Files.createDirectories(dir);
        writeConfig(dir);
        List<String> names = new ArrayList<>(values.keySet());
        if (shards == 1) {
            SafetensorsTestWriter w = new SafetensorsTestWriter();
            names.forEach(n -> w.add(n, dtype, shapes.get(n), values.get(n)));
            w.write(dir.resolve("model.safetensors"));
            return dir;
        }
        ObjectNode index = new ObjectMapper().createObjectNode();
        index.putObject("metadata").put("total_size", 0);
        ObjectNode map = index.putObject("weight_map");
        for (int s = 0; s < shards; s++) {
            String file = String.format("model-%05d-of-%05d.safetensors", s + 1, shards);
            SafetensorsTestWriter w = new SafetensorsTestWriter();
            for (int i = s; i < names.size(); i += shards) {
                String n = names.get(i);
                w.add(n, dtype, shapes.get(n), values.get(n));
                map.put(n, file);
            }
            w.write(dir.resolve(file));
        }
        Files.writeString(dir.resolve("model.safetensors.index.json"), index.toPrettyString());
        return dir;
    }

    /**
     * The GGUF twin. llama.cpp's converter ({@code LlamaModel.permute}) reshapes a llama Q or K matrix to
     * (heads, 2, rows / heads / 2, cols) and swaps axes 1 and 2: GGUF row {@code h*r + 2i + j} holds
     * Hugging Face row {@code h*r + j*(r/2) + i}. Qwen keeps Hugging Face's order.
     */
    Path writeGgufTwin(Path file) throws IOException {
        DType type = DType.valueOf(dtype);
        GgufLlama.writer(cfg, ModelGenerator.vocabulary(cfg.vocabSize()), type, "twin", slot -> rows(slot)).write(file, done -> { });
        return file;
    }

    private RowSource rows(LlamaTensors.Slot slot) {
        String name = hfName(slot);
        float[] v = values.get(name);
        if (v == null) {
            throw new IllegalStateException("no tensor " + name);
        }
        int cols = slot.cols();
        boolean permute = cfg.architecture() == Architecture.LLAMA
                && (slot.role() == LlamaTensors.Role.WQ || slot.role() == LlamaTensors.Role.WK);
        int heads = slot.role() == LlamaTensors.Role.WQ ? cfg.nHeads() : cfg.nKvHeads();
        return (row, dst) -> {
            int from = row;
            if (permute) {
                int r = slot.rows() / heads;
                int h = row / r;
                int i = (row % r) / 2;
                int j = row % 2;
                from = h * r + j * (r / 2) + i;
            }
            System.arraycopy(v, from * cols, dst, 0, cols);
        };
    }

    private static String hfName(LlamaTensors.Slot slot) {
        String p = "model.layers." + slot.layer() + ".";
        return switch (slot.role()) {
            case TOKEN_EMBD -> "model.embed_tokens.weight";
            case OUTPUT -> "lm_head.weight";
            case OUTPUT_NORM -> "model.norm.weight";
            case ATTN_NORM -> p + "input_layernorm.weight";
            case FFN_NORM -> p + "post_attention_layernorm.weight";
            case WQ -> p + "self_attn.q_proj.weight";
            case WK -> p + "self_attn.k_proj.weight";
            case WV -> p + "self_attn.v_proj.weight";
            case WO -> p + "self_attn.o_proj.weight";
            case BQ -> p + "self_attn.q_proj.bias";
            case BK -> p + "self_attn.k_proj.bias";
            case BV -> p + "self_attn.v_proj.bias";
            case Q_NORM -> p + "self_attn.q_norm.weight";
            case K_NORM -> p + "self_attn.k_norm.weight";
            case W1 -> p + "mlp.gate_proj.weight";
            case W2 -> p + "mlp.down_proj.weight";
            case W3 -> p + "mlp.up_proj.weight";
            case ROPE_FREQS -> throw new IllegalArgumentException("rope_freqs");
        };
    }
}
