package dev.pagewarden.core.model;

/**
 * The RoPE angles of a model, per position and frequency pair: {@code cos[pos * half + i]} and
 * {@code sin[pos * half + i]} for {@code half = headSize / 2}. Computed in double with {@code StrictMath}
 * and rounded to float, so every backend that takes its tables from here rotates by the same bits
 * (RoPE scaling included: pair i's frequency is divided by its factor).
 */
public record RopeTables(float[] cos, float[] sin) {

    public static RopeTables of(ModelConfig cfg) {
        int half = cfg.headSize() / 2;
        float[] cos = new float[cfg.seqLen() * half];
        float[] sin = new float[cfg.seqLen() * half];
        for (int pos = 0; pos < cfg.seqLen(); pos++) {
            for (int i = 0; i < half; i++) {
                double freq = 1.0 / StrictMath.pow(cfg.ropeTheta(), (2.0 * i) / cfg.headSize());
                if (cfg.ropeScaling() != null) {
                    freq /= cfg.ropeScaling().factor(i);
                }
                double angle = pos * freq;
                cos[pos * half + i] = (float) StrictMath.cos(angle);
                sin[pos * half + i] = (float) StrictMath.sin(angle);
            }
        }
        return new RopeTables(cos, sin);
    }
}
