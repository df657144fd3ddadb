package dev.pagewarden.core.kv;

import dev.pagewarden.core.kv.KvStorage;
import dev.pagewarden.core.lineage.LineageEvent.Kind;
import dev.pagewarden.core.lineage.LineageRecorder;

import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.EnumMap;
import java.util.List;
import java.util.Map;

/**
 * One worker's paged KV pool: the page memory (on the backend's device) plus, beside it, each page's
 * metadata - state, owner request, tenant, an epoch bumped on every allocation, and how many token
 * slots were written in the current epoch. Freeing is O(1) and never touches page memory, as in
 * production engines; the metadata is what says whose data a page holds, and every read is checked
 * against it ({@link #checkRead}).
 *
 * <pre>
 * FREE -> OWNED(request, tenant, epoch) -> FREE
 * OWNED -> DEFERRED(request, generation) -> FREE            (ack: no write in flight)
 *                                        -> QUARANTINED -> scrubbed -> FREE   (no ack in time)
 * OWNED -> QUARANTINED -> scrubbed -> FREE                  (failed handoff)
 * OWNED -> CACHED(writer, scope, epoch) -> FREE              (a full prompt page kept as a prefix; evicted LRU)
 * </pre>
 *
 * <p>A cached page keeps its writer as owner and its epoch; its tag also names its scope ({@link CacheScope}).
 * Readers of that scope take a reference ({@link #reuse}) and give it back ({@link #unref}); nobody writes
 * it. When an allocation finds too few free pages, cached pages no reader holds are evicted, least recently
 * used first, before the allocation is refused.
 *
 * <p>Epochs never repeat for a (node, pool, page), not even across restarts, without state kept on disk:
 * every page starts at the pool's boot base, the wall clock at construction in microseconds since
 * 1970, and its epoch only grows. A later start's base is above every epoch an earlier one reached as
 * long as no page was allocated more than once per microsecond the earlier start ran on average (one
 * allocation serves a request: far longer) and the clock did not step back across the restart. Epochs
 * stay below 2^53 until about 2255, so they are exact wherever receipts and audit answers are read as
 * JSON numbers (a JavaScript number holds integers exactly only up to 2^53).
 *
 * <p>The read checks are on unless the pool was built without them ({@link #KvPool(String, KvStorage,
 * LineageRecorder, boolean)}, the replay lab's "detectors off" twin, through the engine's fault hooks).
 */
public final class KvPool implements PrefillPages, DecodePages, GuardedPages, IntakePages {
    private final String name;
    private final KvStorage storage;
    private final int pageTokens;
    private final PageState[] state;
    private final long[] owner;
    private final String[] tenant;
    private final long[] epoch;
    private final int[] written;
    /** Written slots not yet reported as lineage, [pendFrom, pendTo): reported as one WRITE when the page fills or is let go. */
    private final int[] pendFrom;
    private final int[] pendTo;
    private final LineageRecorder lineage;
    /** For DEFERRED pages: the transfer generation whose ack releases them. */
    private final int[] deferredGeneration;
    /** For CACHED pages: the scope id ({@link CacheScope#id}), its digest, the prefix key, the page's tokens, readers holding it. */
    private final String[] scope;
    private final long[] scopeDigest;
    private final String[] cacheKey;
    private final int[][] cachedTokens;
    private final int[] refs;
    /** Cached pages by prefix key. */
    private final java.util.HashMap<String, Integer> cacheIndex = new java.util.HashMap<>();
    /** Cached pages no reader holds, least recently used first: what eviction takes. */
    private final java.util.LinkedHashSet<Integer> evictable = new java.util.LinkedHashSet<>();
    private long evictions;
    private final ArrayDeque<Integer> free = new ArrayDeque<>();
    private int peakUsed;
    private final boolean checks;
    /** The largest boot base: below 2^53 with room for 2^32 allocations of a page after it. */
    static final long MAX_EPOCH_BASE = (1L << 53) - (1L << 32);

    public KvPool(String name, KvStorage storage) {
        this(name, storage, LineageRecorder.none(name));
    }

    /** A pool whose every page life step is recorded by {@code lineage} (exactly one event per step). */
    public KvPool(String name, KvStorage storage, LineageRecorder lineage) {
        this(name, storage, lineage, true);
    }

