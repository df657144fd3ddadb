package dev.pagewarden.core.prefill;

import dev.pagewarden.core.backend.SequenceStep;
import dev.pagewarden.core.context.EngineContext;
import dev.pagewarden.core.kv.CacheScope;
import dev.pagewarden.core.kv.KvPool.PrefixGrant;
import dev.pagewarden.core.kv.PrefillPages;
import dev.pagewarden.core.kv.PageRef;
import dev.pagewarden.core.kv.PrefixKeys;
import dev.pagewarden.core.kv.ReadCheck;
import dev.pagewarden.core.policy.PrefixLookup;
import dev.pagewarden.core.policy.PromptOverflow;
import dev.pagewarden.core.receipt.ReusedPage;
import dev.pagewarden.core.step.StepGuard;
import dev.pagewarden.core.request.PrefixCaching;
import dev.pagewarden.core.request.RequestState;
import dev.pagewarden.core.sequence.PrefillView;
import dev.pagewarden.core.safety.SafetyMonitor;
import dev.pagewarden.core.spi.EngineMetrics;
import dev.pagewarden.core.transfer.KvTransport;
import dev.pagewarden.core.transfer.TransferJob;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import java.util.function.Consumer;
import java.util.function.LongSupplier;

/**
 * Runs prompts: writes each prompt's KV into this worker's own pool (in chunks, so a long prompt
 * does not hold the cores for too long), samples the first output token from the last prompt
 * position, and hands the pages to the transport. Source pages stay owned until the sender's ack:
 * only then can no frame of the transfer still be reading them.
 *
 * <p>With a prefix cache ({@link #prefixCache}), a prompt's leading full pages that a request of the same
 * scope left cached are referenced instead of computed, and the prompt is prefilled from the first
 * position after them (attending over the cached pages, which only a step of that scope may read); all of
 * its pages go to the transport as usual. After an accepted transfer its own full prompt pages stay in
 * the pool as cached pages of its scope instead of being released.
 *
 * <p>Runs on a thread of its own ({@link #run}), or one request per {@link #tick} when the engine is
 * driven step by step.
 */
public final class PrefillWorker<S extends PrefillView> implements Runnable {
    private final StepGuard guard;
    private final PrefillPages pool;
    private final int vocabSize;
    private final KvTransport transport;
    private final int chunkTokens;
    /** What to do with a prompt over the pool (admission keeps such prompts out of a whole engine). */
    private final PromptOverflow overflow;
    private final PrefixLookup lookup;
    private final SafetyMonitor safety;
    /** Called for a request this worker gives up on (aborted or failed) so its decode reservation is returned. */
    private final Consumer<S> releaseReservation;
    /** Called before a transfer starts, so the receiver knows what to expect. */
    private final Consumer<S> expectTransfer;
    private final EngineMetrics metrics;
    private final LongSupplier clock;
    private final BlockingQueue<S> queue = new LinkedBlockingQueue<>();
    private final Object pagesFreed = new Object();
    private volatile boolean running = true;
    /** Stepped mode: the request at the head of the queue that waits for prefill pages. */
    private S waitingForPages;
    /** The model id prefix keys are seeded with; null: no prefix cache. */
    private volatile String cacheModel;
    /** Requests in flight that use the prefix cache: their scope, page keys and reused pages. */
    private final Map<Long, Reuse> reuses = new ConcurrentHashMap<>();
    private long evictionsReported;

    /** A request's use of the prefix cache: its scope, the keys of its full pages, the cached pages it read. */
    private record Reuse(CacheScope scope, List<String> keys, int[] prompt, List<PageRef> reused) {
    }

