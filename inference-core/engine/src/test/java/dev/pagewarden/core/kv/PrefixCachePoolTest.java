package dev.pagewarden.core.kv;

import dev.pagewarden.core.backend.Backend;
import dev.pagewarden.core.backend.BackendOptions;
import dev.pagewarden.core.backend.Backends;
import dev.pagewarden.core.backend.SequenceStep;
import dev.pagewarden.core.fault.FaultHooks;
import dev.pagewarden.core.lineage.LineageEvent;
import dev.pagewarden.core.lineage.LineageIds;
import dev.pagewarden.core.lineage.LineageRecorder;
import dev.pagewarden.core.model.load.LoadedModel;
import dev.pagewarden.core.spi.Clock;
import dev.pagewarden.core.step.StepGuard;
import dev.pagewarden.core.testing.IsolationFixtures;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;

/** Cached prefix pages: kept read-only per scope, read only by that scope, evicted before an allocation fails. */
class PrefixCachePoolTest {
    static final int PAGE_TOKENS = 4;
    static final int PAGES = 8;
    static final CacheScope A = new CacheScope("tenant-a", null);
    static LoadedModel model;
    static Backend backend;
    KvPool pool;
    final List<LineageEvent> events = new ArrayList<>();

    @BeforeAll
    static void load() {
        model = IsolationFixtures.stories();
        backend = Backends.select("cpu").create(model, new BackendOptions(1));
    }

    @AfterAll
    static void close() {
        backend.close();
    }

    @BeforeEach
    void newPool() {
        LineageRecorder lineage = new LineageRecorder(events::add, new LineageIds(), Clock.SYSTEM, "node-1", "prefill-0");
        pool = new KvPool("prefill-0", backend.allocateKv(KvLayout.of(model.config(), PAGE_TOKENS), PAGES), lineage);
    }

    @AfterEach
    void closePool() {
        pool.storage().close();
    }

    private static int[] tokens(int n, int seed) {
        return IsolationFixtures.prompt(n, seed);
    }

    private static List<String> keys(CacheScope scope, int[] prompt, int pages) {
        return PrefixKeys.chain("stories260K.bin", scope, null, prompt, PAGE_TOKENS, pages);
    }

    /** Request {@code id} writes {@code prompt} into fresh pages and keeps its full pages cached in {@code scope}. */
    private List<PageRef> writeAndKeep(long id, CacheScope scope, int[] prompt) {
        List<PageRef> pages = pool.allocate(id, scope.tenant(), pool.layout().pagesFor(prompt.length));
        pool.markWrittenUpTo(id, pages, prompt.length);
        List<String> keys = keys(scope, prompt, prompt.length / PAGE_TOKENS);
        List<PageRef> rest = new ArrayList<>();
        for (int i = 0; i < pages.size(); i++) {
            if (i >= keys.size() || !pool.keep(id, pages.get(i), scope, keys.get(i),
                    Arrays.copyOfRange(prompt, i * PAGE_TOKENS, (i + 1) * PAGE_TOKENS))) {
                rest.add(pages.get(i));
            }
        }
        pool.release(id, rest);
        return pages.subList(0, keys.size());
    }