    /** {@code checks=false}: {@link #checkRead} lets every read through (what the engine looks like without its detectors). */
    public KvPool(String name, KvStorage storage, LineageRecorder lineage, boolean checks) {
        this(name, storage, lineage, checks, bootEpochBase(java.time.Instant.now()));
    }

    /** As above with an explicit epoch base: the first allocation of every page gets epoch {@code epochBase + 1}. */
    public KvPool(String name, KvStorage storage, LineageRecorder lineage, boolean checks, long epochBase) {
        if (epochBase < 0) {
            throw new IllegalArgumentException("negative epoch base " + epochBase);
        }
        this.name = name;
        this.checks = checks;
        this.lineage = lineage;
        this.storage = storage;
        this.pageTokens = storage.layout().pageTokens();
        int n = storage.pages();
        this.state = new PageState[n];
        this.owner = new long[n];
        this.tenant = new String[n];
        this.epoch = new long[n];
        this.written = new int[n];
        this.pendFrom = new int[n];
        this.pendTo = new int[n];
        this.deferredGeneration = new int[n];
        this.scope = new String[n];
        this.scopeDigest = new long[n];
        this.cacheKey = new String[n];
        this.cachedTokens = new int[n][];
        this.refs = new int[n];
        java.util.Arrays.fill(epoch, epochBase);
        for (int p = n - 1; p >= 0; p--) {
            state[p] = PageState.FREE;
            free.push(p);
        }
    }

    /** The epoch base of a pool built at wall-clock time {@code now}: microseconds since 1970. */
    public static long bootEpochBase(java.time.Instant now) {
        long micros = Math.addExact(Math.multiplyExact(now.getEpochSecond(), 1_000_000L), now.getNano() / 1_000);
        if (micros < 0 || micros > MAX_EPOCH_BASE) {
            throw new IllegalArgumentException("wall clock " + now + " is outside the range page epochs are built from");
        }
        return micros;
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
        return (long) state.length * pageTokens;
    }

    /** Whether reads are checked (false only in the replay lab's "detectors off" twin). */
    public boolean checksOn() {
        return checks;
    }

    public synchronized int freePages() {
        return free.size();
    }

    public synchronized int peakUsedPages() {
        return peakUsed;
    }

    public synchronized Map<PageState, Integer> countByState() {
        Map<PageState, Integer> counts = new EnumMap<>(PageState.class);
        for (PageState s : PageState.values()) {
            counts.put(s, 0);
        }
        for (PageState s : state) {
            counts.merge(s, 1, Integer::sum);
        }
        return counts;
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
        if (free.size() + evictable.size() < count) {
            return null;
        }
        while (free.size() < count) {
            evict(evictable.getFirst());
        }
        List<PageRef> pages = new ArrayList<>(count);
        for (int i = 0; i < count; i++) {
            int p = free.pop();
            state[p] = PageState.OWNED;
            owner[p] = requestId;
            tenant[p] = tenantId;
            epoch[p]++;
            written[p] = 0;
            pendFrom[p] = 0;
            pendTo[p] = 0;
            pages.add(new PageRef(p, epoch[p]));
            lineage.page(Kind.ALLOCATE, p, epoch[p], requestId, tenantId);
        }
        peakUsed = Math.max(peakUsed, state.length - free.size());
        return pages;
    }

    /** Returns a request's pages to the free list; each must still be that request's, in that epoch. */
    public synchronized void release(long requestId, List<PageRef> pages) {
        for (PageRef ref : pages) {
            requireState(requestId, ref, PageState.OWNED);
        }
        for (PageRef ref : pages) {
            flushWrites(ref.page());
            lineage.page(Kind.RELEASE, ref.page(), ref.epoch(), requestId, tenant[ref.page()]);
            toFree(ref.page());
        }
    }

    /**
     * Takes a running request's pages back so that others can grow (a preemption). Only a request whose transfer
     * is done and whose decode step is not running may lose its pages this way - no write of it can land any more -
     * so each page is recorded preempted and released at once; the next owner gets a new epoch, as always.
     */
    public synchronized void preempt(long requestId, List<PageRef> pages) {
        for (PageRef ref : pages) {
            requireState(requestId, ref, PageState.OWNED);
        }
        for (PageRef ref : pages) {
            flushWrites(ref.page());
            lineage.page(Kind.PREEMPT, ref.page(), ref.epoch(), requestId, tenant[ref.page()]);
        }
        release(requestId, pages);
    }

