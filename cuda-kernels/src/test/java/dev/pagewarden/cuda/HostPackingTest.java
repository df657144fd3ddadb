package dev.pagewarden.cuda;

import dev.pagewarden.core.backend.Backend;
import dev.pagewarden.core.backend.BackendOptions;
import dev.pagewarden.core.backend.Backends;
import dev.pagewarden.core.backend.SequenceStep;
import dev.pagewarden.core.kv.CacheScope;
import dev.pagewarden.core.kv.KvLayout;
import dev.pagewarden.core.kv.KvPool;
import dev.pagewarden.core.kv.PageRef;
import dev.pagewarden.core.kv.PrefixKeys;
import dev.pagewarden.core.kv.ReadCheck;
import dev.pagewarden.core.model.DType;
import dev.pagewarden.core.model.LlamaWeights;
import dev.pagewarden.core.model.ModelConfig;
import dev.pagewarden.core.model.Tensor;
import dev.pagewarden.core.model.load.LoadedModel;
import dev.pagewarden.core.tensor.TestTensorsAccess;
import org.junit.jupiter.api.Test;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Random;
import java.util.zip.CRC32C;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * What the host prepares for the kernels, checked against the CPU representation without a GPU:
 * the Q8_0 split, the step plan's byte layout and page addressing, the kernels' page-check rule
 * (mirrored in Java) against {@link KvPool#checkRead}, and the device CRC32C algorithm (chunk CRCs
 * combined in order) against {@link CRC32C}.
 */
class HostPackingTest {

    static Tensor randomQ8(Random rnd, int rows, int cols) {
        MemorySegment data = Arena.ofAuto().allocate((long) rows * cols / 32 * 34);
        for (long b = 0; b < (long) rows * cols / 32; b++) {
            data.set(Tensor.I16_LE, b * 34, Float.floatToFloat16((rnd.nextFloat() - 0.5f) * 0.05f));
            for (int j = 0; j < 32; j++) {
                data.set(ValueLayout.JAVA_BYTE, b * 34 + 2 + j, (byte) (rnd.nextInt(256) - 128));
            }
        }
        return new Tensor("w", DType.Q8_0, rows, cols, data);
    }

    @Test
    void q8SplitHoldsExactlyTheValuesOfTheGgufBlocks() {
        Random rnd = new Random(1);
        Tensor t = randomQ8(rnd, 7, 96);
        try (Arena arena = Arena.ofConfined()) {
            WeightPacking.Q8Split s = WeightPacking.splitQ8(t, arena);
            assertThat(s.quants().byteSize()).isEqualTo(7 * 96);
            assertThat(s.scales().byteSize()).isEqualTo(7 * 96 / 32 * 2);
            assertThat(s.quants().address() % 16).isZero();
            for (int r = 0; r < 7; r++) {
                for (int c = 0; c < 96; c++) {
                    assertThat(WeightPacking.q8Element(s, 96, r, c)).as("(%d,%d)", r, c).isEqualTo(t.get(r, c));
                }
            }
        }
        assertThatThrownBy(() -> WeightPacking.splitQ8(new Tensor("f", DType.F32, 1, 4, Arena.ofAuto().allocate(16)), Arena.ofAuto()))
                .hasMessageContaining("not Q8_0");
        assertThat(WeightPacking.matvecKernel(DType.F16)).isEqualTo("pw_matvec_f16");
        assertThat(WeightPacking.rows1Kernel(DType.Q8_0)).isEqualTo("pw_rows1_q8_0");
    }

    static final ModelConfig CFG = new ModelConfig(32, 64, 2, 4, 2, 50, 64, 1e-5f, 10000f, true);

    @Test
    void sectionOffsetsDependOnlyOnTheStepShapeSoACapturedGraphFindsThem() {
        KvLayout layout = KvLayout.of(CFG, 4);
        // the same shape (2 sequences, 4 rows, 1 logits row), page tables of 1 + 1 and of 3 + 2 entries
        StepPlan small = StepPlan.of(List.of(
                new SequenceStep(1, "t", new int[] {1, 2, 3}, 0, List.of(new PageRef(0, 1)), true),
                new SequenceStep(2, "t", new int[] {4}, 0, List.of(new PageRef(1, 1)), false)), layout, CFG);
        StepPlan large = StepPlan.of(List.of(
                new SequenceStep(1, "t", new int[] {1, 2, 3}, 9, List.of(new PageRef(0, 1), new PageRef(2, 1),
                        new PageRef(3, 1)), true),
                new SequenceStep(2, "t", new int[] {4}, 7, List.of(new PageRef(1, 1), new PageRef(4, 1)), false)),
                layout, CFG);
        assertThat(large.tableEntries).isEqualTo(5);
        assertThat(small.tableEntries).isEqualTo(2);
        for (StepPlan p : List.of(small, large)) {
            assertThat(new long[] {p.seqsAt, p.rowSeqAt, p.rowPosAt, p.logitRowsAt, p.tableAt})
                    .containsExactly(small.seqsAt, small.rowSeqAt, small.rowPosAt, small.logitRowsAt, small.tableAt);
            assertThat(p.bytes).isGreaterThanOrEqualTo(p.tableAt + 16L * p.tableEntries);
        }
    }