    public PrefillWorker(StepGuard guard, int vocabSize, KvTransport transport, int chunkTokens, EngineContext context,
                         Consumer<S> expectTransfer, Consumer<S> releaseReservation) {
        if (chunkTokens < 1) {
            throw new IllegalArgumentException("prefill chunk must be >= 1 token, got " + chunkTokens);
        }
        this.guard = guard;
        this.pool = guard.pool();
        this.vocabSize = vocabSize;
        this.transport = transport;
        this.chunkTokens = chunkTokens;
        this.overflow = context.hooks().promptOverflow();
        this.lookup = context.hooks().prefixLookup();
        this.safety = context.safety();
        this.expectTransfer = expectTransfer;
        this.releaseReservation = releaseReservation;
        this.metrics = context.metrics();
        this.clock = context.clock()::nanoTime;
    }

    /**
     * Turns the prefix cache on: prompt pages are keyed with {@code modelId} (and each request's scope and
     * template, see {@link PrefixKeys}). Call before the first request.
     */
    public PrefillWorker<S> prefixCache(String modelId) {
        this.cacheModel = modelId;
        return this;
    }

    /** Requests queued here, not yet prefilled. */
    public int pending() {
        return queue.size() + (waitingForPages == null ? 0 : 1);
    }

    /** Queues a request whose decode pages are reserved. */
    public void enqueue(S seq) {
        queue.add(seq);
    }

    public void stop() {
        running = false;
    }

    @Override
    public void run() {
        while (running) {
            S seq;
            try {
                seq = queue.poll(50, TimeUnit.MILLISECONDS);
            } catch (InterruptedException e) {
                return;
            }
            if (seq == null) {
                continue;
            }
            try {
                int[] prompt = prompt(seq);
                if (prompt == null) {
                    continue;
                }
                PrefixGrant pages = allocateWaiting(seq, prompt);
                if (pages == null) {
                    giveUp(seq, seq::abortNow);
                    continue;
                }
                prefill(seq, prompt, pages);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                return;
            } catch (RuntimeException e) {
                giveUp(seq, () -> seq.fail("prefill_failed", "prefill failed: " + e.getMessage()));
            }
        }
    }

    /**
     * Stepped mode: prefills the request at the head of the queue if the pool has room for it now (a
     * request that must wait stays at the head, as on the worker's thread). Returns whether one ran.
     */
    public boolean tick() {
        S seq = waitingForPages != null ? waitingForPages : queue.poll();
        waitingForPages = null;
        if (seq == null) {
            return false;
        }
        try {
            int[] prompt = prompt(seq);
            if (prompt == null) {
                return true;
            }
            PrefixGrant pages = allocate(seq, prompt);
            if (pages == null) {
                if (seq.abortRequested()) {
                    giveUp(seq, seq::abortNow);
                } else {
                    waitingForPages = seq;
                }
                return false;
            }
            prefill(seq, prompt, pages);
        } catch (RuntimeException e) {
            giveUp(seq, () -> seq.fail("prefill_failed", "prefill failed: " + e.getMessage()));
        }
        return true;
    }

    /**
     * The tokens to prefill - the prompt, or after a preemption the prompt and the tokens generated so far but the
     * last - or null when the request ended here (aborted, or a prompt no pool can hold). */
    private int[] prompt(S seq) {
        if (seq.abortRequested()) {
            giveUp(seq, seq::abortNow);
            return null;
        }
        int[] full = seq.prefillTokens();
        if (pool.layout().pagesFor(full.length) <= pool.capacityPages()) {
            return full;
        }
        return switch (overflow.atPrefill(full)) {
            case PromptOverflow.Refuse r -> {
                giveUp(seq, () -> seq.fail("context_length_exceeded", r.message()));
                yield null;
            }
            case PromptOverflow.Prefill p -> p.tokens();
        };
    }