    /**
     * Keeps a request's full, written prompt page as a read-only cached prefix page of {@code cacheScope}
     * under {@code key} (see {@link PrefixKeys}), with the page's {@code tokens} to compare on a hit.
     * Returns false, leaving the page the request's own, when the key is cached already (a request of
     * the same scope cached the same prefix first) or the page is not full (only full pages are cached);
     * the caller then releases it.
     */
    public synchronized boolean keep(long requestId, PageRef ref, CacheScope cacheScope, String key, int[] tokens) {
        requireState(requestId, ref, PageState.OWNED);
        int p = ref.page();
        if (written[p] != pageTokens || tokens.length != pageTokens || cacheIndex.containsKey(key)) {
            return false;
        }
        flushWrites(p);
        state[p] = PageState.CACHED;
        scope[p] = cacheScope.id();
        scopeDigest[p] = cacheScope.digest();
        cacheKey[p] = key;
        cachedTokens[p] = tokens.clone();
        refs[p] = 0;
        cacheIndex.put(key, p);
        evictable.addLast(p);
        lineage.prefix(Kind.CACHE, p, epoch[p], requestId, tenant[p], pageTokens, scopeDigest[p]);
        return true;
    }

    /**
     * Pages for a prompt whose first full pages may be cached: the longest run of cached pages of
     * {@code cacheScope} under {@code keys} (one per full page, in order, whose tokens equal the prompt's)
     * is referenced by the reader until {@link #unref}, so no eviction takes it meanwhile, and each reuse
     * is recorded (REUSE); then {@code count} minus that many pages are allocated as {@link #allocate}
     * does. All or nothing: null, touching nothing, when too few pages are free or evictable. A key is
     * only ever looked up in the reader's own scope, so another scope's page never matches.
     */
    public synchronized PrefixGrant allocateWithPrefix(long requestId, String tenantId, CacheScope cacheScope,
                                                       List<String> keys, int[] tokens, int count) {
        PrefixGrant grant = grantWithPrefix(requestId, tenantId, cacheScope, keys, tokens, count);
        return grant == null ? null : new PrefixGrant(grant.reused(), grant.own(), grant.writers(),
                recordReuse(requestId, tenantId, cacheScope, grant.reused()));
    }

    /**
     * As {@link #allocateWithPrefix}, with the pages looked up in {@code lookupScope} under its {@code keys}, and
     * no REUSE recorded yet: the reader records them by {@link #recordReuse} once its read of them passed the
     * check, as a decode's first read of a page is recorded (a refused read reused nothing).
     */
    public synchronized PrefixGrant grantWithPrefix(long requestId, String tenantId, CacheScope lookupScope,
                                                    List<String> keys, int[] tokens, int count) {
        List<Integer> hits = cachedRun(lookupScope.id(), keys, tokens, count);
        int hitsEvictable = 0;
        for (int p : hits) {
            hitsEvictable += refs[p] == 0 ? 1 : 0;
        }
        int need = count - hits.size();
        if (free.size() + evictable.size() - hitsEvictable < need) {
            return null;
        }
        List<PageRef> reused = new ArrayList<>(hits.size());
        long[] writers = new long[hits.size()];
        for (int i = 0; i < hits.size(); i++) {
            int p = hits.get(i);
            refs[p]++;
            evictable.remove(p);
            reused.add(new PageRef(p, epoch[p]));
            writers[i] = owner[p];
        }
        return new PrefixGrant(reused, allocate(requestId, tenantId, need), writers, new long[hits.size()]);
    }

    /**
     * Records a REUSE for each of the cached pages {@code reused} that the reader holds, with the reader's own scope
     * {@code readerScope} (an audit compares it with the scope the page was cached in); returns the events' ids.
     */
    public synchronized long[] recordReuse(long requestId, String tenantId, CacheScope readerScope, List<PageRef> reused) {
        long readerDigest = readerScope.digest();
        long[] events = new long[reused.size()];
        for (int i = 0; i < reused.size(); i++) {
            PageRef ref = reused.get(i);
            int p = ref.page();
            if (state[p] != PageState.CACHED || epoch[p] != ref.epoch() || refs[p] < 1) {
                throw new IllegalStateException(describe(p, requestId, ref.epoch(), "cached and referenced"));
            }
            events[i] = lineage.prefix(Kind.REUSE, p, epoch[p], requestId, tenantId, pageTokens, readerDigest);
        }
        return events;
    }

