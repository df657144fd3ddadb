package dev.pagewarden.core.tensor;

import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Determinism across JIT tiers and across the Vector API / fallback switch, checked in child JVMs:
 * the interpreter runs the Vector API's Java fallback code, C1 runs it compiled, C2 (this JVM,
 * after warm-up) runs the intrinsics; all must agree bit for bit.
 */
class KernelDigestTest {
    private static String vectorC2;
    private static String scalarC2;

    @BeforeAll
    static void warmUpAndDigestHere() {
        for (int i = 0; i < 3000; i++) {
            KernelDigest.digest(VectorKernels.INSTANCE, true);
            KernelDigest.digest(ScalarKernels.INSTANCE, false);
        }
        vectorC2 = KernelDigest.digest(VectorKernels.INSTANCE, true);
        scalarC2 = KernelDigest.digest(ScalarKernels.INSTANCE, false);
    }

    @Test
    void interpreterMatchesC2() throws Exception {
        assertThat(child("--add-modules", "jdk.incubator.vector", "-Xint")).isEqualTo(VectorKernels.INSTANCE.name() + " " + vectorC2);
    }

    @Test
    void c1OnlyMatchesC2() throws Exception {
        assertThat(child("--add-modules", "jdk.incubator.vector", "-XX:TieredStopAtLevel=1"))
                .isEqualTo(VectorKernels.INSTANCE.name() + " " + vectorC2);
    }

    @Test
    void withoutTheVectorModuleTheScalarFallbackRunsAndMatchesItsC2Result() throws Exception {
        // Would die with NoClassDefFoundError if any Vector API class were touched.
        assertThat(child("-Xint")).isEqualTo("scalar " + scalarC2);
        assertThat(child()).isEqualTo("scalar " + scalarC2);
    }

    @Test
    void forcedScalarPropertySelectsTheFallbackForMatMulAndOps() throws Exception {
        assertThat(child("--add-modules", "jdk.incubator.vector", "-Dpagewarden.kernels=scalar"))
                .isEqualTo("scalar " + scalarC2);
    }

    @Test
    void narrowerVectorsAreCorrectAndBatchInvariantToo() throws Exception {
        // 256-bit (AVX2-like, 8 lanes: the generic reduction) and 128-bit (4 lanes: scalar Q8_0 decode);
        // the Java kernels for every type (the native ones, which round activations to 8 bits, have NativeKernelsTest)
        assertThat(childArgs(List.of("--add-modules", "jdk.incubator.vector", "-XX:MaxVectorSize=32",
                "-Dpagewarden.kernels=vector"), "selfcheck")).isEqualTo("ok vector-256");
        assertThat(childArgs(List.of("--add-modules", "jdk.incubator.vector", "-XX:MaxVectorSize=16",
                "-Dpagewarden.kernels=vector"), "selfcheck")).isEqualTo("ok vector-128");
    }

    private static String child(String... flags) throws IOException, InterruptedException {
        return childArgs(List.of(flags));
    }

    private static String childArgs(List<String> flags, String... args) throws IOException, InterruptedException {
        List<String> cmd = new ArrayList<>();
        cmd.add(Path.of(System.getProperty("java.home"), "bin", "java").toString());
        cmd.addAll(flags);
        cmd.add("-cp");
        cmd.add(System.getProperty("java.class.path"));
        cmd.add(KernelDigest.class.getName());
        cmd.addAll(List.of(args));
        Process p = new ProcessBuilder(cmd).redirectErrorStream(false).start();
        byte[] out = p.getInputStream().readAllBytes();
        String err = new String(p.getErrorStream().readAllBytes(), StandardCharsets.UTF_8);
        assertThat(p.waitFor(180, TimeUnit.SECONDS)).isTrue();
        assertThat(p.exitValue()).as("child %s failed: %s", cmd, err).isZero();
        return new String(out, StandardCharsets.UTF_8).strip();
    }
}