    /**
     * The prompt's prefill pages, all or nothing (null when the pool has too few free or evictable): with the
     * prefix cache, its leading cached pages of its scope, referenced, then pages of its own for the rest.
     */
    private PrefixGrant allocate(S seq, int[] prompt) {
        int count = pool.layout().pagesFor(prompt.length);
        PrefixCaching caching = seq.request().caching();
        String model = cacheModel;
        if (model == null || !caching.enabled()) {
            List<PageRef> own = pool.allocate(seq.id(), seq.tenant(), count);
            return own == null ? null : new PrefixGrant(List.of(), own);
        }
        int pageTokens = pool.layout().pageTokens();
        CacheScope scope = new CacheScope(seq.tenant(), caching.key());
        List<String> keys = PrefixKeys.chain(model, scope, caching.template(), prompt, pageTokens,
                prompt.length / pageTokens);
        // at least the last prompt token is computed: its logits give the first output token
        int reusablePages = (prompt.length - 1) / pageTokens;
        CacheScope from = scope;
        List<String> fromKeys = keys.subList(0, reusablePages);
        List<CacheScope> candidates = lookup.scopes(scope);
        int longest = -1;
        // production searches the own scope only, which the pool's grant looks up anyway
        for (CacheScope candidate : candidates.equals(List.of(scope)) ? List.<CacheScope>of() : candidates) {
            List<String> candidateKeys = candidate.equals(scope) ? fromKeys
                    : PrefixKeys.chain(model, candidate, caching.template(), prompt, pageTokens, reusablePages);
            int run = pool.cachedPrefixPages(candidate, candidateKeys, prompt);
            if (run > longest) {
                longest = run;
                from = candidate;
                fromKeys = candidateKeys;
            }
        }
        // the REUSE events follow once the prompt's first step read the pages (see prefill)
        PrefixGrant grant = pool.grantWithPrefix(seq.id(), seq.tenant(), from, fromKeys, prompt, count);
        if (grant != null) {
            reuses.put(seq.id(), new Reuse(scope, keys, prompt, grant.reused()));
            int hit = grant.reused().size() * pageTokens;
            metrics.prefixCacheLookup(hit, prompt.length - hit);
            reportCache();
        }
        return grant;
    }

    /** Reports evictions since the last report and the cached page count. */
    private synchronized void reportCache() {
        long evicted = pool.cacheEvictions();
        if (evicted > evictionsReported) {
            metrics.prefixCacheEvicted((int) (evicted - evictionsReported));
            evictionsReported = evicted;
        }
        metrics.prefixCachePages(pool.cachedPages());
    }

    private void prefill(S seq, int[] prompt, PrefixGrant grant) {
        List<PageRef> pages = grant.table();
        seq.prefillPages(pages);
        seq.moveTo(new RequestState.Prefilling());
        // a re-prefill after a preemption: the tokens are already sampled and streamed; the one after them is
        // pending, so nothing is sampled here (a seeded sampler's draws stay those of an uninterrupted run)
        boolean resume = seq.outputCount() > 0;
        long start = clock.getAsLong();
        float[][] logits = {new float[vocabSize]};
        Reuse reuse = reuses.get(seq.id());
        String scope = reuse == null ? null : reuse.scope().id();
        int pageTokens = pool.layout().pageTokens();
        int cached = grant.reused().size() * pageTokens;
        if (cached == 0) {
            seq.reusedPages(List.of()); // a first prefill that reused nothing: its usage counts no cached tokens
        }
        for (int from = cached; from < prompt.length; from += chunkTokens) {
            int to = Math.min(prompt.length, from + chunkTokens);
            long t0 = clock.getAsLong();
            ReadCheck check = guard.forward(List.of(new SequenceStep(seq.id(), seq.tenant(),
                    Arrays.copyOfRange(prompt, from, to), from, pages, !resume && to == prompt.length, scope)), logits, i -> { })[0];
            if (!check.allowed()) {
                isolationViolation(seq, check);
                return;
            }
            if (from == cached && cached > 0) {
                // the first step attended over every cached page and passed the check: they were reused
                recordReuse(seq, grant, reuse.scope());
            }
            metrics.prefillChunk(to - from, clock.getAsLong() - t0);
            if (seq.abortRequested()) {
                giveUp(seq, seq::abortNow);
                return;
            }
        }
        if (!resume) {
            seq.prefillNanos(clock.getAsLong() - start);
            seq.pendingToken(seq.sampler().sample(logits[0]));
        }
        int generation = seq.nextTransferGeneration();
        // The receiver learns of the transfer before anyone can see the request as transferring, so
        // an abort that sees "transferring" always finds the transfer to defer.
        expectTransfer.accept(seq);
        seq.moveTo(new RequestState.Transferring());
        // the sender reads the pages from the pool the guard ran the steps on
        transport.send(new TransferJob(seq.id(), seq.tenant(), generation, guard.pool(), pages, prompt.length,
                accepted -> releasePrefillPages(seq, accepted)));
    }