    /** How many leading pages of a prompt are cached in {@code cacheScope} under {@code keys} (looked up, not taken). */
    public synchronized int cachedPrefixPages(CacheScope cacheScope, List<String> keys, int[] tokens) {
        return cachedRun(cacheScope.id(), keys, tokens, keys.size()).size();
    }

    /** The leading cached pages of scope {@code scopeId} under {@code keys} whose tokens equal the prompt's. */
    private List<Integer> cachedRun(String scopeId, List<String> keys, int[] tokens, int count) {
        List<Integer> hits = new ArrayList<>();
        for (int i = 0; i < keys.size() && i < count; i++) {
            Integer p = cacheIndex.get(keys.get(i));
            if (p == null || state[p] != PageState.CACHED || !scopeId.equals(scope[p])
                    || !Arrays.equals(cachedTokens[p], 0, pageTokens, tokens, i * pageTokens, (i + 1) * pageTokens)) {
                break;
            }
            hits.add(p);
        }
        return hits;
    }

    /**
     * A prompt's pages: {@code reused} cached prefix pages (read-only, referenced) followed by {@code own}
     * pages allocated to the request; the page table is their concatenation. For each reused page, the
     * request that wrote it and the id of the REUSE lineage event (0 without lineage).
     */
    public record PrefixGrant(List<PageRef> reused, List<PageRef> own, long[] writers, long[] reuseEvents) {
        public PrefixGrant {
            reused = List.copyOf(reused);
            own = List.copyOf(own);
            writers = writers.clone();
            reuseEvents = reuseEvents.clone();
        }

        /** Pages of a request's own only. */
        public PrefixGrant(List<PageRef> reused, List<PageRef> own) {
            this(reused, own, new long[reused.size()], new long[reused.size()]);
        }

        @Override
        public long[] writers() {
            return writers.clone();
        }

        @Override
        public long[] reuseEvents() {
            return reuseEvents.clone();
        }

        public List<PageRef> table() {
            List<PageRef> all = new ArrayList<>(reused);
            all.addAll(own);
            return List.copyOf(all);
        }
    }

    /** A reader is done with cached pages it took by {@link #reuse}; one no reader holds becomes evictable (most recently used). */
    public synchronized void unref(long requestId, List<PageRef> pages) {
        for (PageRef ref : pages) {
            int p = ref.page();
            if (state[p] != PageState.CACHED || epoch[p] != ref.epoch() || refs[p] < 1) {
                throw new IllegalStateException(describe(p, requestId, ref.epoch(), "cached and referenced"));
            }
        }
        for (PageRef ref : pages) {
            int p = ref.page();
            if (--refs[p] == 0) {
                evictable.addLast(p);
            }
        }
    }

    /** A cached page no reader holds goes back to the free list; its writer's RELEASE closes its epoch. */
    private void evict(int p) {
        evictable.remove(p);
        cacheIndex.remove(cacheKey[p]);
        lineage.page(Kind.RELEASE, p, epoch[p], owner[p], tenant[p]);
        scope[p] = null;
        cacheKey[p] = null;
        cachedTokens[p] = null;
        evictions++;
        toFree(p);
    }

    /** Pages held as cached prefixes now (referenced or not). */
    public synchronized int cachedPages() {
        return cacheIndex.size();
    }

    /** Cached pages evicted since the pool was built. */
    public synchronized long cacheEvictions() {
        return evictions;
    }

    /**
     * Parks an aborted request's pages while writes of transfer {@code generation} may still land:
     * they stay out of the free list until {@link #drain} (ack) or {@link #quarantine} (timeout).
     */
    public synchronized void defer(long requestId, List<PageRef> pages, int generation) {
        for (PageRef ref : pages) {
            requireState(requestId, ref, PageState.OWNED);
        }
        for (PageRef ref : pages) {
            flushWrites(ref.page());
            state[ref.page()] = PageState.DEFERRED;
            deferredGeneration[ref.page()] = generation;
            lineage.generation(Kind.DEFER, ref.page(), ref.epoch(), requestId, tenant[ref.page()], generation);
        }
    }

