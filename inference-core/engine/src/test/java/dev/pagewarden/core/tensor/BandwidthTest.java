package dev.pagewarden.core.tensor;

import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

class BandwidthTest {

    @Test
    void measuresAPlausibleRateWithBothKernels() {
        // Only sanity: a small buffer (it may sit in cache), no timing bound.
        try (Parallel pool = new Parallel(2)) {
            double gbs = Bandwidth.readGBs(pool, 8L << 20, 2);
            assertThat(gbs).isFinite().isGreaterThan(0.01).isLessThan(100_000);
            double scalar;
            try (Bandwidth.Probe probe = new Bandwidth.Probe(3L << 20, ScalarKernels.INSTANCE)) {
                scalar = probe.pass(pool);
            }
            assertThat(scalar).isFinite().isGreaterThan(0);
        }
    }

    @Test
    void rejectsTooSmallBuffersAndZeroRepetitions() {
        try (Parallel pool = new Parallel(1)) {
            assertThatThrownBy(() -> Bandwidth.readGBs(pool, 1000, 3)).isInstanceOf(IllegalArgumentException.class);
            assertThatThrownBy(() -> Bandwidth.readGBs(pool, 1 << 20, 0)).isInstanceOf(IllegalArgumentException.class);
        }
    }

    @Test
    void readAllSumsEveryFloat() {
        java.lang.foreign.MemorySegment seg = java.lang.foreign.Arena.ofAuto().allocate(4L * 1000 + 28).asSlice(28);
        for (int i = 0; i < 1000; i++) {
            seg.set(dev.pagewarden.core.model.Tensor.F32_LE, 4L * i, 1f);
        }
        assertThat(VectorKernels.INSTANCE.readAll(seg, 0, 4000)).isEqualTo(1000f);
        assertThat(ScalarKernels.INSTANCE.readAll(seg, 0, 4000)).isEqualTo(1000f);
        assertThat(VectorKernels.INSTANCE.readAll(seg, 4, 4000 - 8)).isEqualTo(997f);
        assertThat(ScalarKernels.INSTANCE.readAll(seg, 4, 4000 - 8)).isEqualTo(997f);
    }
}
