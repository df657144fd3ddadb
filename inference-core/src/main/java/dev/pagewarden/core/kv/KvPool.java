package dev.pagewarden.core.kv;

import dev.pagewarden.core.backend.KvStorage;

import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.List;

/**
 * One worker's paged KV pool: the page memory (on the backend's device) plus, beside it, each page's
 * metadata - state, owner request, tenant, an epoch bumped on every allocation, and how many token
 * slots were written in the current epoch. Freeing is O(1) and never touches page memory, as in
 * production engines; the metadata is what says whose data a page holds.
 */
public final class KvPool {
    private final String name;
    private final KvStorage storage;
    private final PageState[] state;
    private final long[] owner;
    private final String[] tenant;
    private final long[] epoch;
    private final int[] written;
    private final ArrayDeque<Integer> free = new ArrayDeque<>();
    private int peakUsed;

    public KvPool(String name, KvStorage storage) {
        this.name = name;
        this.storage = storage;
        int n = storage.pages();
        this.state = new PageState[n];
        this.owner = new long[n];
        this.tenant = new String[n];
        this.epoch = new long[n];
        this.written = new int[n];
        for (int p = 0; p < n; p++) {
            state[p] = PageState.FREE;
            free.add(p);
        }
    }

    public String name() {
        return name;
    }

    public KvStorage storage() {
        return storage;
    }

    public KvLayout layout() {
        return storage.layout();
    }

    public int capacityPages() {
        return state.length;
    }

    /** Tokens one request could hold if it had the whole pool. */
    public long capacityTokens() {
        return (long) state.length * layout().pageTokens();
    }

    public synchronized int freePages() {
        return free.size();
    }

    public synchronized int peakUsedPages() {
        return peakUsed;
    }

    public synchronized void resetPeak() {
        peakUsed = state.length - free.size();
    }

    /**
     * Gives {@code count} pages to a request, all or nothing; returns null when too few are free.
     * Each page's epoch is bumped and its written-slot count reset: the stale data stays, but no
     * slot of it counts as written by the new owner.
     */
    public synchronized List<PageRef> allocate(long requestId, String tenantId, int count) {
        if (count < 0) {
            throw new IllegalArgumentException("negative page count " + count);
        }
        if (free.size() < count) {
            return null;
        }
        List<PageRef> pages = new ArrayList<>(count);
        for (int i = 0; i < count; i++) {
            int p = free.poll();
            state[p] = PageState.OWNED;
            owner[p] = requestId;
            tenant[p] = tenantId;
            epoch[p]++;
            written[p] = 0;
            pages.add(new PageRef(p, epoch[p]));
        }
        peakUsed = Math.max(peakUsed, state.length - free.size());
        return pages;
    }

    /** Returns a request's pages to the free list; each must still be that request's, in that epoch. */
    public synchronized void release(long requestId, List<PageRef> pages) {
        for (PageRef ref : pages) {
            requireOwned(requestId, ref);
        }
        for (PageRef ref : pages) {
            state[ref.page()] = PageState.FREE;
            free.add(ref.page());
        }
    }

    /** Records that slots {@code [0, slotsEnd)} of a page now hold data its owner wrote. */
    public synchronized void markWritten(long requestId, PageRef ref, int slotsEnd) {
        requireOwned(requestId, ref);
        written[ref.page()] = Math.max(written[ref.page()], Math.min(slotsEnd, layout().pageTokens()));
    }

    /** Marks written every slot that positions {@code [0, endPos)} cover in a page table. */
    public synchronized void markWrittenUpTo(long requestId, List<PageRef> table, int endPos) {
        int pt = layout().pageTokens();
        for (int i = 0; i * pt < endPos; i++) {
            markWritten(requestId, table.get(i), Math.min(pt, endPos - i * pt));
        }
    }

    private void requireOwned(long requestId, PageRef ref) {
        int p = ref.page();
        if (state[p] != PageState.OWNED || owner[p] != requestId || epoch[p] != ref.epoch()) {
            throw new IllegalStateException(name + ": page " + p + " epoch " + ref.epoch() + " is not owned by request "
                    + requestId + " (state " + state[p] + ", owner " + owner[p] + ", epoch " + epoch[p] + ")");
        }
    }

    /** A consistent copy of one page's metadata. */
    public synchronized PageInfo info(int page) {
        return new PageInfo(page, state[page], owner[page], tenant[page], epoch[page], written[page]);
    }

    /** Metadata of one page at one moment. */
    public record PageInfo(int page, PageState state, long owner, String tenant, long epoch, int writtenSlots) {
    }
}