    @Test
    void aKeptPageIsReusedByItsScopeOnlyAndNeverWritten() {
        int[] prompt = tokens(10, 1);
        List<PageRef> cached = writeAndKeep(1, A, prompt);
        assertThat(cached).hasSize(2);
        assertThat(pool.cachedPages()).isEqualTo(2);
        assertThat(pool.info(cached.get(0).page()).state()).isEqualTo(PageState.CACHED);
        assertThat(pool.info(cached.get(0).page()).scope()).isEqualTo(A.id());

        KvPool.PrefixGrant hit = pool.allocateWithPrefix(2, "tenant-a", A, keys(A, prompt, 2), prompt, 3);
        assertThat(hit.reused()).containsExactlyElementsOf(cached);
        assertThat(hit.own()).hasSize(1);
        List<PageRef> table = hit.table();
        assertThat(pool.checkRead(2, A.id(), table, 8, 10).allowed()).isTrue();
        // the same table read without the scope, or a step that would write into a cached page: refused
        assertThat(pool.checkRead(2, null, table, 8, 10).violation()).isEqualTo(ReadCheck.Violation.OWNER_TAG_MISMATCH);
        assertThat(pool.checkRead(2, A.id(), table, 7, 10).violation()).isEqualTo(ReadCheck.Violation.OWNER_TAG_MISMATCH);

        // another tenant, or the same tenant under another prompt cache key, finds nothing for the same prompt
        CacheScope b = new CacheScope("tenant-b", null);
        CacheScope keyed = new CacheScope("tenant-a", "conversation-7");
        assertThat(pool.allocateWithPrefix(3, "tenant-b", b, keys(b, prompt, 2), prompt, 3).reused()).isEmpty();
        assertThat(pool.allocateWithPrefix(4, "tenant-a", keyed, keys(keyed, prompt, 2), prompt, 3)).isNull();

        assertThat(events.stream().filter(e -> e.kind() == LineageEvent.Kind.REUSE).map(LineageEvent::requestId))
                .containsExactly(2L, 2L);
        assertThat(events.stream().filter(e -> e.kind() == LineageEvent.Kind.CACHE))
                .allSatisfy(e -> assertThat(e.requestId()).isEqualTo(1L))
                .allSatisfy(e -> assertThat(e.peerEpoch()).isEqualTo(A.digest()))
                .hasSize(2);
    }

    @Test
    void aGrantRecordsNoReuseUntilTheReaderRecordsItWithItsOwnScope() {
        int[] prompt = tokens(10, 3);
        List<PageRef> cached = writeAndKeep(1, A, prompt);
        CacheScope b = new CacheScope("tenant-b", null);
        // looked up in A's scope for a reader of b (what only a faulty lookup asks): granted, nothing recorded
        KvPool.PrefixGrant grant = pool.grantWithPrefix(2, "tenant-b", A, keys(A, prompt, 2), prompt, 3);
        assertThat(grant.reused()).containsExactlyElementsOf(cached);
        assertThat(grant.writers()).containsExactly(1L, 1L);
        assertThat(events).noneMatch(e -> e.kind() == LineageEvent.Kind.REUSE);
        // the reader's own scope reads nothing there
        assertThat(pool.checkRead(2, b.id(), grant.table(), 8, 10).violation())
                .isEqualTo(ReadCheck.Violation.OWNER_TAG_MISMATCH);

        long[] ids = pool.recordReuse(2, "tenant-b", b, grant.reused());
        List<LineageEvent> reuses = events.stream().filter(e -> e.kind() == LineageEvent.Kind.REUSE).toList();
        assertThat(reuses).hasSize(2).allSatisfy(e -> {
            assertThat(e.requestId()).isEqualTo(2L);
            assertThat(e.tenant()).isEqualTo("tenant-b");
            assertThat(e.peerEpoch()).as("the reader's scope, not the page's").isEqualTo(b.digest());
        });
        assertThat(ids).containsExactly(reuses.get(0).id(), reuses.get(1).id());
        assertThat(pool.cachedPrefixPages(A, keys(A, prompt, 2), prompt)).isEqualTo(2);
        assertThat(pool.cachedPrefixPages(b, keys(b, prompt, 2), prompt)).isZero();
    }

    @Test
    void aReadOfACachedPageFromAnotherScopeIsRefusedByTheCheck() {
        int[] prompt = tokens(9, 2);
        List<PageRef> cached = writeAndKeep(1, A, prompt);
        for (CacheScope other : List.of(new CacheScope("tenant-b", null), new CacheScope("tenant-a", "k"),
                new CacheScope("tenant-b", "k"))) {
            List<PageRef> own = pool.allocate(9, other.tenant(), 1);
            List<PageRef> table = new ArrayList<>(cached);
            table.addAll(own);
            ReadCheck check = pool.checkRead(9, other.id(), table, 8, 9);
            assertThat(check.violation()).as(other.toString()).isEqualTo(ReadCheck.Violation.OWNER_TAG_MISMATCH);
            assertThat(check.page()).isEqualTo(cached.get(0).page());
            pool.release(9, own);
        }
        // a stale epoch of the right scope: refused too
        List<PageRef> stale = List.of(new PageRef(cached.get(0).page(), cached.get(0).epoch() - 1));
        assertThat(pool.checkRead(9, A.id(), stale, 4, 4).allowed()).isFalse();
    }

