package dev.pagewarden.cuda;

import dev.pagewarden.core.model.DType;
import dev.pagewarden.core.model.Tensor;
import dev.pagewarden.core.tensor.TestTensorsAccess;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.InputStream;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * quant.cuh itself, not a transcription: compiled for the host by nvcc (its device-only intrinsics
 * replaced by their one-operation host meaning) and run over matrices packed by {@link QuantPacking};
 * every fragment value must be the CPU's decode rounded to fp16. Needs nvcc (skipped, saying so,
 * without it); on a GPU the device check runs the same decoders in {@code pw_unpack_tiles_*}.
 */
class QuantDecodersOnTheHostTest {
    @TempDir
    Path dir;

    static boolean nvccPresent() {
        try {
            Process p = new ProcessBuilder("nvcc", "--version").redirectErrorStream(true).start();
            p.getInputStream().readAllBytes();
            return p.waitFor(60, TimeUnit.SECONDS) && p.exitValue() == 0;
        } catch (java.io.IOException e) {
            return false;
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return false;
        }
    }

    /** The input file of quant-host-check.cu: header, packed matrix, expected fp16 bits of the padded W. */
    static Path write(Path file, Tensor t) throws Exception {
        MemorySegment packed = QuantPacking.pack(t, Arena.ofAuto());
        int padded = (t.rows() + 15) / 16 * 16;
        ByteBuffer b = ByteBuffer.allocate(16 + (int) packed.byteSize() + 2 * padded * t.cols()).order(ByteOrder.LITTLE_ENDIAN);
        b.putInt(t.type().ordinal()).putInt(t.rows()).putInt(t.cols()).putInt((int) packed.byteSize());
        b.put(packed.toArray(ValueLayout.JAVA_BYTE));
        float[] row = new float[t.cols()];
        for (int r = 0; r < t.rows(); r++) {
            t.rowInto(r, row, 0);
            for (float v : row) {
                b.putShort(Float.floatToFloat16(v));
            }
        }
        Files.write(file, b.array()); // the padding rows' expected bits stay zero
        return file;
    }

    @Test
    void theCudaDecodersRunOnTheHostGiveTheCpuDecodeRoundedToFp16() throws Exception {
        if (!nvccPresent()) {
            System.out.println("SKIPPED QuantDecodersOnTheHostTest: no nvcc on this machine");
            Assumptions.abort("no nvcc");
        }
        assertThat(DType.Q8_0.ordinal()).isEqualTo(2); // the type codes quant-host-check.cu reads
        assertThat(DType.Q6_K.ordinal()).isEqualTo(7);
        Path src = dir.resolve("quant-host-check.cu");
        try (InputStream in = getClass().getResourceAsStream("quant-host-check.cu")) {
            Files.write(src, in.readAllBytes());
        }
        Path exe = dir.resolve("quant-host-check");
        run(List.of("nvcc", "-O2", "-std=c++17", "-I", Path.of("src/main/cuda").toAbsolutePath().toString(), "-o", exe.toString(),
                src.toString()));
        List<String> args = new ArrayList<>(List.of(exe.toString()));
        List<Long> sizes = new ArrayList<>();
        for (DType type : QuantPacking.TYPES) {
            int cols = type.blockSize() == 32 ? 96 : 768;
            for (Tensor t : List.of(TestTensorsAccess.random(type, 37, cols, 3), GpuChecks.quantizedSample(type, 37, 1024, 4))) {
                args.add(write(dir.resolve(type + "-" + sizes.size() + ".bin"), t).toString());
                sizes.add((long) (t.rows() + 15) / 16 * 16 * t.cols());
            }
        }
        String[] lines = run(args).strip().split("\n");
        assertThat(lines).hasSize(sizes.size());
        for (int i = 0; i < lines.length; i++) {
            String[] f = lines[i].strip().split(" ");
            assertThat(Long.parseLong(f[0])).as(args.get(i + 1)).isEqualTo(sizes.get(i));
            assertThat(Long.parseLong(f[1])).as("mismatches in %s", args.get(i + 1)).isZero();
        }
    }

    private static String run(List<String> command) throws Exception {
        Process p = new ProcessBuilder(command).redirectError(ProcessBuilder.Redirect.INHERIT).start();
        String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        assertThat(p.waitFor(300, TimeUnit.SECONDS)).as("%s finished", command.getFirst()).isTrue();
        assertThat(p.exitValue()).as("exit status of %s", command).isZero();
        return out;
    }
}
