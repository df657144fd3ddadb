package dev.pagewarden.core.reference;

import dev.pagewarden.core.model.LlamaWeights;
import dev.pagewarden.core.model.ModelConfig;

/** Reaches inference-core's package-private random test models from this module's tests. */
public final class TinyModelsAccess {
    private TinyModelsAccess() {
    }

    public static LlamaWeights random(ModelConfig c, long seed) {
        return TinyModels.random(c, seed);
    }
}
