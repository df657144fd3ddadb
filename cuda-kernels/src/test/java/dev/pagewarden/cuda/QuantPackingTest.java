package dev.pagewarden.cuda;

import dev.pagewarden.core.model.DType;
import dev.pagewarden.core.model.Tensor;
import dev.pagewarden.core.tensor.TestTensorsAccess;
import org.junit.jupiter.api.Test;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.util.List;
import java.util.Random;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * The tile layout of {@link QuantPacking} read through the Java emulation of {@code quant.cuh}'s
 * decoders: every fragment register of every (rowTile, kTile, lane) holds, in each half, the fp16
 * (nearest even) of the CPU's decode ({@link Tensor#rowInto}, itself checked against llama.cpp) of the
 * weight the PTX fragment map places there. The map is written out here on its own, from the PTX ISA
 * table, not taken from the packing code.
 */
class QuantPackingTest {
    static final List<DType> TYPES = List.of(DType.Q8_0, DType.Q4_0, DType.Q4_K, DType.Q5_K, DType.Q6_K);

    /** PTX ISA, mma.m16n8k16 .f16 A fragment: register r, half e of lane (g = lane / 4, q = lane % 4). */
    static int fragRow(int lane, int r) {
        return lane / 4 + (r == 1 || r == 3 ? 8 : 0);
    }

    static int fragCol(int lane, int r, int e) {
        return 2 * (lane % 4) + e + (r >= 2 ? 8 : 0);
    }

    /** Shapes per type: odd row counts (a padded last row tile), several blocks and super-blocks per row. */
    static List<int[]> shapes(DType type) {
        return type.blockSize() == 32
                ? List.of(new int[] {37, 96}, new int[] {16, 64}, new int[] {1, 32})
                : List.of(new int[] {37, 512}, new int[] {16, 256}, new int[] {3, 768});
    }

    /** Returns the number of values compared; fails at the first one that differs. */
    static long checkEveryFragment(Tensor t) {
        QuantPacking.Layout l = QuantPacking.layout(t.type(), t.rows(), t.cols());
        MemorySegment packed = QuantPacking.pack(t, Arena.ofAuto());
        assertThat(packed.byteSize()).isEqualTo(l.bytes())
                .isEqualTo(l.rowTiles() * QuantDecoderEmulation.stride(t.type(), t.cols() / 16));
        float[][] cpu = new float[t.rows()][t.cols()];
        for (int r = 0; r < t.rows(); r++) {
            t.rowInto(r, cpu[r], 0);
        }
        long compared = 0;
        for (int rt = 0; rt < l.rowTiles(); rt++) {
            for (int kt = 0; kt < l.kTiles(); kt++) {
                for (int lane = 0; lane < 32; lane++) {
                    int[] a = QuantDecoderEmulation.frag(t.type(), packed, t.cols() / 16, rt, kt, lane);
                    for (int r = 0; r < 4; r++) {
                        for (int e = 0; e < 2; e++) {
                            int row = 16 * rt + fragRow(lane, r);
                            int col = 16 * kt + fragCol(lane, r, e);
                            int got = (a[r] >>> (16 * e)) & 0xffff;
                            if (row >= t.rows()) {
                                assertThat(got & 0x7fff).as("%s padding row %d col %d", t.type(), row, col).isZero();
                                continue;
                            }
                            int want = Float.floatToFloat16(cpu[row][col]) & 0xffff;
                            if (got != want) {
                                throw new AssertionError(String.format("%s %dx%d: W[%d][%d] (tile %d,%d lane %d a[%d] half %d) is "
                                                + "fp16 %04x, the CPU's decode %s rounds to %04x", t.type(), t.rows(), t.cols(), row,
                                        col, rt, kt, lane, r, e, got, cpu[row][col], want));
                            }
                            compared++;
                        }
                    }
                }
            }
        }
        return compared;
    }

    @Test
    void everyFragmentOfRandomBlocksIsTheCpuDecodeRoundedToFp16() {
        for (DType type : TYPES) {
            for (int[] s : shapes(type)) {
                long n = checkEveryFragment(TestTensorsAccess.random(type, s[0], s[1], 31L * s[0] + s[1]));
                assertThat(n).isEqualTo((long) s[0] * s[1]);
            }
        }
    }

    @Test
    void everyFragmentOfQuantizedWeightsIsTheCpuDecodeRoundedToFp16() {
        for (DType type : TYPES) {
            for (int[] s : shapes(type)) {
                assertThat(checkEveryFragment(GpuChecks.quantizedSample(type, s[0], s[1], s[0] * 7L + s[1]))).isEqualTo((long) s[0] * s[1]);
            }
        }
    }

    @Test
    void packingRowTilesChunkByChunkGivesTheSameBytesAsTheWholeMatrix() {
        for (DType type : TYPES) {
            Tensor t = TestTensorsAccess.random(type, 53, type.blockSize() == 32 ? 64 : 512, 5);
            QuantPacking.Layout l = QuantPacking.layout(type, t.rows(), t.cols());
            MemorySegment whole = QuantPacking.pack(t, Arena.ofAuto());
            MemorySegment chunks = Arena.ofAuto().allocate(l.bytes());
            MemorySegment scratch = Arena.ofAuto().allocate(2 * l.stride());
            for (int from = 0; from < l.rowTiles(); from += 2) {
                int to = Math.min(l.rowTiles(), from + 2);
                scratch.fill((byte) 0x5a); // stale bytes of a reused staging buffer must not survive
                QuantPacking.pack(t, from, to, scratch);
                MemorySegment.copy(scratch, 0, chunks, from * l.stride(), (to - from) * l.stride());
            }
            assertThat(chunks.mismatch(whole)).as(type.name()).isEqualTo(-1L);
        }
    }

