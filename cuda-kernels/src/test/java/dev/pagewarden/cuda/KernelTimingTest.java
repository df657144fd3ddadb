package dev.pagewarden.cuda;

import org.junit.jupiter.api.Test;

import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;

/** The per-kernel table: sums per step size and kernel, per-step means, the largest first, shares of the step. */
class KernelTimingTest {

    @Test
    void kernelsAreSummedPerStepSizeAndListedLargestFirst() {
        KernelTiming t = new KernelTiming();
        t.add(1, List.of("pw_rmsnorm", "pw_matvec_f16", "pw_attention", "pw_matvec_f16"), new double[] {0.5, 2.0, 1.0, 3.0});
        t.add(1, List.of("pw_rmsnorm", "pw_matvec_f16", "pw_attention", "pw_matvec_f16"), new double[] {0.5, 2.0, 2.0, 3.0});
        t.add(32, List.of("pw_attention"), new double[] {4.0});
        assertThat(t.lines()).containsExactly(
                "gpu-kernel rows=1 steps=2 kernel=pw_matvec_f16 launches=2.0 ms=5.0000 share=71.4%",
                "gpu-kernel rows=1 steps=2 kernel=pw_attention launches=1.0 ms=1.5000 share=21.4%",
                "gpu-kernel rows=1 steps=2 kernel=pw_rmsnorm launches=1.0 ms=0.5000 share=7.1%",
                "gpu-kernel rows=32 steps=1 kernel=pw_attention launches=1.0 ms=4.0000 share=100.0%");
    }
}
