package dev.pagewarden.core.model.gguf;

import dev.pagewarden.core.model.DType;
import dev.pagewarden.core.model.ReferenceDequant;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

import java.lang.foreign.MemorySegment;
import java.math.BigDecimal;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.SplittableRandom;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The GGUF writer's quantisers: what they write, decoded by the independent float64 decoder, is
 * close to what they were given. Bounds: the worst element within a fraction of its block's largest
 * magnitude, and the RMS error within a fraction of the data's RMS (uniform data in [-1, 1]: a
 * plain uniform grid of 2^bits levels over the range gives 1/(2^bits * sqrt 3) of the RMS).
 */
class QuantizeRoundTripTest {

    static float[] data(String kind, int n, long seed) {
        SplittableRandom rnd = new SplittableRandom(seed);
        float[] x = new float[n];
        for (int i = 0; i < n; i++) {
            x[i] = switch (kind) {
                case "uniform" -> (float) rnd.nextDouble(-1, 1);
                case "positive" -> (float) rnd.nextDouble(0.5, 1.5);
                // normal with an outlier now and then, like real weights
                case "heavy" -> (float) (gaussian(rnd) * (rnd.nextInt(64) == 0 ? 8 : 1) * 0.02);
                default -> throw new IllegalArgumentException(kind);
            };
        }
        return x;
    }

    private static double gaussian(SplittableRandom rnd) {
        return Math.sqrt(-2 * Math.log(1 - rnd.nextDouble())) * Math.cos(2 * Math.PI * rnd.nextDouble());
    }

    static double[] roundTrip(DType type, float[] x) {
        ByteBuffer buf = ByteBuffer.allocate((int) type.bytesFor(x.length)).order(ByteOrder.LITTLE_ENDIAN);
        RowEncoder.encode(type, x, buf);
        assertThat(buf.position()).as("bytes written").isEqualTo(buf.capacity());
        return ReferenceDequant.row(type, MemorySegment.ofArray(buf.array()), 0, x.length);
    }

    @CsvSource({
            // type, data, worst element / block max, RMS error / data RMS. A sub-block's least-squares
            // fit may clamp its largest values by most of a step (ggml's K-quant search trades that
            // for a smaller total error); heavy-tailed data has most values far below the block max.
            "Q4_0, uniform, 0.126, 0.075", "Q4_0, heavy, 0.126, 0.16", "Q4_0, positive, 0.126, 0.055",
            "Q4_K, uniform, 0.15, 0.06", "Q4_K, heavy, 0.15, 0.11", "Q4_K, positive, 0.15, 0.03",
            "Q5_K, uniform, 0.08, 0.03", "Q5_K, heavy, 0.08, 0.055", "Q5_K, positive, 0.08, 0.015",
            "Q6_K, uniform, 0.02, 0.016", "Q6_K, heavy, 0.025, 0.032", "Q6_K, positive, 0.02, 0.0125",
            "Q8_0, uniform, 0.0045, 0.0045", "Q8_0, heavy, 0.0045, 0.011"})
    @ParameterizedTest(name = "{0} {1}")
    void decodedValuesAreCloseToTheInput(DType type, String kind, double worstFraction, double rmsFraction) {
        int n = 256 * 64;
        float[] x = data(kind, n, type.ordinal() * 100L + kind.length());
        double[] y = roundTrip(type, x);
        double errSq = 0, xSq = 0;
        int block = type.blockSize();
        for (int b = 0; b < n; b += block) {
            double amax = 0;
            for (int i = b; i < b + block; i++) {
                amax = Math.max(amax, Math.abs(x[i]));
            }
            for (int i = b; i < b + block; i++) {
                double err = Math.abs(y[i] - x[i]);
                assertThat(err).as("%s %s element %d: %s decoded as %s (block max %s)", type, kind, i, x[i], y[i], amax)
                        .isLessThanOrEqualTo(worstFraction * amax);
                errSq += err * err;
                xSq += (double) x[i] * x[i];
            }
        }
        double rel = Math.sqrt(errSq / xSq);
        System.out.printf("%s %s: RMS error %.4f of the data's RMS%n", type, kind, rel);
        assertThat(rel).as("%s %s RMS error relative to RMS", type, kind).isLessThan(rmsFraction);
    }

    @Test
    void zerosAndConstantsSurvive() {
        for (DType type : new DType[] {DType.Q4_0, DType.Q4_K, DType.Q5_K, DType.Q6_K, DType.BF16}) {
            for (double v : roundTrip(type, new float[256])) {
                assertThat(Math.abs(v)).as(type + " zeros").isEqualTo(0.0); // ggml's Q4_0 scale for zeros is -0
            }
            float[] c = new float[256];
            java.util.Arrays.fill(c, -0.75f);
            for (double v : roundTrip(type, c)) {
                assertThat(v).as(type + " constant").isCloseTo(-0.75, org.assertj.core.data.Offset.offset(0.75 * 0.01));
            }
        }
    }

    /** bfloat16 keeps the upper half of an fp32, rounded to nearest with ties to even (checked in exact decimal). */
    @Test
    void bf16RoundsToNearestEven() {
        SplittableRandom rnd = new SplittableRandom(9);
        float[] x = new float[4096];
        for (int i = 0; i < x.length; i++) {
            x[i] = Float.intBitsToFloat(rnd.nextInt());
            if (Float.isNaN(x[i]) || Float.isInfinite(x[i]) || Math.abs(x[i]) > 0x1p127f) {
                x[i] = 1.5f;
            }
        }
        x[0] = Float.intBitsToFloat(0x3f80_8000); // exactly halfway, even below: down
        x[1] = Float.intBitsToFloat(0x3f81_8000); // exactly halfway, odd below: up
        double[] y = roundTrip(DType.BF16, x);
        assertThat(y[0]).isEqualTo(1.0);
        assertThat(y[1]).isEqualTo(Float.intBitsToFloat(0x3f82_0000));
        for (int i = 0; i < x.length; i++) {
            int bits = Float.floatToRawIntBits(x[i]);
            float down = Float.intBitsToFloat(bits & 0xffff_0000);
            float up = Float.intBitsToFloat((bits & 0xffff_0000) + 0x1_0000);
            BigDecimal v = new BigDecimal(x[i]);
            BigDecimal dDown = v.subtract(new BigDecimal(down)).abs();
            BigDecimal dUp = v.subtract(new BigDecimal(up)).abs();
            int cmp = dDown.compareTo(dUp);
            float want = cmp < 0 ? down : cmp > 0 ? up : ((bits >>> 16) & 1) == 0 ? down : up;
            assertThat(y[i]).as("bf16 of %s", x[i]).isEqualTo((double) want);
        }
        float[] nan = {Float.NaN};
        assertThat(roundTrip(DType.BF16, nan)[0]).isNaN();
    }

    @Test
    void q4_0UsesTheSignedExtremeAsMinusEightSteps() {
        // ggml's Q4_0 maps the value of largest magnitude to level 0 (-8 d), so it is exact
        float[] x = new float[32];
        for (int i = 0; i < 32; i++) {
            x[i] = (i - 16) / 32f;
        }
        x[5] = 0.9f; // the extreme: d = 0.9 / -8
        double[] y = roundTrip(DType.Q4_0, x);
        double d = Float.float16ToFloat(Float.floatToFloat16(0.9f / -8));
        assertThat(y[5]).isEqualTo(-8 * d);
    }
}