    @Test
    void theStepGuardLeavesAnotherScopesReadOutOfTheStep() {
        int[] prompt = tokens(9, 3);
        List<PageRef> cached = writeAndKeep(1, A, prompt);
        StepGuard guard = new StepGuard(backend, pool, FaultHooks.NONE);
        List<PageRef> own = pool.allocate(5, "tenant-b", 1);
        List<PageRef> table = new ArrayList<>(cached);
        table.addAll(own);
        float[][] logits = {new float[model.config().vocabSize()]};
        ReadCheck[] verdicts = guard.forward(List.of(new SequenceStep(5, "tenant-b", new int[] {prompt[8]}, 8, table,
                true, new CacheScope("tenant-b", null).id())), logits, i -> { });
        assertThat(verdicts[0].violation()).isEqualTo(ReadCheck.Violation.OWNER_TAG_MISMATCH);
        assertThat(pool.info(own.get(0).page()).writtenSlots()).as("nothing ran, nothing written").isZero();
    }

    @Test
    void unreferencedCachedPagesAreEvictedLeastRecentlyUsedBeforeAnAllocationFails() {
        int[] p1 = tokens(8, 4);
        int[] p2 = tokens(8, 5);
        List<PageRef> first = writeAndKeep(1, A, p1);
        List<PageRef> second = writeAndKeep(2, A, p2);
        assertThat(pool.freePages()).isEqualTo(PAGES - 4);
        // a reader holds the first prefix: it cannot be evicted; touching it makes the second the oldest
        KvPool.PrefixGrant holder = pool.allocateWithPrefix(3, "tenant-a", A, keys(A, p1, 1), p1, 1);
        assertThat(holder.reused()).hasSize(1);
        pool.unref(3, holder.reused());
        KvPool.PrefixGrant reader = pool.allocateWithPrefix(4, "tenant-a", A, keys(A, p1, 2), p1, 2);
        assertThat(reader.reused()).containsExactlyElementsOf(first);

        // 4 free + 2 evictable (the second prefix): 7 pages cannot be had, and nothing is evicted for nothing
        assertThat(pool.allocate(5, "tenant-c", 7)).isNull();
        assertThat(pool.cachedPages()).isEqualTo(4);
        List<PageRef> big = pool.allocate(5, "tenant-c", 6);
        assertThat(big).hasSize(6);
        assertThat(pool.cacheEvictions()).isEqualTo(2);
        assertThat(second).allSatisfy(r -> assertThat(pool.info(r.page()).state()).isNotEqualTo(PageState.CACHED));
        assertThat(first).allSatisfy(r -> assertThat(pool.info(r.page()).state()).isEqualTo(PageState.CACHED));
        assertThat(events.stream().filter(e -> e.kind() == LineageEvent.Kind.RELEASE && e.requestId() == 2)).hasSize(2);

        pool.release(5, big);
        pool.unref(4, reader.reused());
        assertThat(pool.allocate(6, "tenant-c", PAGES)).hasSize(PAGES);
        assertThat(pool.cachedPages()).isZero();
    }

