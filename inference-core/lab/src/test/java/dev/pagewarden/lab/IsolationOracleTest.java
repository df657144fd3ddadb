package dev.pagewarden.lab;

import dev.pagewarden.core.backend.Backend;
import dev.pagewarden.core.backend.BackendOptions;
import dev.pagewarden.core.backend.Backends;
import dev.pagewarden.core.backend.SequenceStep;
import dev.pagewarden.core.fault.FaultHooks;
import dev.pagewarden.core.kv.KvLayout;
import dev.pagewarden.core.kv.KvPool;
import dev.pagewarden.core.kv.KvStorage;
import dev.pagewarden.core.kv.PageRef;
import dev.pagewarden.core.kv.ReadCheck;
import dev.pagewarden.core.lineage.LineageRecorder;
import dev.pagewarden.core.model.load.LoadedModel;
import dev.pagewarden.core.step.StepGuard;
import dev.pagewarden.core.testing.IsolationFixtures;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

import java.lang.foreign.MemorySegment;
import java.util.Arrays;
import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The isolation oracle against real CPU steps: it learns who wrote each slot from the storage's
 * writer shadow, which is written where the bytes are, and so stays right when the pool's own
 * bookkeeping - the detectors' input - is wrong.
 */
class IsolationOracleTest {
    static final int PAGE_TOKENS = 16;
    static final int PAGES = 2;
    static LoadedModel model;
    static Backend backend;

    @BeforeAll
    static void load() {
        model = IsolationFixtures.stories();
        backend = Backends.select("cpu").create(model, new BackendOptions(1));
    }

    @AfterAll
    static void close() {
        backend.close();
    }

    /** The engine's hooks with the oracle watching, and optionally a wrong record of each step's writes. */
    private static FaultHooks watched(IsolationOracle oracle, boolean overReportWrites) {
        FaultHooks lab = LabFaults.NONE.hooks(oracle);
        return new FaultHooks() {
            @Override
            public void afterStep(String pool, List<SequenceStep> ran, KvStorage storage) {
                lab.afterStep(pool, ran, storage);
            }

            @Override
            public int recordedWriteEnd(String pool, SequenceStep step) {
                // the broken bookkeeping: the whole page table recorded as written by the step
                return overReportWrites ? step.pageTable().size() * PAGE_TOKENS : step.endPos();
            }
        };
    }

    private static int[] tokens(int n, int seed) {
        return IsolationFixtures.prompt(n, seed);
    }

    /**
     * Tenant a fills two pages and lets them go; tenant b gets the same pages (LIFO), writes one
     * token and then asks to read 20 positions it never wrote. With true bookkeeping the guard refuses
     * the read and the oracle sees nothing read. With a wrong write record (through the fault hooks)
     * the guard lets the read through and the detector misses it - and the oracle still counts every
     * foreign slot b's step attended to.
     */
    @Test
    void theOracleCountsForeignReadsThatWrongBookkeepingHidesFromTheDetector() {
        for (boolean broken : new boolean[] {false, true}) {
            IsolationOracle oracle = new IsolationOracle();
            KvPool pool = new KvPool("decode-0", backend.allocateKv(KvLayout.of(model.config(), PAGE_TOKENS), PAGES),
                    LineageRecorder.none("decode-0"), true);
            try {
                StepGuard guard = new StepGuard(backend, pool, watched(oracle, broken));
                float[][] logits = {new float[model.config().vocabSize()]};
                List<PageRef> a = pool.allocate(1, "tenant-a", PAGES);
                ReadCheck fill = guard.forward(List.of(new SequenceStep(1, "tenant-a", tokens(2 * PAGE_TOKENS, 1), 0, a,
                        true)), logits, i -> { })[0];
                assertThat(fill.allowed()).isTrue();
                pool.release(1, a);

                List<PageRef> b = pool.allocate(2, "tenant-b", PAGES);
                assertThat(b.stream().map(PageRef::page).sorted().toList())
                        .isEqualTo(a.stream().map(PageRef::page).sorted().toList());
                guard.forward(List.of(new SequenceStep(2, "tenant-b", tokens(1, 2), 0, b, true)), logits, i -> { });
                ReadCheck read = guard.forward(List.of(new SequenceStep(2, "tenant-b", new int[] {5}, 20, b, true)),
                        logits, i -> { })[0];
                if (!broken) {
                    assertThat(read.violation()).isEqualTo(ReadCheck.Violation.UNWRITTEN_SLOT_READ);
                    assertThat(oracle.crossTenantSlots(2)).as("a refused step reads nothing").isZero();
                    assertThat(oracle.crossTenantReaders()).isEmpty();
                } else {
                    assertThat(read.allowed()).as("the detector, fed a wrong write record, lets the read through").isTrue();
                    // positions 1..19 still hold tenant a's KV: b wrote only position 0 (and now 20)
                    assertThat(oracle.crossTenantSlots(2)).as("the oracle is not fooled").isEqualTo(19);
                    assertThat(oracle.tokensFromForeignData(2)).isEqualTo(1);
                    assertThat(oracle.crossTenantReaders()).containsExactly(2L);
                }
                assertThat(oracle.crossTenantSlots(1)).as("a read only its own KV").isZero();
            } finally {
                pool.storage().close();
            }
        }
    }

    /** Same tenant is not cross-tenant; a scrub leaves no writer; a transferred copy brings its writers. */
    @Test
    void theShadowFollowsTheBytes() {
        KvPool pool = new KvPool("decode-0", backend.allocateKv(KvLayout.of(model.config(), PAGE_TOKENS), PAGES),
                LineageRecorder.none("decode-0"), true);
        try {
            IsolationOracle oracle = new IsolationOracle();
            StepGuard guard = new StepGuard(backend, pool, watched(oracle, false));
            float[][] logits = {new float[model.config().vocabSize()]};
            List<PageRef> a = pool.allocate(1, "tenant-a", 1);
            guard.forward(List.of(new SequenceStep(1, "tenant-a", tokens(10, 1), 0, a, true)), logits, i -> { });
            long[] writers = pool.storage().writers(a.get(0).page());
            assertThat(Arrays.copyOf(writers, 10)).containsOnly(1L);
            assertThat(Arrays.copyOfRange(writers, 10, PAGE_TOKENS)).containsOnly(0L);
            pool.release(1, a);

            // another request of the same tenant over the same page: not a cross-tenant read
            List<PageRef> same = pool.allocate(3, "tenant-a", 1);
            pool.markWrittenUpTo(3, same, 10); // what a prefix-sharing engine would record
            guard.forward(List.of(new SequenceStep(3, "tenant-a", new int[] {7}, 10, same, true)), logits, i -> { });
            assertThat(oracle.crossTenantSlots(3)).isZero();

            // a copy from elsewhere lands with its writers; a scrub clears them
            long[] foreign = new long[PAGE_TOKENS];
            Arrays.fill(foreign, 9);
            try (var arena = java.lang.foreign.Arena.ofConfined()) {
                MemorySegment page = arena.allocate(pool.layout().pageBytes());
                pool.storage().writeSlots(same.get(0).page(), page, 4, foreign);
            }
            assertThat(Arrays.copyOf(pool.storage().writers(same.get(0).page()), 4)).containsOnly(9L);
            assertThat(pool.storage().writers(same.get(0).page())[4]).isEqualTo(1L);
            pool.quarantine(3, same);
            pool.scrubAndFree(3, same);
            assertThat(pool.storage().writers(same.get(0).page())).containsOnly(0L);
        } finally {
            pool.storage().close();
        }
    }
}
