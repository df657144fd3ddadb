package dev.pagewarden.cuda;

import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

class CudaRequirementsTest {
    @Test
    void anOlderDriverIsRefusedWithTheCuda13Message() {
        assertThat(CudaRequirements.unmet(12080, 1, 9, 0))
                .contains("CUDA 12.8").contains("PTX built with CUDA 13.0 needs a driver for CUDA 13.0 or newer");
    }

    @Test
    void noDeviceOrAnOldDeviceIsRefused() {
        assertThat(CudaRequirements.unmet(13000, 0, 0, 0)).contains("no GPU");
        assertThat(CudaRequirements.unmet(13000, 1, 7, 5)).contains("7.5").contains("8.0");
    }

    @Test
    void aHopperOrAmpereWithACuda13DriverIsFine() {
        assertThat(CudaRequirements.unmet(13000, 1, 9, 0)).isNull();
        assertThat(CudaRequirements.unmet(13020, 2, 8, 6)).isNull();
        assertThat(CudaRequirements.cubinFits(9, 0)).isTrue();
        assertThat(CudaRequirements.cubinFits(8, 6)).isFalse();
        assertThat(CudaRequirements.cubinFits(10, 0)).isFalse();
    }
}
