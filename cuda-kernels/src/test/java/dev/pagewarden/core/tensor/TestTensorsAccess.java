package dev.pagewarden.core.tensor;

import dev.pagewarden.core.model.DType;
import dev.pagewarden.core.model.Tensor;

/** Reaches inference-core's package-private random test tensors from this module's tests. */
public final class TestTensorsAccess {
    private TestTensorsAccess() {
    }

    /** Random blocks: every bit pattern of quants and sub-block scales, fp16 scales small and finite. */
    public static Tensor random(DType type, int rows, int cols, long seed) {
        return TestTensors.random(type, rows, cols, 0, seed);
    }
}