    @Test
    void stepPlanBytesFollowCommonCuhAndAddressTheSameSlotsAsTheCpuLayout() {
        KvLayout layout = KvLayout.of(CFG, 4);
        List<PageRef> a = List.of(new PageRef(5, 2), new PageRef(1, 7), new PageRef(3, 1));
        List<PageRef> b = List.of(new PageRef(0, 9));
        StepPlan plan = StepPlan.of(List.of(new SequenceStep(11, "t", new int[] {1, 2, 3}, 6, a, true),
                new SequenceStep(12, "u", new int[] {4}, 0, b, false)), layout, CFG);
        assertThat(plan.rows).isEqualTo(4);
        assertThat(plan.outRows).isEqualTo(1);
        assertThat(plan.logitRows).containsExactly(2);
        assertThat(plan.rowPos).containsExactly(6, 7, 8, 0);
        assertThat(plan.rowSeq).containsExactly(0, 0, 0, 1);
        assertThat(plan.seqTablePages).containsExactly(3, 1); // positions up to 8 need 3 pages of 4
        assertThat(plan.pagesTouched()).containsExactly(0, 1, 3, 5);
        ByteBuffer buf = ByteBuffer.allocate((int) plan.bytes);
        plan.writeTo(buf);
        buf.order(ByteOrder.LITTLE_ENDIAN);
        // SeqDesc {long request; int startPos, endPos, tableOffset, tablePages}
        assertThat(buf.getLong(0)).isEqualTo(11);
        assertThat(buf.getInt(8)).isEqualTo(6);
        assertThat(buf.getInt(12)).isEqualTo(9);
        assertThat(buf.getInt(16)).isZero();
        assertThat(buf.getInt(20)).isEqualTo(3);
        assertThat(buf.getLong(24)).isEqualTo(12);
        assertThat(buf.getInt(24 + 16)).isEqualTo(3);
        // TableEntry {int page; int pad; long epoch}
        int t = (int) plan.tableAt;
        assertThat(plan.tableAt % 256).isZero();
        assertThat(buf.getInt(t + 16)).isEqualTo(1);
        assertThat(buf.getLong(t + 16 + 8)).isEqualTo(7);
        assertThat(buf.getInt(t + 3 * 16)).isEqualTo(0);
        assertThat(buf.getLong(t + 3 * 16 + 8)).isEqualTo(9);
        assertThat(buf.getInt((int) plan.rowPosAt + 4 * 2)).isEqualTo(8);
        assertThat(buf.getInt((int) plan.logitRowsAt)).isEqualTo(2);
        // the kernel's address of (page, layer, K|V, slot) is KvLayout's
        for (int row = 0; row < plan.rows; row++) {
            int s = plan.rowSeq[row];
            int pos = plan.rowPos[row];
            int entry = plan.seqTableOffset[s] + pos / layout.pageTokens();
            long pageFloats = (long) CFG.nLayers() * 2 * layout.pageTokens() * CFG.kvDim();
            for (int layer = 0; layer < CFG.nLayers(); layer++) {
                long kernel = plan.tablePage[entry] * pageFloats + ((long) (layer * 2 + 1) * layout.pageTokens() + pos % 4) * CFG.kvDim();
                long cpu = layout.pageFloats() * plan.tablePage[entry] + layout.rowOffset(layer, 1, pos % 4);
                assertThat(kernel).isEqualTo(cpu);
            }
        }
    }

    @Test
    void badStepsAreRefusedOnTheHostBeforeAnythingIsUploaded() {
        KvLayout layout = KvLayout.of(CFG, 4);
        List<PageRef> one = List.of(new PageRef(0, 1));
        assertThatThrownBy(() -> StepPlan.of(List.of(new SequenceStep(1, "t", new int[] {1}, 4, one, true)), layout, CFG))
                .hasMessageContaining("page table has 1 pages");
        assertThatThrownBy(() -> StepPlan.of(List.of(new SequenceStep(1, "t", new int[] {50}, 0, one, true)), layout, CFG))
                .hasMessageContaining("outside vocabulary");
        assertThatThrownBy(() -> StepPlan.of(List.of(new SequenceStep(1, "t", new int[] {1}, 64, one, true)), layout, CFG))
                .hasMessageContaining("beyond the model's limit");
        assertThatThrownBy(() -> StepPlan.of(List.of(), layout, CFG)).hasMessageContaining("at least one sequence");
    }

