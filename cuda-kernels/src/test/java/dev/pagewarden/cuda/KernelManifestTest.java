package dev.pagewarden.cuda;

import dev.pagewarden.core.model.DType;
import org.junit.jupiter.api.Test;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.TreeSet;
import java.util.stream.Stream;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The committed kernel binaries never drift from the CUDA sources: every source's SHA-256 equals the
 * manifest's (else: run build-kernels.sh and commit), every output is packed and matches its hash.
 */
class KernelManifestTest {
    static final Path SOURCES = Path.of("src/main/cuda");

    @Test
    void committedSourcesMatchTheManifest() throws IOException {
        KernelManifest m = KernelManifest.load();
        Set<String> onDisk = new TreeSet<>();
        try (Stream<Path> files = Files.list(SOURCES)) {
            files.map(p -> p.getFileName().toString()).filter(n -> n.endsWith(".cu") || n.endsWith(".cuh")).forEach(onDisk::add);
        }
        assertThat(onDisk).as("CUDA sources vs the manifest; run %s and commit its outputs", KernelManifest.REGENERATE)
                .isEqualTo(new TreeSet<>(m.sources().keySet()));
        for (String name : onDisk) {
            String actual = KernelManifest.sha256(Files.readAllBytes(SOURCES.resolve(name)));
            assertThat(actual).as("cuda-kernels/src/main/cuda/%s changed since the kernels were built: run %s and commit "
                    + "src/main/resources/dev/pagewarden/cuda", name, KernelManifest.REGENERATE).isEqualTo(m.sources().get(name));
        }
    }

    @Test
    void everyModuleHasACubinAndPtxThatLoadAsBytesAndMatchTheirHashes() {
        KernelManifest m = KernelManifest.load();
        assertThat(m.nvcc()).isEqualTo("13.0");
        for (String module : CudaDevice.MODULES) {
            byte[] cubin = m.verifiedOutput(module + "." + m.cubinArch() + ".cubin");
            assertThat(cubin).startsWith(0x7f, 'E', 'L', 'F');
            String ptx = new String(m.verifiedOutput(module + "." + m.ptxArch() + ".ptx"), StandardCharsets.US_ASCII);
            assertThat(ptx).contains(".version 9.0").contains(".target sm_80");
        }
        assertThat(m.outputs()).hasSize(2 * CudaDevice.MODULES.length);
    }

    @Test
    void everyKernelTheBackendLaunchesIsInTheBinaries() {
        KernelManifest m = KernelManifest.load();
        StringBuilder all = new StringBuilder();
        for (String module : CudaDevice.MODULES) {
            all.append(new String(m.verifiedOutput(module + "." + m.ptxArch() + ".ptx"), StandardCharsets.US_ASCII));
        }
        List<String> kernels = new ArrayList<>(List.of("pw_rmsnorm", "pw_rope", "pw_swiglu",
                "pw_add", "pw_softmax_rows", "pw_argmax_rows", "pw_matvec_bf16", "pw_rows1_bf16", "pw_kv_append",
                "pw_attention", "pw_page_crc32c", "pw_page_scrub"));
        for (DType t : WeightPacking.TYPES) {
            kernels.add(WeightPacking.matvecKernel(t));
            kernels.add(WeightPacking.rows1Kernel(t));
        }
        for (String k : kernels) {
            assertThat(all.toString()).as(k).contains(".entry " + k + "(");
        }
    }

    @Test
    void aTamperedManifestIsRefusedWithTheCommandToRegenerate() {
        assertThat(org.assertj.core.api.Assertions.catchThrowable(() -> KernelManifest.parse("nvcc 13.0\n")))
                .hasMessageContaining("build-kernels.sh");
        assertThat(org.assertj.core.api.Assertions.catchThrowable(() -> KernelManifest.parse("source abc x.cu\n")))
                .hasMessageContaining("malformed");
    }
}
