package dev.pagewarden.cuda;

import dev.pagewarden.core.backend.BackendProvider;
import dev.pagewarden.core.backend.Backends;
import dev.pagewarden.command.Commands;
import org.junit.jupiter.api.Test;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/** The GPU provider is discovered, outranks the CPU, and on a machine without a GPU says why and lets auto pick the CPU. */
class BackendSelectionTest {

    static BackendProvider gpu() {
        return Backends.all().stream().filter(p -> p.name().equals("gpu")).findFirst().orElseThrow();
    }

    @Test
    void theGpuProviderIsDiscoveredAndRanksAboveTheCpu() {
        assertThat(Backends.all()).extracting(BackendProvider::name).containsExactly("gpu", "cpu");
        assertThat(gpu().priority()).isGreaterThan(0);
    }

    @Test
    void autoPicksTheGpuExactlyWhenItIsAvailable() {
        BackendProvider gpu = gpu();
        String picked = Backends.select("auto").name();
        System.out.println("auto selects " + picked + (gpu.available() ? "" : " (gpu: " + gpu.unavailableReason() + ")"));
        assertThat(picked).isEqualTo(gpu.available() ? "gpu" : "cpu");
    }

    @Test
    void withoutAGpuTheReasonIsClearAndAskingForGpuFails() {
        BackendProvider gpu = gpu();
        if (gpu.available()) {
            System.out.println("this machine has a usable GPU; the no-GPU path is not exercised here");
            return;
        }
        assertThat(gpu.unavailableReason()).isNotBlank()
                .satisfiesAnyOf(r -> assertThat(r).contains("libcuda"), r -> assertThat(r).contains("CUDA 13.0"),
                        r -> assertThat(r).contains("no GPU"), r -> assertThat(r).contains("compute capability"));
        assertThatThrownBy(() -> Backends.select("gpu")).isInstanceOf(IllegalStateException.class)
                .hasMessageContaining("backend 'gpu' is not available here").hasMessageContaining(gpu.unavailableReason());
    }

    @Test
    void gpuCheckWithoutAGpuExitsWithCodeThreeAndTheReasonAsJson() {
        if (gpu().available()) {
            System.out.println("this machine has a usable GPU; gpu-check runs in GpuParityTest instead");
            return;
        }
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        ByteArrayOutputStream err = new ByteArrayOutputStream();
        int rc = Commands.run("gpu", Commands.discovered(), new String[] {"gpu-check", "--model", "pom.xml"}, new PrintStream(out, true, StandardCharsets.UTF_8),
                new PrintStream(err, true, StandardCharsets.UTF_8));
        assertThat(rc).isEqualTo(3);
        assertThat(out.toString(StandardCharsets.UTF_8)).contains("\"gpu\":false").contains("\"reason\"");
        assertThat(err.toString(StandardCharsets.UTF_8)).contains("no usable GPU here");
    }
}