    /** pw_check_page, in Java: owner and epoch equal, written >= needed. */
    static boolean kernelAllows(long[][] tags, StepPlan plan, int seq, int pageTokens) {
        for (int i = 0; i < plan.seqTablePages[seq]; i++) {
            int e = plan.seqTableOffset[seq] + i;
            long[] t = tags[plan.tablePage[e]];
            if (t[0] != plan.seqRequest[seq] || t[1] != plan.tableEpoch[e] || t[2] < plan.neededWritten(seq, i, pageTokens)) {
                return false;
            }
        }
        return true;
    }

    @Test
    void theKernelsPageRuleOnSyncedTagsAgreesWithTheHostReadCheck() {
        LlamaWeights w = dev.pagewarden.core.reference.TinyModelsAccess.random(CFG, 3);
        Random rnd = new Random(5);
        try (LoadedModel model = new LoadedModel(null, "memory", w, null, Arena.ofShared());
             Backend cpu = Backends.select("cpu").create(model, new BackendOptions(1))) {
            KvLayout layout = KvLayout.of(CFG, 4);
            var storage = cpu.allocateKv(layout, 12);
            KvPool pool = new KvPool("p", storage);
            List<List<PageRef>> tables = new ArrayList<>();
            for (long req = 1; req <= 3; req++) {
                tables.add(pool.allocate(req, "t" + req, 4));
            }
            int agreed = 0;
            for (int trial = 0; trial < 400; trial++) {
                int owner = rnd.nextInt(3);
                long reader = rnd.nextInt(4) == 0 ? 1 + rnd.nextInt(3) : owner + 1;
                List<PageRef> table = new ArrayList<>(tables.get(owner));
                if (rnd.nextInt(5) == 0) {
                    int i = rnd.nextInt(table.size());
                    table.set(i, new PageRef(table.get(i).page(), table.get(i).epoch() + 1)); // stale or future epoch
                }
                int written = rnd.nextInt(17);
                pool.markWrittenUpTo(owner + 1, tables.get(owner), written);
                int start = rnd.nextInt(16);
                ReadCheck host = pool.checkRead(reader, table, start, start + 1);
                StepPlan plan = StepPlan.of(List.of(new SequenceStep(reader, "t" + reader, new int[] {1}, start, table, true)),
                        layout, CFG);
                long[][] tags = deviceTags(pool, plan, 12);
                assertThat(kernelAllows(tags, plan, 0, 4)).as("trial %d: %s", trial, host).isEqualTo(host.allowed());
                agreed++;
            }
            assertThat(agreed).isEqualTo(400);
            storage.close();
        }
    }

    /** The device tags of a pool's first {@code pages} pages as the backend syncs them for {@code plan}. */
    private static long[][] deviceTags(KvPool pool, StepPlan plan, int pages) {
        java.util.Map<Integer, Long> readers = plan.cachedReaders(pool.tags());
        long[][] tags = new long[pages][];
        for (int p = 0; p < pages; p++) {
            KvPool.PageInfo info = pool.info(p);
            tags[p] = new long[] {GpuKvStorage.deviceOwner(info, readers), info.epoch(), info.writtenSlots()};
        }
        return tags;
    }

    @Test
    void theKernelsPageRuleAdmitsACachedPrefixPageToItsOwnScopeOnly() {
        LlamaWeights w = dev.pagewarden.core.reference.TinyModelsAccess.random(CFG, 3);
        try (LoadedModel model = new LoadedModel(null, "memory", w, null, Arena.ofShared());
             Backend cpu = Backends.select("cpu").create(model, new BackendOptions(1))) {
            KvLayout layout = KvLayout.of(CFG, 4);
            var storage = cpu.allocateKv(layout, 12);
            KvPool pool = new KvPool("p", storage);
            int[] prompt = {1, 5, 6, 7, 8};
            CacheScope a = new CacheScope("t1", null);
            List<PageRef> writer = pool.allocate(1, "t1", 2);
            pool.markWrittenUpTo(1, writer, 5);
            String key = PrefixKeys.chain("m", a, null, prompt, 4, 1).getFirst();
            assertThat(pool.keep(1, writer.getFirst(), a, key, Arrays.copyOf(prompt, 4))).isTrue();
            pool.release(1, writer.subList(1, 2));
            int agreed = 0;
            for (CacheScope reader : List.of(a, new CacheScope("t2", null),
                    new CacheScope("t1", "k"))) {
                List<PageRef> own = pool.allocate(7, reader.tenant(), 1);
                List<PageRef> table = List.of(writer.getFirst(), own.getFirst());
                ReadCheck host = pool.checkRead(7, reader.id(), table, 4, 5);
                StepPlan plan = StepPlan.of(List.of(new SequenceStep(7, reader.tenant(), new int[] {8}, 4, table, true,
                        reader.id())), layout, CFG);
                assertThat(host.allowed()).as(reader.toString()).isEqualTo(reader.equals(a));
                assertThat(kernelAllows(deviceTags(pool, plan, 12), plan, 0, 4)).as(reader.toString()).isEqualTo(host.allowed());
                // the same read claimed without a scope: refused on both sides
                StepPlan unscoped = StepPlan.of(List.of(new SequenceStep(7, reader.tenant(), new int[] {8}, 4, table, true)),
                        layout, CFG);
                assertThat(kernelAllows(deviceTags(pool, unscoped, 12), unscoped, 0, 4)).isFalse();
                pool.release(7, own);
                agreed++;
            }
            assertThat(agreed).isEqualTo(3);
            storage.close();
        }
    }