    /** Records the REUSE of a grant's cached pages and lists them for the request's receipt. */
    private void recordReuse(S seq, PrefixGrant grant, CacheScope readerScope) {
        int pageTokens = pool.layout().pageTokens();
        long[] events = pool.recordReuse(seq.id(), seq.tenant(), readerScope, grant.reused());
        List<ReusedPage> reused = new ArrayList<>();
        for (int i = 0; i < grant.reused().size(); i++) {
            PageRef ref = grant.reused().get(i);
            reused.add(new ReusedPage(pool.name(), ref.page(), ref.epoch(), i * pageTokens, (i + 1) * pageTokens,
                    grant.writers()[i], events[i]));
        }
        seq.reusedPages(reused);
    }

    /** A read the page metadata refused: stop before anything derived from it leaves, quarantine what it touched. */
    private void isolationViolation(S seq, ReadCheck check) {
        List<PageRef> pages = seq.takePrefillPages();
        seq.markDetected();
        safety.refusedRead(check, pool.name(), seq.id(), seq.tenant());
        pool.quarantineAndScrub(seq.id(), pages);
        Reuse reuse = reuses.remove(seq.id());
        if (reuse != null) {
            pool.unref(seq.id(), reuse.reused());
        }
        releaseReservation.accept(seq);
        seq.fail("isolation_violation", check.refusal(seq.id()));
        notifyFreed();
    }

    /** Waits until the prefill pool has room; null if the request was aborted meanwhile. */
    private PrefixGrant allocateWaiting(S seq, int[] prompt) throws InterruptedException {
        synchronized (pagesFreed) {
            while (true) {
                PrefixGrant pages = allocate(seq, prompt);
                if (pages != null) {
                    return pages;
                }
                if (seq.abortRequested() || !running) {
                    return null;
                }
                pagesFreed.wait(50);
            }
        }
    }

    /**
     * Lets go of a request's prefill pages: with {@code keep} (its transfer was accepted) and the prefix
     * cache, its own full prompt pages stay as cached pages of its scope; the rest go back to the free
     * list, and the cached pages it reused lose its reference.
     */
    private void releasePrefillPages(S seq, boolean keep) {
        List<PageRef> pages = seq.takePrefillPages();
        Reuse reuse = reuses.remove(seq.id());
        int reused = reuse == null ? 0 : reuse.reused().size();
        if (!pages.isEmpty()) {
            List<PageRef> release = new ArrayList<>();
            int pageTokens = pool.layout().pageTokens();
            for (int i = reused; i < pages.size(); i++) {
                PageRef ref = pages.get(i);
                boolean cached = keep && reuse != null && i < reuse.keys().size()
                        && pool.keep(seq.id(), ref, reuse.scope(), reuse.keys().get(i),
                        Arrays.copyOfRange(reuse.prompt(), i * pageTokens, (i + 1) * pageTokens));
                if (!cached) {
                    release.add(ref);
                }
            }
            pool.release(seq.id(), release);
        }
        if (reuse != null) {
            pool.unref(seq.id(), reuse.reused());
            reportCache();
        }
        notifyFreed();
    }

    private void notifyFreed() {
        synchronized (pagesFreed) {
            pagesFreed.notifyAll();
        }
    }

    private void giveUp(S seq, Runnable end) {
        releasePrefillPages(seq, false);
        releaseReservation.accept(seq);
        end.run();
    }
}
