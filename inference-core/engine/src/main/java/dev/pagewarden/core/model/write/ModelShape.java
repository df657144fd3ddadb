package dev.pagewarden.core.model.write;

import dev.pagewarden.core.model.Architecture;
import dev.pagewarden.core.model.ModelConfig;
import dev.pagewarden.core.model.ModelFormatException;
import dev.pagewarden.core.model.RopeScaling;

import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * A model shape for generated models: a named preset or an explicit
 * {@code dim=768,hidden=2048,layers=12,heads=12,kv_heads=4,vocab=32000,seq=1024[,shared=false][,head_dim=128]},
 * of the llama architecture until {@link #forArchitecture} makes it another.
 */
public record ModelShape(String name, ModelConfig config) {

    /** Presets; the stories* shapes are those of Karpathy's tinyllamas checkpoints. */
    public static final Map<String, ModelShape> NAMED = presets();

    private static final Set<String> REQUIRED_KEYS = Set.of("dim", "hidden", "layers", "heads", "vocab", "seq");
    private static final Set<String> OPTIONAL_KEYS = Set.of("kv_heads", "shared", "head_dim");
    /** The architectures {@code make-model --arch} writes. */
    public static final List<String> ARCHITECTURES = List.of("llama", "mistral", "qwen2", "qwen3");

    private static Map<String, ModelShape> presets() {
        Map<String, ModelShape> m = new LinkedHashMap<>();
        add(m, "stories260K", 64, 172, 5, 8, 4, 512, 512);
        add(m, "stories15M", 288, 768, 6, 6, 6, 32000, 256);
        add(m, "stories42M", 512, 1376, 8, 8, 8, 32000, 1024);
        add(m, "110M", 768, 2048, 12, 12, 12, 32000, 1024);
        // Llama 3.2 1B's shape (head size 64, tied classifier), with a 4096-token window
        add(m, "1B", 2048, 8192, 16, 32, 8, 128256, 4096);
        // Llama 3 8B's shape (head size 128, its own classifier), with an 8192-token window
        m.put("8B", new ModelShape("8B", config(4096, 14336, 32, 32, 8, 128256, 8192, false)));
        // small GQA shape with 32-aligned widths: every tensor quantises to Q8_0 (fast tests)
        add(m, "tiny-gqa", 128, 320, 3, 8, 2, 512, 256);
        return Map.copyOf(m);
    }

    private static void add(Map<String, ModelShape> m, String name, int dim, int hidden, int layers, int heads,
                            int kvHeads, int vocab, int seq) {
        m.put(name, new ModelShape(name, config(dim, hidden, layers, heads, kvHeads, vocab, seq, true)));
    }

    private static ModelConfig config(int dim, int hidden, int layers, int heads, int kvHeads, int vocab, int seq,
                                      boolean shared) {
        return new ModelConfig(dim, hidden, layers, heads, kvHeads, vocab, seq, 1e-5f, 10000f, shared);
    }

    /** A preset name (case-insensitive) or the explicit {@code key=value,...} form. */
    public static ModelShape parse(String text) {
        String s = text.trim();
        if (!s.contains("=")) {
            for (ModelShape shape : NAMED.values()) {
                if (shape.name.equalsIgnoreCase(s)) {
                    return shape;
                }
            }
            throw new ModelFormatException("unknown model shape '" + s + "'; known: "
                    + String.join(", ", NAMED.keySet().stream().sorted().toList())
                    + ", or dim=..,hidden=..,layers=..,heads=..,kv_heads=..,vocab=..,seq=..");
        }
        Map<String, String> kv = new HashMap<>();
        for (String part : s.split(",")) {
            int eq = part.indexOf('=');
            String key = eq < 0 ? part.trim() : part.substring(0, eq).trim();
            if (eq < 0 || !(REQUIRED_KEYS.contains(key) || OPTIONAL_KEYS.contains(key))) {
                throw new ModelFormatException("model shape '" + s + "': unknown or incomplete entry '" + part.trim()
                        + "' (keys: dim, hidden, layers, heads, kv_heads, vocab, seq, shared, head_dim)");
            }
            if (kv.put(key, part.substring(eq + 1).trim()) != null) {
                throw new ModelFormatException("model shape '" + s + "': " + key + " given twice");
            }
        }
        for (String key : REQUIRED_KEYS) {
            if (!kv.containsKey(key)) {
                throw new ModelFormatException("model shape '" + s + "': missing " + key);
            }
        }
        int heads = intValue(s, kv, "heads");
        boolean shared = switch (kv.getOrDefault("shared", "true")) {
            case "true" -> true;
            case "false" -> false;
            default -> throw new ModelFormatException("model shape '" + s + "': shared must be true or false, got '"
                    + kv.get("shared") + "'");
        };
        try {
            int kvHeads = kv.containsKey("kv_heads") ? intValue(s, kv, "kv_heads") : heads;
            ModelConfig c = kv.containsKey("head_dim")
                    ? new ModelConfig(intValue(s, kv, "dim"), intValue(s, kv, "hidden"), intValue(s, kv, "layers"),
                    heads, kvHeads, intValue(s, kv, "vocab"), intValue(s, kv, "seq"), 1e-5f, 10000f, shared,
                    Architecture.LLAMA, intValue(s, kv, "head_dim"), null)
                    : config(intValue(s, kv, "dim"), intValue(s, kv, "hidden"), intValue(s, kv, "layers"), heads,
                    kvHeads, intValue(s, kv, "vocab"), intValue(s, kv, "seq"), shared);
            return new ModelShape("custom", c);
        } catch (ModelFormatException e) {
            throw new ModelFormatException("model shape '" + s + "': " + e.getMessage(), e);
        }
    }

    private static int intValue(String shape, Map<String, String> kv, String key) {
        try {
            return Integer.parseInt(kv.get(key));
        } catch (NumberFormatException e) {
            throw new ModelFormatException("model shape '" + shape + "': " + key + " must be an integer, got '"
                    + kv.get(key) + "'");
        }
    }

    /**
     * This shape as {@code arch} (llama, mistral, qwen2 or qwen3) with that family's published RoPE base
     * and norm epsilon; {@code ropeScaling} "llama3" (llama and mistral only) adds Llama 3.2's frequency
     * divisors with its RoPE base 500000. Mistral is written as llama, as llama.cpp converts it.
     */
    public ModelShape forArchitecture(String arch, String ropeScaling) {
        if (!ARCHITECTURES.contains(arch)) {
            throw new ModelFormatException("unknown architecture '" + arch + "'; known: " + String.join(", ", ARCHITECTURES));
        }
        if (ropeScaling != null && !ropeScaling.equals("llama3")) {
            throw new ModelFormatException("unknown rope scaling '" + ropeScaling + "'; known: llama3");
        }
        if (ropeScaling != null && !(arch.equals("llama") || arch.equals("mistral"))) {
            throw new ModelFormatException("rope scaling llama3 applies to llama and mistral, not " + arch);
        }
        ModelConfig c = config;
        ModelConfig out = switch (arch) {
            case "llama" -> ropeScaling == null ? c
                    : c.with(c.rmsEps(), 500000f).with(Architecture.LLAMA, c.headSize(),
                    RopeScaling.llama32(c.headSize(), 500000f));
            case "mistral" -> ropeScaling == null ? c.with(c.rmsEps(), 1e6f)
                    : c.with(c.rmsEps(), 500000f).with(Architecture.LLAMA, c.headSize(),
                    RopeScaling.llama32(c.headSize(), 500000f));
            case "qwen2" -> c.with(1e-6f, 1e6f).with(Architecture.QWEN2, c.headSize(), null);
            default -> c.with(1e-6f, 1e6f).with(Architecture.QWEN3, c.headSize(), null);
        };
        return new ModelShape(name, out);
    }
}
