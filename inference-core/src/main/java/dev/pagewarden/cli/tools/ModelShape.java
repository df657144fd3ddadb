package dev.pagewarden.cli.tools;

import dev.pagewarden.core.model.ModelConfig;
import dev.pagewarden.core.model.ModelFormatException;

import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Set;

/**
 * A model shape for generated models: a named preset or an explicit
 * {@code dim=768,hidden=2048,layers=12,heads=12,kv_heads=4,vocab=32000,seq=1024[,shared=false]}.
 */
public record ModelShape(String name, ModelConfig config) {

    /** Presets; the stories* shapes are those of Karpathy's tinyllamas checkpoints. */
    public static final Map<String, ModelShape> NAMED = presets();

    private static final Set<String> REQUIRED_KEYS = Set.of("dim", "hidden", "layers", "heads", "vocab", "seq");
    private static final Set<String> OPTIONAL_KEYS = Set.of("kv_heads", "shared");

    private static Map<String, ModelShape> presets() {
        Map<String, ModelShape> m = new LinkedHashMap<>();
        add(m, "stories260K", 64, 172, 5, 8, 4, 512, 512);
        add(m, "stories15M", 288, 768, 6, 6, 6, 32000, 256);
        add(m, "stories42M", 512, 1376, 8, 8, 8, 32000, 1024);
        add(m, "110M", 768, 2048, 12, 12, 12, 32000, 1024);
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
                        + "' (keys: dim, hidden, layers, heads, kv_heads, vocab, seq, shared)");
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
            return new ModelShape("custom", config(intValue(s, kv, "dim"), intValue(s, kv, "hidden"),
                    intValue(s, kv, "layers"), heads, kv.containsKey("kv_heads") ? intValue(s, kv, "kv_heads") : heads,
                    intValue(s, kv, "vocab"), intValue(s, kv, "seq"), shared));
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
}
