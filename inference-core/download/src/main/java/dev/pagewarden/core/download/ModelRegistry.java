package dev.pagewarden.core.download;

import java.net.URI;
import java.util.Collection;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * The named models {@code download} knows. Pinned SHA-256 values are only those the project has
 * actually computed: the stories260K pair from the copies in {@code shared/models} (which came from
 * karpathy/tinyllamas). Everything else relies on the hash the Hub reports, or on nothing at all
 * (then the caller must allow an unverified download explicitly).
 */
public final class ModelRegistry {
    private static final String TINYLLAMAS = "karpathy/tinyllamas";
    /** llama2.c's 32000-token Llama 2 vocabulary; it lives in the GitHub repository, not on the Hub. */
    private static final RemoteFile LLAMA2_TOKENIZER = new RemoteFile("tokenizer.bin",
            new RemoteFile.Url(URI.create("https://raw.githubusercontent.com/karpathy/llama2.c/master/tokenizer.bin")), null);

    private static final ModelRegistry DEFAULT = new ModelRegistry(List.of(
            new ModelSpec("stories260K", "TinyStories 260K parameters, 512-token vocabulary (1 MB)",
                    new RemoteFile("stories260K.bin", new RemoteFile.HuggingFace(TINYLLAMAS, "main", "stories260K/stories260K.bin"),
                            "b0a507e7ad0f626624f17112325e66691f9076d622e1d3274d103d00299f2696"),
                    new RemoteFile("tok512.bin", new RemoteFile.HuggingFace(TINYLLAMAS, "main", "stories260K/tok512.bin"),
                            "037cb335abb25d1fa9e8ecae30ed2a3a8ace9302862ebcdc05d51a6bbb10c312")),
            tinyStories("stories15M", "TinyStories 15M parameters (60 MB)"),
            tinyStories("stories42M", "TinyStories 42M parameters (167 MB)"),
            tinyStories("stories110M", "TinyStories 110M parameters (438 MB)")));

    private final Map<String, ModelSpec> models = new LinkedHashMap<>();

    public ModelRegistry(Collection<ModelSpec> specs) {
        for (ModelSpec s : specs) {
            if (models.put(s.name(), s) != null) {
                throw new IllegalArgumentException("model '" + s.name() + "' listed twice");
            }
        }
    }

    public static ModelRegistry defaults() {
        return DEFAULT;
    }

    private static ModelSpec tinyStories(String name, String description) {
        return new ModelSpec(name, description,
                new RemoteFile(name + ".bin", new RemoteFile.HuggingFace(TINYLLAMAS, "main", name + ".bin"), null),
                LLAMA2_TOKENIZER);
    }

    /** The model of that name; an unknown name is an IllegalArgumentException listing the known ones. */
    public ModelSpec get(String name) {
        ModelSpec s = models.get(name);
        if (s == null) {
            throw new IllegalArgumentException("unknown model '" + name + "'; known models: " + String.join(", ", models.keySet()));
        }
        return s;
    }

    public Collection<ModelSpec> all() {
        return List.copyOf(models.values());
    }
}