    /**
     * The ack for (request, generation) arrived: no write is in flight, the pages may be reused.
     * Returns false, touching nothing, when the ack is stale (another generation) or the pages are
     * no longer deferred for that request.
     */
    public synchronized boolean drain(long requestId, List<PageRef> pages, int generation) {
        for (PageRef ref : pages) {
            int p = ref.page();
            if (state[p] != PageState.DEFERRED || owner[p] != requestId || epoch[p] != ref.epoch()
                    || deferredGeneration[p] != generation) {
                return false;
            }
        }
        for (PageRef ref : pages) {
            lineage.generation(Kind.DRAIN, ref.page(), ref.epoch(), requestId, tenant[ref.page()], generation);
            toFree(ref.page());
        }
        return true;
    }

    /** Takes pages out of service (failed handoff, or a deferred release that timed out). */
    public synchronized void quarantine(long requestId, List<PageRef> pages) {
        for (PageRef ref : pages) {
            int p = ref.page();
            if (owner[p] != requestId || epoch[p] != ref.epoch()
                    || (state[p] != PageState.OWNED && state[p] != PageState.DEFERRED)) {
                throw new IllegalStateException(describe(p, requestId, ref.epoch(), "owned or deferred"));
            }
        }
        for (PageRef ref : pages) {
            flushWrites(ref.page());
            state[ref.page()] = PageState.QUARANTINED;
            lineage.page(Kind.QUARANTINE, ref.page(), ref.epoch(), requestId, tenant[ref.page()]);
        }
    }

    /** Zeroes a quarantined page's memory, then frees it: the only path by which such a page returns. */
    public void scrubAndFree(long requestId, List<PageRef> pages) {
        synchronized (this) {
            for (PageRef ref : pages) {
                requireState(requestId, ref, PageState.QUARANTINED);
            }
        }
        for (PageRef ref : pages) {
            storage.scrubPage(ref.page());
        }
        synchronized (this) {
            for (PageRef ref : pages) {
                int p = ref.page();
                lineage.page(Kind.SCRUB, p, ref.epoch(), requestId, tenant[p]);
                toFree(p);
            }
        }
    }

    /**
     * Takes out of service, scrubs and frees those of {@code pages} that {@code requestId} still owns
     * (after an isolation violation: whatever the request touched is suspect, whatever it no longer
     * owns is someone else's and is left alone).
     */
    public void quarantineAndScrub(long requestId, List<PageRef> pages) {
        List<PageRef> owned = pages.stream().filter(p -> ownedBy(requestId, p)).toList();
        quarantine(requestId, owned);
        scrubAndFree(requestId, owned);
    }

    /**
     * LIFO: the page freed last is reused first (warm in cache, as engines prefer). It is also the
     * worst case for a stale-data bug - the checks must hold under it, and the lab relies on it.
     */
    private void toFree(int p) {
        state[p] = PageState.FREE;
        free.push(p);
    }

    /** Records that slots {@code [0, slotsEnd)} of a page now hold data its owner wrote. */
    public synchronized void markWritten(long requestId, PageRef ref, int slotsEnd) {
        markWritten(requestId, ref, slotsEnd, false);
    }

    /**
     * Records written slots up to {@code slotsEnd}, from the page's current written count on.
     * {@code viaTransfer}: they arrived in a transfer frame, whose TRANSFER_IN lineage event already
     * reports them.
     */
    public synchronized void markWritten(long requestId, PageRef ref, int slotsEnd, boolean viaTransfer) {
        markSlots(requestId, ref, written[ref.page()], slotsEnd, viaTransfer);
    }

    /**
     * Records that the owner wrote slots {@code [from, to)} of a page - exactly those: a slot below
     * {@code from} that nobody wrote stays unattributed in the lineage, whatever the written count
     * says. Reported as one WRITE event per page when it fills up or its owner lets go of it (one
     * event per page, not per token), or earlier if a later write is not contiguous.
     */
    private void markSlots(long requestId, PageRef ref, int from, int to, boolean viaTransfer) {
        requireState(requestId, ref, PageState.OWNED);
        int p = ref.page();
        int end = Math.min(to, pageTokens);
        if (from >= end) {
            return;
        }
        written[p] = Math.max(written[p], end);
        if (viaTransfer) {
            return;
        }
        if (pendFrom[p] == pendTo[p]) {
            pendFrom[p] = from;
            pendTo[p] = end;
        } else if (from <= pendTo[p] && end >= pendFrom[p]) {
            pendFrom[p] = Math.min(pendFrom[p], from);
            pendTo[p] = Math.max(pendTo[p], end);
        } else {
            flushWrites(p);
            pendFrom[p] = from;
            pendTo[p] = end;
        }
        if (end == pageTokens) {
            flushWrites(p);
        }
    }

