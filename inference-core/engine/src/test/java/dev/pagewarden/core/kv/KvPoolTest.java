package dev.pagewarden.core.kv;

import dev.pagewarden.core.backend.Backend;
import dev.pagewarden.core.backend.BackendOptions;
import dev.pagewarden.core.backend.Backends;
import dev.pagewarden.core.model.load.LoadedModel;
import dev.pagewarden.core.lineage.LineageRecorder;
import dev.pagewarden.core.safety.SafetyEvent;
import dev.pagewarden.core.testing.IsolationFixtures;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/** The page metadata that every isolation mechanism rests on, on the real CPU page memory. */
class KvPoolTest {
    static final int PAGE_TOKENS = 4;
    static final int PAGES = 6;
    static LoadedModel model;
    static Backend backend;
    KvPool pool;

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
        pool = new KvPool("test-0", backend.allocateKv(KvLayout.of(model.config(), PAGE_TOKENS), PAGES));
    }

    @AfterEach
    void closePool() {
        pool.storage().close();
    }

    private List<PageRef> allAs(long request, String tenant) {
        List<PageRef> pages = pool.allocate(request, tenant, PAGES);
        assertThat(pages).hasSize(PAGES);
        return pages;
    }

    @Test
    void tagsAreACopyOfOneMomentThatNeedsNoLockToRead() throws Exception {
        List<PageRef> pages = pool.allocate(7, "t", 2);
        pool.markWritten(7, pages.get(0), 3);
        PageTags tags = pool.tags(new int[] {pages.get(1).page(), pages.get(0).page(), pages.get(0).page()});
        pool.markWritten(7, pages.get(0), 4);
        pool.release(7, pages);
        KvPool.PageInfo first = tags.info(pages.get(0).page());
        assertThat(first.state()).isEqualTo(PageState.OWNED);
        assertThat(first.owner()).isEqualTo(7);
        assertThat(first.epoch()).isEqualTo(pages.get(0).epoch());
        assertThat(first.writtenSlots()).as("as it was when read, not as it is now").isEqualTo(3);
        assertThat(tags.info(pages.get(1).page()).writtenSlots()).isZero();
        assertThat(tags.checksOn()).isTrue();
        int other = pool.capacityPages() - 1 == pages.get(0).page() || pool.capacityPages() - 1 == pages.get(1).page()
                ? 0 : pool.capacityPages() - 1;
        assertThatThrownBy(() -> tags.info(other)).isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("page " + other + " is not among the 2 pages");
        // read from another thread while this one holds the pool's lock: a device thread must never wait for it
        synchronized (pool) {
            Thread reader = Thread.ofPlatform().start(() -> tags.info(pages.get(1).page()));
            reader.join(10_000);
            assertThat(reader.isAlive()).as("reading the tags waited for the pool's lock").isFalse();
        }
        assertThat(pool.tags().info(pages.get(0).page()).state()).isEqualTo(PageState.FREE);
    }

    @Test
    void aRestartedPoolNeverRepeatsAnEpochOfTheStartBefore() {
        // first start: 10 s of uptime in which page 0 is allocated ten million times, once a microsecond (far more than an engine can)
        java.time.Instant boot = java.time.Instant.parse("2026-12-01T10:00:00.000001Z");
        KvPool before = new KvPool("decode-0", pool.storage(), LineageRecorder.none("decode-0"), true,
                KvPool.bootEpochBase(boot));
        long last = 0;
        for (int i = 0; i < 10_000; i++) {
            List<PageRef> p = before.allocate(1, "a", PAGES);
            last = Math.max(last, p.stream().mapToLong(PageRef::epoch).max().orElseThrow());
            before.release(1, p);
        }
        long reachedAfterTenMillionAllocations = last + 9_990_000;
        // the crash and restart take one millisecond: the new base is 1000 microseconds later
        KvPool after = new KvPool("decode-0", pool.storage(), LineageRecorder.none("decode-0"), true,
                KvPool.bootEpochBase(boot.plusSeconds(10).plusMillis(1)));
        List<PageRef> fresh = after.allocate(2, "b", PAGES);
        assertThat(fresh).allSatisfy(r -> assertThat(r.epoch()).isGreaterThan(reachedAfterTenMillionAllocations));
        // the base is the boot time in microseconds, below 2^53 (exact as a JSON number in JavaScript too)
        assertThat(KvPool.bootEpochBase(boot)).isEqualTo(1_796_119_200_000_001L).isLessThan(1L << 53);
        assertThat(fresh.getFirst().epoch()).isEqualTo(KvPool.bootEpochBase(boot.plusSeconds(10).plusMillis(1)) + 1);
    }

    @Test
    void aPoolBuiltNowStartsItsEpochsAtTheWallClockBase() {
        long before = KvPool.bootEpochBase(java.time.Instant.now());
        KvPool now = new KvPool("decode-0", pool.storage());
        long after = KvPool.bootEpochBase(java.time.Instant.now());
        long epoch = now.allocate(1, "a", 1).getFirst().epoch();
        assertThat(epoch).isBetween(before + 1, after + 1);
        assertThatThrownBy(() -> KvPool.bootEpochBase(java.time.Instant.parse("2300-01-01T00:00:00Z")))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("outside the range");
    }

    @Test
    void epochBumpsOnEveryAllocationAndWrittenCountResets() {
        List<PageRef> first = allAs(1, "a");
        pool.markWrittenUpTo(1, first, PAGES * PAGE_TOKENS);
        pool.release(1, first);
        List<PageRef> second = allAs(2, "b");
        for (int i = 0; i < PAGES; i++) {
            int page = first.get(i).page();
            PageRef again = second.stream().filter(r -> r.page() == page).findFirst().orElseThrow();
            assertThat(again.epoch()).as("page %d", page).isEqualTo(first.get(i).epoch() + 1);
            KvPool.PageInfo info = pool.info(page);
            assertThat(info.epoch()).isEqualTo(again.epoch());
            assertThat(info.writtenSlots()).as("written slots of a fresh allocation").isZero();
            assertThat(info.owner()).isEqualTo(2);
            assertThat(info.tenant()).isEqualTo("b");
            assertThat(info.state()).isEqualTo(PageState.OWNED);
        }
        assertThat(pool.allocate(3, "c", 1)).as("nothing free").isNull();
        assertThat(pool.peakUsedPages()).isEqualTo(PAGES);
    }

    @Test
    void correctReadsAreAllowed() {
        List<PageRef> t = pool.allocate(1, "a", 2);
        pool.markWrittenUpTo(1, t, 6); // page 0 full, page 1 two slots
        assertThat(pool.checkRead(1, t, 6, 7)).isEqualTo(ReadCheck.CLEAN);
        assertThat(pool.checkRead(1, t, 0, 8)).as("a fresh prefill reads nothing before it writes").isEqualTo(ReadCheck.CLEAN);
    }

    @Test
    void aPageOwnedByAnotherRequestIsRefused() {
        List<PageRef> mine = pool.allocate(1, "a", 1);
        List<PageRef> theirs = pool.allocate(2, "b", 1);
        pool.markWrittenUpTo(2, theirs, PAGE_TOKENS);
        pool.markWrittenUpTo(1, mine, PAGE_TOKENS);
        ReadCheck c = pool.checkRead(1, List.of(mine.get(0), theirs.get(0)), 5, 6);
        assertThat(c.violation()).isEqualTo(ReadCheck.Violation.OWNER_TAG_MISMATCH);
        assertThat(c.page()).isEqualTo(theirs.get(0).page());
        assertThat(c.details()).contains("owner 2");
    }

    @Test
    void aStaleEpochIsRefusedEvenForTheSameOwner() {
        List<PageRef> old = pool.allocate(7, "a", PAGES);
        pool.markWrittenUpTo(7, old, PAGE_TOKENS);
        pool.release(7, old);
        List<PageRef> fresh = pool.allocate(7, "a", PAGES);
        pool.markWrittenUpTo(7, fresh, PAGE_TOKENS);
        PageRef stale = old.get(0);
        ReadCheck c = pool.checkRead(7, List.of(stale), 1, 2);
        assertThat(c.violation()).isEqualTo(ReadCheck.Violation.OWNER_TAG_MISMATCH);
        assertThat(c.epoch()).isEqualTo(stale.epoch());
        assertThat(pool.checkRead(7, List.of(fresh.get(0)), 1, 2).allowed()).isTrue();
    }

    @Test
    void aFreePageIsRefused() {
        List<PageRef> t = pool.allocate(1, "a", 1);
        pool.markWrittenUpTo(1, t, PAGE_TOKENS);
        pool.release(1, t);
        ReadCheck c = pool.checkRead(1, t, 2, 3);
        assertThat(c.violation()).isEqualTo(ReadCheck.Violation.FREE_PAGE_READ);
        assertThat(c.page()).isEqualTo(t.get(0).page());
    }

    @Test
    void deferredAndQuarantinedPagesAreNotReadable() {
        List<PageRef> t = pool.allocate(1, "a", 2);
        pool.markWrittenUpTo(1, t, 8);
        pool.defer(1, t.subList(0, 1), 1);
        pool.quarantine(1, t.subList(1, 2));
        assertThat(pool.checkRead(1, t.subList(0, 1), 2, 3).violation()).isEqualTo(ReadCheck.Violation.OWNER_TAG_MISMATCH);
        assertThat(pool.checkRead(1, t.subList(1, 2), 2, 3).violation()).isEqualTo(ReadCheck.Violation.OWNER_TAG_MISMATCH);
    }

    @Test
    void aPageTableTooShortForTheReadIsRefused() {
        List<PageRef> t = pool.allocate(1, "a", 1);
        pool.markWrittenUpTo(1, t, PAGE_TOKENS);
        assertThat(pool.checkRead(1, t, PAGE_TOKENS, PAGE_TOKENS + 1).violation())
                .isEqualTo(ReadCheck.Violation.OWNER_TAG_MISMATCH);
    }

    /**
     * The 2026 case: the pages were legitimately allocated to the reader - owner and epoch match - but
     * it never wrote them; they still hold another tenant's KV.
     */
    @Test
    void legitimatelyAllocatedButNeverWrittenSlotsAreRefused() {
        List<PageRef> victimOld = allAs(1, "other-tenant");
        pool.markWrittenUpTo(1, victimOld, PAGES * PAGE_TOKENS);
        pool.release(1, victimOld);

        List<PageRef> t = allAs(2, "reader");
        pool.markWritten(2, t.get(0), 1); // the one placeholder token that arrived
        ReadCheck c = pool.checkRead(2, t, 8 * PAGE_TOKENS / 2, 8 * PAGE_TOKENS / 2 + 1);
        assertThat(c.violation()).isEqualTo(ReadCheck.Violation.UNWRITTEN_SLOT_READ);
        assertThat(c.page()).isEqualTo(t.get(0).page());
        assertThat(c.details()).contains("only 1");

        // Partially written last page: the unwritten slot is caught too.
        pool.markWrittenUpTo(2, t, 6);
        ReadCheck partial = pool.checkRead(2, t, 7, 8);
        assertThat(partial.violation()).isEqualTo(ReadCheck.Violation.UNWRITTEN_SLOT_READ);
        assertThat(partial.page()).isEqualTo(t.get(1).page());
        assertThat(pool.checkRead(2, t, 6, 7).allowed()).isTrue();
    }

    @Test
    void withChecksOffTheSameReadGoesThrough() {
        KvPool unchecked = new KvPool("test-1", pool.storage(), LineageRecorder.none("test-1"), false);
        List<PageRef> old = unchecked.allocate(1, "a", PAGES);
        unchecked.markWrittenUpTo(1, old, PAGES * PAGE_TOKENS);
        unchecked.release(1, old);
        List<PageRef> t = unchecked.allocate(2, "b", PAGES);
        assertThat(unchecked.checkRead(2, t, 10, 11)).isEqualTo(ReadCheck.CLEAN);
        assertThat(pool.checkRead(2, List.of(), 10, 11).allowed()).as("the checked pool refuses").isFalse();
    }

    @Test
    void deferredPagesDrainOnlyWithTheMatchingGeneration() {
        List<PageRef> t = pool.allocate(5, "a", 2);
        pool.defer(5, t, 3);
        assertThat(pool.countByState().get(PageState.DEFERRED)).isEqualTo(2);
        assertThat(pool.freePages()).isEqualTo(PAGES - 2);
        assertThat(pool.allocate(6, "b", PAGES - 1)).as("deferred pages are not reusable").isNull();

        assertThat(pool.drain(5, t, 2)).as("stale ack").isFalse();
        assertThat(pool.drain(5, t, 4)).as("future generation").isFalse();
        assertThat(pool.drain(6, t, 3)).as("another request's ack").isFalse();
        assertThat(pool.countByState().get(PageState.DEFERRED)).as("untouched").isEqualTo(2);
        assertThat(pool.freePages()).isEqualTo(PAGES - 2);

        assertThat(pool.drain(5, t, 3)).isTrue();
        assertThat(pool.countByState().get(PageState.FREE)).isEqualTo(PAGES);
        assertThat(pool.drain(5, t, 3)).as("a repeated ack frees nothing twice").isFalse();
        assertThat(pool.freePages()).isEqualTo(PAGES);
    }

    @Test
    void preemptionRecordsEachPageThenReleasesItAndOnlyTakesOwnedPages() {
        List<dev.pagewarden.core.lineage.LineageEvent> events = new java.util.ArrayList<>();
        pool = new KvPool("test-1", pool.storage(), new LineageRecorder(events::add,
                new dev.pagewarden.core.lineage.LineageIds(), dev.pagewarden.core.spi.Clock.SYSTEM, "n", "test-1"));
        List<PageRef> running = pool.allocate(5, "a", 2);
        List<PageRef> inTransfer = pool.allocate(6, "b", 2);
        pool.defer(6, inTransfer, 1);
        events.clear();
        assertThatThrownBy(() -> pool.preempt(6, inTransfer)).as("deferred pages wait for their ack")
                .isInstanceOf(IllegalStateException.class);
        assertThatThrownBy(() -> pool.preempt(7, running)).as("another request's pages")
                .isInstanceOf(IllegalStateException.class);
        assertThat(events).isEmpty();

        pool.preempt(5, running);
        assertThat(events).extracting(e -> e.kind() + " " + e.page() + "@" + e.epoch()).containsExactly(
                "PREEMPT " + running.get(0).page() + "@" + running.get(0).epoch(),
                "PREEMPT " + running.get(1).page() + "@" + running.get(1).epoch(),
                "RELEASE " + running.get(0).page() + "@" + running.get(0).epoch(),
                "RELEASE " + running.get(1).page() + "@" + running.get(1).epoch());
        assertThat(pool.countByState().get(PageState.DEFERRED)).isEqualTo(2);
        assertThat(pool.freePages()).isEqualTo(PAGES - 2);
        List<PageRef> next = pool.allocate(8, "c", 2);
        assertThat(next).extracting(PageRef::epoch).as("a new epoch for the next owner")
                .doesNotContainAnyElementsOf(running.stream().map(PageRef::epoch).toList());
    }

    @Test
    void quarantineThenScrubZeroesThePageMemoryAndFreesIt() {
        List<PageRef> t = pool.allocate(8, "a", 2);
        long bytes = pool.layout().pageBytes();
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment junk = arena.allocate(bytes);
            for (long i = 0; i < bytes; i++) {
                junk.set(ValueLayout.JAVA_BYTE, i, (byte) (i * 31 + 7));
            }
            long[] writers = new long[PAGE_TOKENS];
            java.util.Arrays.fill(writers, 8);
            for (PageRef r : t) {
                pool.storage().writeSlots(r.page(), junk, PAGE_TOKENS, writers);
                assertThat(pool.storage().writers(r.page())).as("the copy brought its writers").containsOnly(8L);
            }
            pool.markWrittenUpTo(8, t, 2 * PAGE_TOKENS);
            pool.quarantine(8, t);
            assertThat(pool.countByState().get(PageState.QUARANTINED)).isEqualTo(2);
            assertThat(pool.freePages()).isEqualTo(PAGES - 2);
            assertThatThrownBy(() -> pool.release(8, t)).as("a quarantined page is not released normally")
                    .isInstanceOf(IllegalStateException.class);

            pool.scrubAndFree(8, t);
            MemorySegment back = arena.allocate(bytes);
            for (PageRef r : t) {
                back.fill((byte) 1);
                pool.storage().readPage(r.page(), back);
                assertThat(back.mismatch(arena.allocate(bytes))).as("page %d zeroed", r.page()).isEqualTo(-1L);
                assertThat(pool.storage().writers(r.page())).as("writer shadow reset by the scrub").containsOnly(0L);
            }
            assertThat(pool.countByState().get(PageState.FREE)).isEqualTo(PAGES);
            assertThat(pool.freePages()).isEqualTo(PAGES);
            assertThat(pool.allocate(9, "b", PAGES)).as("scrubbed pages are back in the free list").hasSize(PAGES);
        }
    }

    @Test
    void scrubRequiresQuarantineAndQuarantineRequiresTheOwner() {
        List<PageRef> t = pool.allocate(8, "a", 1);
        assertThatThrownBy(() -> pool.scrubAndFree(8, t)).isInstanceOf(IllegalStateException.class);
        assertThatThrownBy(() -> pool.quarantine(9, t)).isInstanceOf(IllegalStateException.class);
        assertThat(pool.info(t.get(0).page()).state()).isEqualTo(PageState.OWNED);
    }

    @Test
    void releaseByANonOwnerThrowsAndTouchesNothing() {
        List<PageRef> a = pool.allocate(1, "a", 2);
        List<PageRef> b = pool.allocate(2, "b", 1);
        List<PageRef> mixed = List.of(a.get(0), b.get(0));
        assertThatThrownBy(() -> pool.release(1, mixed)).isInstanceOf(IllegalStateException.class)
                .hasMessageContaining("request 1").hasMessageContaining("owner 2");
        assertThat(pool.info(a.get(0).page()).state()).as("all or nothing").isEqualTo(PageState.OWNED);
        assertThatThrownBy(() -> pool.release(2, a)).isInstanceOf(IllegalStateException.class);
        assertThatThrownBy(() -> pool.markWritten(2, a.get(0), 1)).isInstanceOf(IllegalStateException.class);
        pool.release(1, a);
        assertThatThrownBy(() -> pool.release(1, a)).as("double release").isInstanceOf(IllegalStateException.class);
        assertThat(pool.freePages()).isEqualTo(PAGES - 1);
    }

    @Test
    void ownedByChecksStateOwnerAndEpoch() {
        List<PageRef> a = pool.allocate(1, "a", 1);
        assertThat(pool.ownedBy(1, a.get(0))).isTrue();
        assertThat(pool.ownedBy(2, a.get(0))).isFalse();
        assertThat(pool.ownedBy(1, new PageRef(a.get(0).page(), a.get(0).epoch() + 1))).isFalse();
        pool.defer(1, a, 1);
        assertThat(pool.ownedBy(1, a.get(0))).as("deferred pages still belong to their request").isTrue();
        pool.drain(1, a, 1);
        assertThat(pool.ownedBy(1, a.get(0))).isFalse();
    }
}