    /** The device CRC32C algorithm of pages.cu, in Java: per-thread chunk CRCs combined left to right (zlib's crc32_combine). */
    static int deviceCrc(byte[] page, int threads) {
        long n = page.length;
        long chunk = (n + threads - 1) / threads;
        int[] crcs = new int[threads];
        for (int t = 0; t < threads; t++) {
            long from = t * chunk;
            long to = Math.min(from + chunk, n);
            if (from < to) {
                CRC32C c = new CRC32C();
                c.update(page, (int) from, (int) (to - from));
                crcs[t] = (int) c.getValue();
            }
        }
        int shiftFull = x8nmodp(chunk);
        int crc = crcs[0];
        for (int t = 1; t < threads; t++) {
            long f = t * chunk;
            if (f >= n) {
                break;
            }
            long len = Math.min(f + chunk, n) - f;
            crc = multmodp(len == chunk ? shiftFull : x8nmodp(len), crc) ^ crcs[t];
        }
        return crc;
    }

    static int multmodp(int a, int b) {
        int m = 1 << 31;
        int p = 0;
        for (;;) {
            if ((a & m) != 0) {
                p ^= b;
                if ((a & (m - 1)) == 0) {
                    break;
                }
            }
            m >>>= 1;
            b = (b & 1) != 0 ? (b >>> 1) ^ 0x82F63B78 : b >>> 1;
        }
        return p;
    }

    static int x8nmodp(long bytes) {
        int sq = 1 << 30;
        for (int i = 0; i < 3; i++) {
            sq = multmodp(sq, sq);
        }
        int p = 1 << 31;
        while (bytes != 0) {
            if ((bytes & 1) != 0) {
                p = multmodp(sq, p);
            }
            bytes >>>= 1;
            sq = multmodp(sq, sq);
        }
        return p;
    }

    @Test
    void theDeviceChecksumAlgorithmEqualsCrc32cOfTheWholePage() {
        Random rnd = new Random(7);
        for (int size : new int[] {1, 3, 255, 256, 257, 4096, 40960, 40963, 5 * 2 * 16 * 64 * 4}) {
            byte[] page = new byte[size];
            rnd.nextBytes(page);
            CRC32C whole = new CRC32C();
            whole.update(page);
            assertThat(deviceCrc(page, 256)).as("size %d", size).isEqualTo((int) whole.getValue());
            assertThat(deviceCrc(page, 7)).as("size %d, 7 threads", size).isEqualTo((int) whole.getValue());
        }
    }

    @Test
    void bf16GoesUpAsStoredAndTheMatvecDecoderWidensItToTheCpuValues() {
        Tensor t = TestTensorsAccess.random(DType.BF16, 5, 40, 3);
        assertThat(WeightPacking.TYPES).contains(DType.BF16);
        assertThat(WeightPacking.matvecKernel(DType.BF16)).isEqualTo("pw_matvec_bf16");
        assertThat(WeightPacking.rows1Kernel(DType.BF16)).isEqualTo("pw_rows1_bf16");
        // matvec.cu's DecBF16x8 over the uploaded bytes: 32-bit word j of a chunk of 8 holds values 2j (low) and 2j+1
        for (int r = 0; r < 5; r++) {
            for (int ch = 0; ch < 5; ch++) {
                for (int j = 0; j < 4; j++) {
                    long at = ((long) r * 40 + ch * 8) * 2 + 4L * j;
                    int word = t.data().get(ValueLayout.JAVA_INT_UNALIGNED.withOrder(ByteOrder.LITTLE_ENDIAN), at);
                    assertThat(Float.intBitsToFloat(word << 16)).isEqualTo(t.get(r, ch * 8 + 2 * j));
                    assertThat(Float.intBitsToFloat(word & 0xffff0000)).isEqualTo(t.get(r, ch * 8 + 2 * j + 1));
                }
            }
        }
    }
}
