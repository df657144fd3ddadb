package dev.pagewarden.cuda;

import dev.pagewarden.core.model.ModelConfig;
import dev.pagewarden.core.model.RopeScaling;
import dev.pagewarden.core.model.RopeTables;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

/** The device's RoPE tables are the CPU backend's, Llama 3 scaling included, and follow Meta's published scaling rule. */
class GpuRopeTablesTest {
    static final int HEAD = 64;
    static final int SEQ = 300;
    static final double THETA = 500000;

    @Test
    void llama3ScaledTablesAreTheCpusBitForBitAndMetasFormula() {
        ModelConfig cfg = new ModelConfig(256, 512, 1, 4, 2, 100, SEQ, 1e-5f, (float) THETA, true)
                .with(dev.pagewarden.core.model.Architecture.LLAMA, HEAD, RopeScaling.llama32(HEAD, THETA));
        float[][] device = DeviceWeights.ropeTables(cfg);
        RopeTables cpu = RopeTables.of(cfg);
        for (int i = 0; i < cpu.cos().length; i++) {
            assertThat(Float.floatToRawIntBits(device[0][i])).as("cos %d", i).isEqualTo(Float.floatToRawIntBits(cpu.cos()[i]));
            assertThat(Float.floatToRawIntBits(device[1][i])).as("sin %d", i).isEqualTo(Float.floatToRawIntBits(cpu.sin()[i]));
        }
        int half = HEAD / 2;
        int scaled = 0;
        for (int pos = 0; pos < SEQ; pos++) {
            for (int i = 0; i < half; i++) {
                double angle = pos * metaScaledFrequency(Math.pow(THETA, -2.0 * i / HEAD));
                // the factor passes through a float, the angle through cos/sin rounded to float
                assertThat((double) device[0][pos * half + i]).as("cos pos %d pair %d", pos, i)
                        .isCloseTo(Math.cos(angle), org.assertj.core.data.Offset.offset(2e-6 + 1e-6 * pos));
                assertThat((double) device[1][pos * half + i]).as("sin pos %d pair %d", pos, i)
                        .isCloseTo(Math.sin(angle), org.assertj.core.data.Offset.offset(2e-6 + 1e-6 * pos));
            }
        }
        for (int i = 0; i < half; i++) {
            double plain = Math.pow(THETA, -2.0 * i / HEAD);
            scaled += metaScaledFrequency(plain) != plain ? 1 : 0;
        }
        assertThat(scaled).as("pairs the scaling changes").isBetween(1, half - 1);
    }

    /** Meta's apply_scaling (Llama 3.1 reference code) with Llama 3.2's numbers: factor 32, low 1, high 4, context 8192. */
    static double metaScaledFrequency(double freq) {
        double factor = 32;
        double low = 1;
        double high = 4;
        double context = 8192;
        double wavelen = 2 * Math.PI / freq;
        if (wavelen < context / high) {
            return freq;
        }
        if (wavelen > context / low) {
            return freq / factor;
        }
        double smooth = (context / wavelen - low) / (high - low);
        return (1 - smooth) * freq / factor + smooth * freq;
    }
}
