package dev.pagewarden.core.model;

import java.util.Arrays;

/**
 * The transformer variants the engine runs, named as GGUF's {@code general.architecture} names them.
 * They share the Llama block (RMSNorm, grouped-query attention, SwiGLU) and differ in small parts.
 * Mistral has no entry of its own: llama.cpp converts Mistral checkpoints to {@code llama}.
 */
public enum Architecture {
    /** Llama 1/2/3 (and Mistral, TinyLlama): RoPE on adjacent pairs, as llama.cpp's GGUF stores Q and K. */
    LLAMA("llama"),
    /** Qwen 2 / 2.5: biases on the Q, K and V projections; RoPE on the two halves of a head (NEOX). */
    QWEN2("qwen2"),
    /** Qwen 3: RMSNorm over each Q and K head before RoPE; RoPE on halves (NEOX); no biases. */
    QWEN3("qwen3");

    private final String ggufName;

    Architecture(String ggufName) {
        this.ggufName = ggufName;
    }

    /** The {@code general.architecture} value, also the prefix of the hyper-parameter keys. */
    public String ggufName() {
        return ggufName;
    }

    /** Q, K and V projections carry a bias. */
    public boolean qkvBias() {
        return this == QWEN2;
    }

    /** Q and K are RMS-normalised per head (weights of head size) before RoPE. */
    public boolean qkNorm() {
        return this == QWEN3;
    }

    /**
     * RoPE rotates (v[i], v[i + half]) instead of adjacent pairs: llama.cpp's NEOX rope type, which
     * is how the Qwen GGUFs keep the Hugging Face layout of Q and K.
     */
    public boolean neoxRope() {
        return this == QWEN2 || this == QWEN3;
    }

    /** The architecture named {@code name} in a file; an unknown one is refused by name. */
    public static Architecture fromGguf(String name) {
        for (Architecture a : values()) {
            if (a.ggufName.equals(name)) {
                return a;
            }
        }
        throw new ModelFormatException("general.architecture is '" + name + "'; supported: "
                + String.join(", ", Arrays.stream(values()).map(Architecture::ggufName).toList())
                + " (Mistral models declare llama)");
    }

    @Override
    public String toString() {
        return ggufName;
    }
}