    /**
     * Reports now the written-but-unreported slots of a request's pages (those still its own in that
     * epoch), so that lineage emitted next - a reader's final range - comes after every write it covers.
     */
    public synchronized void reportWrites(long requestId, List<PageRef> pages) {
        for (PageRef ref : pages) {
            int p = ref.page();
            if (state[p] == PageState.OWNED && owner[p] == requestId && epoch[p] == ref.epoch()) {
                flushWrites(p);
            }
        }
    }

    /** Reports the owner's written-but-unreported slots of a page as one WRITE event. */
    private void flushWrites(int p) {
        if (pendTo[p] > pendFrom[p]) {
            lineage.slots(Kind.WRITE, p, epoch[p], owner[p], tenant[p], pendFrom[p], pendTo[p]);
        }
        pendFrom[p] = 0;
        pendTo[p] = 0;
    }

    /** Marks written every slot that positions {@code [0, endPos)} cover in a page table (from each page's written count on). */
    public synchronized void markWrittenUpTo(long requestId, List<PageRef> table, int endPos) {
        for (int i = 0; i * pageTokens < endPos; i++) {
            markWritten(requestId, table.get(i), Math.min(pageTokens, endPos - i * pageTokens));
        }
    }

    /** Marks written exactly the slots of positions {@code [fromPos, toPos)} (a decode step's own writes). */
    public synchronized void markPositionsWritten(long requestId, List<PageRef> table, int fromPos, int toPos) {
        for (int pos = fromPos; pos < toPos; ) {
            int i = pos / pageTokens;
            int slot = pos % pageTokens;
            int n = Math.min(pageTokens - slot, toPos - pos);
            markSlots(requestId, table.get(i), slot, slot + n, false);
            pos += n;
        }
    }

    /** The pool's lineage recorder (the transport and the decode side report transfers and reads through it). */
    public LineageRecorder lineage() {
        return lineage;
    }



    /** Whether a page is, right now, owned by (request, epoch). Used before applying a transfer write. */
    public synchronized boolean ownedBy(long requestId, PageRef ref) {
        int p = ref.page();
        return (state[p] == PageState.OWNED || state[p] == PageState.DEFERRED) && owner[p] == requestId
                && epoch[p] == ref.epoch();
    }

    /**
     * Checks, before a step, every page a sequence will read: positions {@code [0, startPos)} must
     * be in pages that are owned by the reader in the epoch of its page table and whose slots were
     * written in that epoch; the pages of positions {@code [startPos, endPos)}, which the step
     * itself writes first, must be owned. The written-slot check is what catches the 2026 bug: the
     * stale pages were legitimately allocated to the reader - tags matched - but never written by it.
     */
    public synchronized ReadCheck checkRead(long requestId, List<PageRef> table, int startPos, int endPos) {
        return checkRead(requestId, null, table, startPos, endPos);
    }

