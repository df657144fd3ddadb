package dev.pagewarden.core.testing;

import dev.pagewarden.core.model.DType;
import dev.pagewarden.core.model.LlamaTensors;
import dev.pagewarden.core.model.LlamaWeights;
import dev.pagewarden.core.model.RowSource;
import dev.pagewarden.core.model.Tensor;

import java.util.function.Function;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.fail;

/**
 * Compares every element of loaded weights with the floats they were written from, allowing exactly
 * the error of the stored type as computed by float64 reference quantisers (written here, independent
 * of the production encoder).
 */
public final class WeightChecks {
    private WeightChecks() {
    }

    /** Checks every tensor of {@code w}; returns how many elements were compared. */
    public static long assertMatches(LlamaWeights w, Function<LlamaTensors.Slot, RowSource> expected) {
        long compared = 0;
        var slots = LlamaTensors.ggufOrder(w.config());
        assertThat(slots).isNotEmpty();
        for (LlamaTensors.Slot slot : slots) {
            Tensor t = LlamaTensors.tensor(w, slot);
            assertThat(t.rows()).as(slot.ggufName() + " rows").isEqualTo(slot.rows());
            assertThat(t.cols()).as(slot.ggufName() + " cols").isEqualTo(slot.cols());
            RowSource src = expected.apply(slot);
            float[] want = new float[slot.cols()];
            for (int r = 0; r < slot.rows(); r++) {
                src.fill(r, want);
                for (int c = 0; c < want.length; c++) {
                    float got = t.get(r, c);
                    double bound = switch (t.type()) {
                        case F32 -> 0;
                        case F16 -> f16Error(want[c]);
                        case Q8_0 -> q8Error(want, c);
                        case BF16 -> bf16Error(want[c]);
                        case Q4_0 -> q40Error(want, c);
                        case Q4_K -> kQuantError(want, c, 0.15);
                        case Q5_K -> kQuantError(want, c, 0.08);
                        case Q6_K -> kQuantError(want, c, 0.03);
                    };
                    boolean ok = t.type() == DType.F32
                            ? Float.floatToRawIntBits(got) == Float.floatToRawIntBits(want[c])
                            : Math.abs((double) got - want[c]) <= bound;
                    if (!ok) {
                        fail("%s (%s) [%d,%d]: got %s, wrote %s, allowed error %s", slot.ggufName(), t.type(), r, c,
                                got, want[c], bound);
                    }
                    compared++;
                }
            }
        }
        return compared;
    }

    /** Half the spacing of fp16 numbers around {@code x} (round to nearest), plus float slack. */
    static double f16Error(float x) {
        double a = Math.abs((double) x);
        double ulp = a < 0x1p-14 ? 0x1p-24 : Math.scalb(1.0, Math.getExponent(a) - 10);
        return ulp / 2 + 1e-12;
    }

    /**
     * Q8_0 reference in float64: d = amax/127, q = round(x/d); dequantised with the fp16-rounded scale the
     * file stores, the error is at most d/2 plus 127 times the scale's own fp16 rounding error.
     */
    static double q8Error(float[] row, int col) {
        double amax = blockAmax(row, col);
        double d = amax / 127;
        double dStored = Float.float16ToFloat(Float.floatToFloat16((float) d));
        return d / 2 + 127 * Math.abs(d - dStored) + 1e-6 * amax + 1e-12;
    }

    /** The largest magnitude in the 32-value block that holds column {@code col}. */
    private static double blockAmax(float[] row, int col) {
        int start = col / 32 * 32;
        double amax = 0;
        for (int i = start; i < start + 32; i++) {
            amax = Math.max(amax, Math.abs((double) row[i]));
        }
        return amax;
    }

    /** Half the spacing of bfloat16 numbers around {@code x} (8 significant bits), plus float slack. */
    static double bf16Error(float x) {
        double a = Math.abs((double) x);
        double ulp = a < 0x1p-126 ? 0x1p-133 : Math.scalb(1.0, Math.getExponent(a) - 7);
        return ulp / 2 + 1e-12;
    }

    /**
     * Q4_0 in float64: d = m / -8 with m the value of largest magnitude; the value -m maps to 7d
     * (the 16th level is missing), an error of |d|; everything else rounds to within |d|/2. Plus
     * 8 times the scale's fp16 rounding error.
     */
    static double q40Error(float[] row, int col) {
        double amax = blockAmax(row, col);
        double d = amax / 8;
        double dStored = Float.float16ToFloat(Float.floatToFloat16((float) d));
        return d + 8 * Math.abs(d - dStored) + 1e-6 * amax + 1e-12;
    }

    /**
     * K-quants: a bound of {@code fraction} of the 256-value super-block's largest magnitude (the
     * grid step of a sub-block is at most its range over 15, 31 or 63 levels; the scales' own 6- or
     * 8-bit quantisation adds a few percent of that; a sub-block's least-squares fit may clamp its
     * largest values by most of a step).
     */
    static double kQuantError(float[] row, int col, double fraction) {
        int start = col / 256 * 256;
        double amax = 0;
        for (int i = start; i < start + 256; i++) {
            amax = Math.max(amax, Math.abs((double) row[i]));
        }
        return fraction * amax + 1e-12;
    }
}