    @Test
    void layoutBytesPerWeightAndPartsFollowQuantCuh() {
        // GGUF bytes per weight: block bytes / block values
        assertThat(QuantPacking.layout(DType.Q8_0, 16, 4096).bytesPerWeight()).isEqualTo(34.0 / 32);
        assertThat(QuantPacking.layout(DType.Q4_0, 16, 4096).bytesPerWeight()).isEqualTo(18.0 / 32);
        assertThat(QuantPacking.layout(DType.Q6_K, 16, 4096).bytesPerWeight()).isEqualTo(210.0 / 256);
        // K4/K5: the 12 bytes of packed 6-bit scales and mins take 16 as bytes
        assertThat(QuantPacking.layout(DType.Q4_K, 16, 4096).bytesPerWeight()).isEqualTo((144.0 + 4) / 256);
        assertThat(QuantPacking.layout(DType.Q5_K, 16, 4096).bytesPerWeight()).isEqualTo((176.0 + 4) / 256);
        for (DType type : TYPES) {
            QuantPacking.Layout l = QuantPacking.layout(type, 40, 1024);
            assertThat(l.rowTiles()).isEqualTo(3);
            assertThat(l.stride()).isEqualTo(QuantDecoderEmulation.stride(type, 64));
            assertThat(l.offsets()[0]).isZero();
            for (long o : l.offsets()) {
                assertThat(o % 16).as("%s part offset %d: 16-byte aligned for every load width", type, o).isZero();
            }
        }
        assertThatThrownBy(() -> QuantPacking.layout(DType.F16, 16, 256)).hasMessageContaining("no GPU tile decoder for F16");
        assertThatThrownBy(() -> QuantPacking.layout(DType.Q4_K, 16, 96)).hasMessageContaining("multiple of 256");
        assertThat(QuantPacking.unpackKernel(DType.Q4_K)).isEqualTo("pw_unpack_tiles_q4_k");
    }

    /** What pw_unpack_tiles_* writes, made from the emulated fragments: [16 * rowTiles][cols] floats. */
    static float[] emulatedUnpack(Tensor t) {
        QuantPacking.Layout l = QuantPacking.layout(t.type(), t.rows(), t.cols());
        MemorySegment packed = QuantPacking.pack(t, Arena.ofAuto());
        float[] out = new float[16 * l.rowTiles() * t.cols()];
        for (int rt = 0; rt < l.rowTiles(); rt++) {
            for (int kt = 0; kt < l.kTiles(); kt++) {
                for (int lane = 0; lane < 32; lane++) {
                    int[] a = QuantDecoderEmulation.frag(t.type(), packed, l.kTiles(), rt, kt, lane);
                    for (int r = 0; r < 4; r++) {
                        for (int e = 0; e < 2; e++) {
                            int row = 16 * rt + fragRow(lane, r);
                            int col = 16 * kt + fragCol(lane, r, e);
                            out[row * t.cols() + col] = Float.float16ToFloat((short) (a[r] >>> (16 * e)));
                        }
                    }
                }
            }
        }
        return out;
    }

    @Test
    void theDeviceChecksComparisonPassesTheEmulatedDecodersAndNamesTheFirstWrongValue() {
        for (DType type : TYPES) {
            Tensor t = GpuChecks.quantizedSample(type, 37, 1024, type.ordinal());
            float[] decoded = emulatedUnpack(t);
            GpuChecks.QuantDecode ok = GpuChecks.compareDecoded(t, decoded);
            assertThat(ok.values()).isEqualTo(48L * 1024);
            assertThat(ok.mismatches()).as(type.name()).isZero();
            assertThat(ok.first()).isNull();
            // one value off by one fp16 step, one padding value not zero
            decoded[5 * 1024 + 700] = Math.nextUp(decoded[5 * 1024 + 700]);
            decoded[40 * 1024 + 3] = 1e-3f;
            GpuChecks.QuantDecode bad = GpuChecks.compareDecoded(t, decoded);
            assertThat(bad.mismatches()).isEqualTo(2);
            assertThat(bad.first()).startsWith("W[5][700]: device");
        }
        // the sample spans magnitudes down to fp16 subnormals (|w| < 2^-14), where rounding matters most
        Tensor q8 = GpuChecks.quantizedSample(DType.Q8_0, 37, 1024, 1);
        float[] row0 = new float[1024];
        q8.rowInto(0, row0, 0);
        float smallest = Float.MAX_VALUE;
        for (float v : row0) {
            smallest = v == 0 ? smallest : Math.min(smallest, Math.abs(v));
        }
        assertThat(smallest).isLessThan(0x1p-14f);
        assertThatThrownBy(() -> GpuChecks.compareDecoded(q8, new float[10])).hasMessageContaining("expected " + 48 * 1024);
    }
}