    /**
     * As above for a reader of cache scope {@code readerScope} ({@link CacheScope#id}; null: none): a cached page
     * in its table passes only if it is of exactly that scope, in the epoch of the table, and wholly below
     * {@code startPos} (read, never written). Anyone else's read of it is refused as an owner tag mismatch.
     */
    @Override
    public synchronized ReadCheck checkRead(long requestId, String readerScope, List<PageRef> table, int startPos,
                                            int endPos) {
        if (!checks) {
            return ReadCheck.CLEAN;
        }
        int pagesRead = (endPos + pageTokens - 1) / pageTokens;
        if (table.size() < pagesRead) {
            return new ReadCheck(ReadCheck.Violation.OWNER_TAG_MISMATCH, -1, 0, "page table has " + table.size()
                    + " pages, positions up to " + endPos + " need " + pagesRead);
        }
        for (int i = 0; i < pagesRead; i++) {
            PageRef ref = table.get(i);
            int p = ref.page();
            if (state[p] == PageState.FREE) {
                return new ReadCheck(ReadCheck.Violation.FREE_PAGE_READ, p, ref.epoch(),
                        describe(p, requestId, ref.epoch(), "owned"));
            }
            if (state[p] == PageState.CACHED) {
                if (readerScope == null || !readerScope.equals(scope[p]) || epoch[p] != ref.epoch()
                        || (i + 1) * pageTokens > startPos) {
                    return new ReadCheck(ReadCheck.Violation.OWNER_TAG_MISMATCH, p, ref.epoch(), name + ": page " + p
                            + " is a cached prefix page of another scope or epoch (epoch " + epoch[p] + ")"
                            + ", or one the step would write; request " + requestId + " expected epoch " + ref.epoch());
                }
                continue;
            }
            if (state[p] != PageState.OWNED || owner[p] != requestId || epoch[p] != ref.epoch()) {
                return new ReadCheck(ReadCheck.Violation.OWNER_TAG_MISMATCH, p, ref.epoch(),
                        describe(p, requestId, ref.epoch(), "owned"));
            }
            int needWritten = Math.min(pageTokens, startPos - i * pageTokens);
            if (needWritten > written[p]) {
                return new ReadCheck(ReadCheck.Violation.UNWRITTEN_SLOT_READ, p, ref.epoch(), "page " + p + " epoch "
                        + ref.epoch() + ": reading slots [0, " + needWritten + ") but only " + written[p]
                        + " were written in this epoch");
            }
        }
        return ReadCheck.CLEAN;
    }

    private void requireState(long requestId, PageRef ref, PageState expected) {
        int p = ref.page();
        if (state[p] != expected || owner[p] != requestId || epoch[p] != ref.epoch()) {
            throw new IllegalStateException(describe(p, requestId, ref.epoch(), expected.name().toLowerCase()));
        }
    }

    private String describe(int p, long requestId, long expectedEpoch, String expectedState) {
        return name + ": page " + p + " expected " + expectedState + " by request " + requestId + " epoch "
                + expectedEpoch + ", found " + state[p] + " owner " + owner[p] + " epoch " + epoch[p];
    }

    /** The page's current epoch. */
    public synchronized long epochOf(int page) {
        return epoch[page];
    }

    /** A consistent copy of one page's metadata. */
    public synchronized PageInfo info(int page) {
        return new PageInfo(page, state[page], owner[page], tenant[page], epoch[page], written[page], scope[page]);
    }

    /**
     * The metadata of every page, copied in one consistent moment: what a backend may check reads
     * against on its device. A copy, not a view: a backend reads it on its own (device) thread, which
     * must never need this pool's lock - a transfer landing may hold that lock's neighbours while it
     * waits for that very thread.
     */
    public synchronized PageTags tags() {
        int[] all = new int[state.length];
        Arrays.setAll(all, i -> i);
        return tags(all);
    }

    /** As {@link #tags()}, for just {@code pages} (those a step touches); asking it about another page fails. */
    public synchronized PageTags tags(int[] pages) {
        int[] sorted = Arrays.stream(pages).sorted().distinct().toArray();
        PageInfo[] infos = new PageInfo[sorted.length];
        for (int i = 0; i < sorted.length; i++) {
            infos[i] = info(sorted[i]);
        }
        return new TagSnapshot(sorted, infos, checks);
    }

    /** An immutable copy of some pages' metadata; {@link #info} of a page outside it fails rather than guess. */
    private record TagSnapshot(int[] pages, PageInfo[] infos, boolean checksOn) implements PageTags {
        @Override
        public PageInfo info(int page) {
            int i = Arrays.binarySearch(pages, page);
            if (i < 0) {
                throw new IllegalArgumentException("page " + page + " is not among the " + pages.length
                        + " pages whose tags were read for this step");
            }
            return infos[i];
        }
    }

    /**
     * Metadata of one page at one moment.
     *
     * @param owner the owning request; for a CACHED page its writer
     * @param scope for a CACHED page the scope that may read it ({@link CacheScope#id}); null otherwise
     */
    public record PageInfo(int page, PageState state, long owner, String tenant, long epoch, int writtenSlots,
                           String scope) {
        public PageInfo(int page, PageState state, long owner, String tenant, long epoch, int writtenSlots) {
            this(page, state, owner, tenant, epoch, writtenSlots, null);
        }
    }
}
