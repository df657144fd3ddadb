package dev.pagewarden.core.reference;

import dev.pagewarden.core.model.DType;
import dev.pagewarden.core.model.ModelFormatException;
import dev.pagewarden.core.model.RopeScaling;
import dev.pagewarden.core.model.Tensor;
import org.junit.jupiter.api.Test;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.util.Arrays;
import java.util.Random;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.assertj.core.api.Assertions.within;

/** The reference's architecture pieces against relations and formulas stated independently of it. */
class ReferenceArchitectureTest {

    /**
     * llama.cpp's converter permutes the Q/K rows of a llama checkpoint so that GGUF's adjacent-pair RoPE
     * equals transformers' rotate-half RoPE: row 2j + k of a head in GGUF is row k * half + j in Hugging
     * Face's order. So rotating halves, then permuting, equals permuting, then rotating pairs.
     */
    @Test
    void ropeOnHalvesIsRopeOnPairsUnderLlamaCppsPermutation() {
        int headSize = 16;
        double[] v = new Random(1).doubles(3 * headSize, -1, 1).toArray();
        double[] divisors = {1, 1, 1.5, 2, 4, 8, 16, 32};
        for (int pos : new int[] {0, 1, 7, 300}) {
            double[] halves = v.clone();
            ReferenceLlama.ropeHalves(halves, headSize, pos, 10000, divisors);
            double[] pairs = permute(v, headSize);
            ReferenceLlama.rope(pairs, headSize, pos, 10000, divisors);
            double[] expected = permute(halves, headSize);
            for (int i = 0; i < v.length; i++) {
                assertThat(pairs[i]).as("pos %d element %d", pos, i).isCloseTo(expected[i], within(1e-12));
            }
        }
    }

    private static double[] permute(double[] hf, int headSize) {
        int half = headSize / 2;
        double[] out = new double[hf.length];
        for (int h = 0; h < hf.length; h += headSize) {
            for (int j = 0; j < half; j++) {
                for (int k = 0; k < 2; k++) {
                    out[h + 2 * j + k] = hf[h + k * half + j];
                }
            }
        }
        return out;
    }

    /**
     * transformers' Llama 3 rule scales the inverse frequencies themselves: unchanged above the high
     * frequency cut, divided by the factor below the low one, and in between
     * (1 - smooth) * f / factor + smooth * f. The divisors must reproduce those frequencies.
     */
    @Test
    void llama3DivisorsReproduceTransformersScaledFrequencies() {
        int headSize = 64;
        double theta = 500000;
        double factor = 32, low = 1, high = 4;
        int original = 8192;
        RopeScaling s = RopeScaling.llama3(factor, low, high, original, headSize, theta);
        int slowed = 0;
        int between = 0;
        for (int i = 0; i < headSize / 2; i++) {
            double f = 1 / Math.pow(theta, (2.0 * i) / headSize);
            double wavelen = 2 * Math.PI / f;
            double expected;
            if (wavelen < original / high) {
                expected = f;
            } else if (wavelen > original / low) {
                expected = f / factor;
                slowed++;
            } else {
                double smooth = (original / wavelen - low) / (high - low);
                expected = (1 - smooth) * f / factor + smooth * f;
                between++;
            }
            assertThat(f / s.factor(i)).as("pair %d", i).isCloseTo(expected, within(expected * 1e-6));
        }
        assertThat(slowed).as("frequencies slowed by the full factor").isPositive();
        assertThat(between).as("frequencies interpolated").isPositive();
        assertThat(s.factor(0)).isEqualTo(1f);
        assertThatThrownBy(() -> RopeScaling.llama3(32, 4, 1, 8192, 64, theta))
                .isInstanceOf(ModelFormatException.class).hasMessageContaining("low_freq_factor");
    }

    /** Qwen 3's Q/K norm: each head on its own, x / sqrt(mean(x^2) + eps) * w. */
    @Test
    void headNormNormalisesEachHeadOnItsOwn() {
        double[] v = {3, 4, 0, 0, 1, 1, 1, 1};
        MemorySegment seg = Arena.ofAuto().allocate(16);
        float[] w = {1, 2, 0.5f, 1};
        for (int i = 0; i < 4; i++) {
            seg.setAtIndex(Tensor.F32_LE, i, w[i]);
        }
        ReferenceLlama.headNorm(v, new Tensor("q_norm", DType.F32, 1, 4, seg), 4, 0);
        double r0 = Math.sqrt((9 + 16) / 4.0);
        assertThat(v).containsExactly(new double[] {3 / r0, 2 * 4 / r0, 0, 0, 1, 2, 0.5, 1}, within(1e-12));
        assertThat(Arrays.stream(v).allMatch(Double::isFinite)).isTrue();
    }
}