    @Test
    void aPrefixsKvRowsDoNotDependOnHowThePromptWasChunked() {
        int[] prompt = tokens(15, 6);
        int full = prompt.length / PAGE_TOKENS; // 3 full pages, 3 tokens on the last
        StepGuard guard = new StepGuard(backend, pool, FaultHooks.NONE);
        int vocab = model.config().vocabSize();

        // request 1: the whole prompt in one step
        List<PageRef> whole = pool.allocate(1, "tenant-a", pool.layout().pagesFor(prompt.length));
        float[][] wholeLogits = {new float[vocab]};
        assertThat(guard.forward(List.of(new SequenceStep(1, "tenant-a", prompt, 0, whole, true)), wholeLogits,
                i -> { })[0].allowed()).isTrue();
        byte[][] wholeBytes = pageBytes(whole);

        // request 2: the first 2 pages in chunks of 5 and 3 tokens, kept as cached pages
        List<PageRef> first = pool.allocate(2, "tenant-a", 2);
        float[][] scratch = {new float[vocab]};
        guard.forward(List.of(new SequenceStep(2, "tenant-a", Arrays.copyOfRange(prompt, 0, 5), 0, first, false)), scratch, i -> { });
        guard.forward(List.of(new SequenceStep(2, "tenant-a", Arrays.copyOfRange(prompt, 5, 8), 5, first, false)), scratch, i -> { });
        List<String> keys = keys(A, prompt, full);
        for (int i = 0; i < 2; i++) {
            assertThat(pool.keep(2, first.get(i), A, keys.get(i), Arrays.copyOfRange(prompt, i * PAGE_TOKENS, (i + 1) * PAGE_TOKENS))).isTrue();
        }

        // request 3: reuses those 2 pages, prefills only the rest
        KvPool.PrefixGrant grant = pool.allocateWithPrefix(3, "tenant-a", A, keys, prompt, pool.layout().pagesFor(prompt.length));
        assertThat(grant.reused()).containsExactlyElementsOf(first);
        float[][] hitLogits = {new float[vocab]};
        List<PageRef> table = grant.table();
        assertThat(guard.forward(List.of(new SequenceStep(3, "tenant-a", Arrays.copyOfRange(prompt, 8, prompt.length), 8,
                table, true, A.id())), hitLogits, i -> { })[0].allowed()).isTrue();

        byte[][] hitBytes = pageBytes(table);
        int pageBytes = (int) pool.layout().pageBytes();
        for (int p = 0; p < whole.size(); p++) {
            // the last page holds 3 written slots; compare whole pages only where every slot was written
            if (p < full) {
                assertThat(hitBytes[p]).as("page %d", p).isEqualTo(wholeBytes[p]);
            }
        }
        assertThat(pageBytes).isPositive();
        assertThat(hitLogits[0]).as("logits of the last prompt token").isEqualTo(wholeLogits[0]);
        assertThat(slotsEqual(whole.get(full), table.get(full), prompt.length - full * PAGE_TOKENS)).isTrue();
    }

    private byte[][] pageBytes(List<PageRef> pages) {
        byte[][] out = new byte[pages.size()][];
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment buf = arena.allocate(pool.layout().pageBytes(), 64);
            for (int i = 0; i < pages.size(); i++) {
                pool.storage().readPage(pages.get(i).page(), buf);
                out[i] = buf.toArray(java.lang.foreign.ValueLayout.JAVA_BYTE);
            }
        }
        return out;
    }

    /** Whether the first {@code slots} slots of two pages hold the same K and V bits, in every layer and head. */
    private boolean slotsEqual(PageRef a, PageRef b, int slots) {
        byte[][] both = pageBytes(List.of(a, b));
        KvLayout l = pool.layout();
        java.nio.ByteBuffer x = java.nio.ByteBuffer.wrap(both[0]).order(java.nio.ByteOrder.nativeOrder());
        java.nio.ByteBuffer y = java.nio.ByteBuffer.wrap(both[1]).order(java.nio.ByteOrder.nativeOrder());
        int hs = model.config().headSize();
        for (int layer = 0; layer < model.config().nLayers(); layer++) {
            for (int kv = 0; kv < 2; kv++) {
                for (int slot = 0; slot < slots; slot++) {
                    for (int head = 0; head < l.kvHeads(); head++) {
                        long at = l.offset(layer, kv, slot, head);
                        long stride = l.elementStride(kv);
                        for (int d = 0; d < hs; d++) {
                            int i = (int) ((at + d * stride) * Float.BYTES);
                            if (Float.floatToRawIntBits(x.getFloat(i)) != Float.floatToRawIntBits(y.getFloat(i))) {
                                return false;
                            }
                        }
                    }
                }
            }
        }
        return true;
    }
}
