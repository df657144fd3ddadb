package dev.pagewarden.core.model;

import java.util.Arrays;

/**
 * Per-frequency RoPE divisors, as llama.cpp's {@code rope_freqs.weight} holds them: pair i rotates by
 * {@code pos * theta^(-2i/headSize) / factors[i]}. Llama 3.1/3.2 derive them from four numbers of
 * {@code rope_scaling} ({@link #llama3}); the file then carries the divisors, not the numbers.
 */
public record RopeScaling(float[] factors) {

    public RopeScaling {
        factors = factors.clone();
        for (int i = 0; i < factors.length; i++) {
            if (!(factors[i] > 0f) || Float.isInfinite(factors[i])) {
                throw new ModelFormatException("rope frequency factor " + i + " = " + factors[i] + " is not a positive number");
            }
        }
    }

    @Override
    public float[] factors() {
        return factors.clone();
    }

    public float factor(int pair) {
        return factors[pair];
    }

    public int size() {
        return factors.length;
    }

    /**
     * Llama 3's scaling: wavelengths shorter than {@code originalContext / highFreqFactor} keep their
     * frequency, those longer than {@code originalContext / lowFreqFactor} are slowed by {@code factor},
     * and those between are interpolated smoothly.
     */
    public static RopeScaling llama3(double factor, double lowFreqFactor, double highFreqFactor, int originalContext,
                                     int headSize, double theta) {
        if (!(factor >= 1) || !(lowFreqFactor > 0) || !(highFreqFactor > lowFreqFactor) || originalContext < 1) {
            throw new ModelFormatException("llama3 rope scaling needs factor >= 1 and 0 < low_freq_factor < "
                    + "high_freq_factor and original context >= 1, got factor " + factor + ", low " + lowFreqFactor
                    + ", high " + highFreqFactor + ", original context " + originalContext);
        }
        double lowFreqWavelen = originalContext / lowFreqFactor;
        double highFreqWavelen = originalContext / highFreqFactor;
        float[] f = new float[headSize / 2];
        for (int i = 0; i < f.length; i++) {
            double freq = Math.pow(theta, -2.0 * i / headSize);
            double wavelen = 2 * Math.PI / freq;
            if (wavelen < highFreqWavelen) {
                f[i] = 1f;
            } else if (wavelen > lowFreqWavelen) {
                f[i] = (float) factor;
            } else {
                double smooth = (originalContext / wavelen - lowFreqFactor) / (highFreqFactor - lowFreqFactor);
                f[i] = (float) (1 / ((1 - smooth) / factor + smooth));
            }
        }
        return new RopeScaling(f);
    }

    /** Llama 3.2's published values (factor 32, low 1, high 4, original context 8192). */
    public static RopeScaling llama32(int headSize, double theta) {
        return llama3(32, 1, 4, 8192, headSize, theta);
    }

    @Override
    public boolean equals(Object o) {
        return o instanceof RopeScaling r && Arrays.equals(factors, r.factors);
    }

    @Override
    public int hashCode() {
        return Arrays.hashCode(factors);
    }

    @Override
    public String toString() {
        return "RopeScaling" + Arrays.toString(factors);
    }
}
