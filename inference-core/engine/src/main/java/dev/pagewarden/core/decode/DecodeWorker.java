package dev.pagewarden.core.decode;

import dev.pagewarden.core.backend.SequenceStep;
import dev.pagewarden.core.context.EngineContext;
import dev.pagewarden.core.kv.DecodePages;
import dev.pagewarden.core.kv.PageRef;
import dev.pagewarden.core.kv.ReadCheck;
import dev.pagewarden.core.lineage.LineageEvent.Kind;
import dev.pagewarden.core.receipt.PageEpochRead;
import dev.pagewarden.core.request.FinishReason;
import dev.pagewarden.core.request.RequestState;
import dev.pagewarden.core.sequence.DecodeView;
import dev.pagewarden.core.safety.SafetyMonitor;
import dev.pagewarden.core.spi.EngineMetrics;
import dev.pagewarden.core.step.StepGuard;
import dev.pagewarden.core.transfer.DecodeTicks;

import java.util.ArrayList;
import java.util.Iterator;
import java.util.List;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import java.util.function.Consumer;
import java.util.function.LongSupplier;

/**
 * Generates tokens with continuous batching: between two steps, requests whose KV has arrived join
 * the running batch and finished or aborted ones leave it. Every running request feeds one token per
 * step; the step guard verifies each one's reads against the page metadata first, and a request whose
 * read is refused stops with an isolation error before any token derived from that page is emitted.
 *
 * <p>Pages on demand: a request arrives with the pages of its prompt plus a small headroom, and gets one more page
 * when its next step would write past its last one. When the pool has none free, a running request is preempted:
 * the most recently admitted one (never a request whose transfer is still under way: those are not running yet).
 * Its reads are finished, its pages recorded preempted and released, and it is re-queued to be re-prefilled from
 * prompt + the tokens generated so far; its client sees a pause. A request preempted {@code maxPreemptions} times
 * fails with preempted_too_often at its next preemption instead. When the request that needs a page is itself the
 * most recently admitted, it is the one preempted.
 *
 * <p>Runs on a thread of its own ({@link #run}), or one iteration per {@link #tick} when the engine is
 * driven step by step. Every iteration advances the decode ticks that transfer delays are counted in.
 */
public final class DecodeWorker<S extends DecodeView> implements Runnable {
    private final StepGuard guard;
    private final DecodePages pool;
    private final DecodeTicks ticks;
    private final float[][] logits;
    private final int maxBatch;
    private final int[] stopTokens;
    private final Consumer<S> releaseReservation;
    /** Where a preempted request waits for pages again (admission's queue). */
    private final Consumer<S> requeue;
    private final int maxPreemptions;
    private final SafetyMonitor safety;
    private final EngineMetrics metrics;
    private final LongSupplier clock;
    private final BlockingQueue<S> ready = new LinkedBlockingQueue<>();
    private final List<S> running = new ArrayList<>();
    private volatile Runnable housekeeping = () -> { };
    private volatile int runningCount;
    private volatile boolean active = true;

    /**
     * A worker whose requests come with their whole reservation: none ever needs another page (a request that
     * still did would fail with preempted_too_often rather than take another's).
     */
    public DecodeWorker(StepGuard guard, int vocabSize, DecodeTicks ticks, int maxBatch, int[] stopTokens,
                        EngineContext context, Consumer<S> releaseReservation) {
        this(guard, vocabSize, ticks, maxBatch, stopTokens, context, releaseReservation, 0, seq -> {
            throw new IllegalStateException("request " + seq.id() + " preempted by a worker that re-queues none");
        });
    }

    /** {@code requeue}: where a preempted request waits to be re-prefilled, at most {@code maxPreemptions} times. */
    public DecodeWorker(StepGuard guard, int vocabSize, DecodeTicks ticks, int maxBatch, int[] stopTokens,
                        EngineContext context, Consumer<S> releaseReservation, int maxPreemptions, Consumer<S> requeue) {
        if (maxBatch < 1) {
            throw new IllegalArgumentException("max batch must be >= 1, got " + maxBatch);
        }
        this.guard = guard;
        this.pool = guard.pool();
        this.ticks = ticks;
        this.logits = new float[maxBatch][vocabSize];
        this.maxBatch = maxBatch;
        this.stopTokens = stopTokens.clone();
        this.releaseReservation = releaseReservation;
        this.maxPreemptions = maxPreemptions;
        this.requeue = requeue;
        this.safety = context.safety();
        this.metrics = context.metrics();
        this.clock = context.clock()::nanoTime;
    }

    /** Work the decode loop does between steps (reaping overdue deferred releases). */
    public void housekeeping(Runnable task) {
        this.housekeeping = task;
    }

    /** A request whose KV has arrived and verified. */
    public void enqueueReady(S seq) {
        ready.add(seq);
    }

    public void stop() {
        active = false;
    }

    @Override
    public void run() {
        while (active) {
            if (running.isEmpty()) {
                try {
                    S first = ready.poll(20, TimeUnit.MILLISECONDS);
                    if (first != null) {
                        join(first);
                    }
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                    return;
                }
            }
            tick();
        }
    }

    /** One iteration: housekeeping, ready requests join, aborted ones leave, one step for the batch. */
    public void tick() {
        ticks.advance();
        try {
            housekeeping.run();
            S next;
            while (running.size() < maxBatch && (next = ready.poll()) != null) {
                join(next);
            }
            dropAborted();
            growPages();
            if (!running.isEmpty()) {
                step();
            }
        } catch (RuntimeException e) {
            for (S seq : running) {
                end(seq, () -> seq.fail("decode_failed", "decode step failed: " + e.getMessage()));
            }
            running.clear();
        }
        runningCount = running.size();
    }

    /**
     * A ready request brings the first token that prefill sampled; it may already be the last. One re-prefilled
     * after a preemption brings nothing new: its pending token was taken (and streamed) before.
     */
    private void join(S seq) {
        if (seq.abortRequested()) {
            end(seq, seq::abortNow);
            return;
        }
        if (seq.outputCount() > 0 || accept(seq, seq.pendingToken())) {
            seq.moveTo(new RequestState.Decoding());
            running.add(seq);
        }
    }

    private void dropAborted() {
        for (Iterator<S> it = running.iterator(); it.hasNext(); ) {
            S seq = it.next();
            if (seq.abortRequested()) {
                it.remove();
                end(seq, seq::abortNow);
            }
        }
    }

    /**
     * Gives every running request whose next step writes past its last page one more page, preempting the most
     * recently admitted running request while the pool has none free. Taking a victim's pages and handing one on
     * happen under the pool's monitor, so no admission in between takes what was freed for the request that grows.
     */
    private void growPages() {
        int pt = pool.layout().pageTokens();
        List<S> preempted = new ArrayList<>();
        for (S seq : List.copyOf(running)) {
            if (!running.contains(seq) || seq.cachedPositions() < seq.decodePages().size() * pt) {
                continue;
            }
            synchronized (pool) {
                while (true) {
                    List<PageRef> page = pool.allocate(seq.id(), seq.tenant(), 1);
                    if (page != null) {
                        seq.addDecodePage(page.getFirst());
                        break;
                    }
                    S victim = mostRecentlyAdmitted();
                    finishReads(victim); // its reads end before its pages go
                    pool.preempt(victim.id(), victim.takeDecodePages());
                    running.remove(victim);
                    preempted.add(victim);
                    if (victim == seq) {
                        break;
                    }
                }
            }
        }
        for (S seq : preempted) {
            if (seq.preemptions() >= maxPreemptions) {
                metrics.preemption("preempted_too_often");
                end(seq, () -> seq.fail("preempted_too_often", "request " + seq.id() + " lost its KV pages to other "
                        + "requests more than " + maxPreemptions + " times; retry when the engine is less busy"));
            } else {
                metrics.preemption("requeued");
                seq.preempt();
                requeue.accept(seq);
            }
        }
    }

    /** The running request admitted last (admission order is unique and never changes): the deterministic victim. */
    private S mostRecentlyAdmitted() {
        S last = running.getFirst();
        for (S seq : running) {
            if (seq.admissionOrder() > last.admissionOrder()) {
                last = seq;
            }
        }
        return last;
    }

    private void step() {
        List<SequenceStep> batch = new ArrayList<>(running.size());
        for (S seq : running) {
            batch.add(new SequenceStep(seq.id(), seq.tenant(), new int[]{seq.pendingToken()}, seq.cachedPositions(),
                    seq.decodePages(), true));
        }
        long t0 = clock.getAsLong();
        // the reads happened in the step, before its own writes are recorded
        ReadCheck[] checks = guard.forward(batch, logits,
                i -> bindReads(running.get(i), batch.get(i).startPos(), batch.get(i).endPos()));
        metrics.decodeStep(batch.size(), clock.getAsLong() - t0);
        List<S> done = new ArrayList<>();
        for (int i = 0; i < running.size(); i++) {
            S seq = running.get(i);
            if (!checks[i].allowed()) {
                isolationViolation(seq, checks[i]);
                done.add(seq);
                continue;
            }
            if (!accept(seq, seq.sampler().sample(logits[i]))) {
                done.add(seq);
            }
        }
        running.removeAll(done);
    }

    /**
     * Lineage of reads: each page epoch the request's decode has started to read, once per page,
     * with the cached slots it read at that first step ([0, startPos) - the slot this step writes
     * itself is not data it read from anyone). Later steps attend to more slots of the page (the
     * ones they wrote); {@link #finishReads} records the final range once the request is done, so
     * the hot path only keeps the step's end (no event, no allocation per token).
     */
    private void bindReads(S seq, int startPos, int endPos) {
        int pt = pool.layout().pageTokens();
        int pagesRead = pool.layout().pagesFor(endPos);
        for (int i = seq.boundPages(); i < pagesRead; i++) {
            PageRef p = seq.decodePages().get(i);
            int cached = Math.max(0, Math.min(pt, startPos - i * pt));
            long event = pool.lineage().slots(Kind.BIND_READ, p.page(), p.epoch(), seq.id(), seq.tenant(), 0, cached);
            // the read passed the page-table check (owner and epoch are this request's): the engine
            // believes the request itself wrote what it read - the receipt's claim, which the audit tests
            seq.recordRead(new PageEpochRead(pool.name(), p.page(), p.epoch(), cached, seq.id(), event));
        }
        seq.boundPages(pagesRead);
        seq.readEnd(endPos);
    }

    /**
     * Ends the lineage of a request's reads, before its pages are released or quarantined (so its
     * RELEASE follows): for each page epoch read (entry i is page i), the final range [0, n) - every
     * slot its steps attended to there, its own step's slot included, through the last step that
     * passed the read check - as one READ_FINAL event, after the WRITE events of every slot it covers;
     * the receipt claims these ranges. Once.
     */
    private void finishReads(S seq) {
        if (seq.readsFinal()) {
            return;
        }
        int pt = pool.layout().pageTokens();
        List<PageEpochRead> first = seq.reads();
        if (!first.isEmpty()) {
            pool.reportWrites(seq.id(), seq.decodePages()); // decode writes are coalesced per page until now
        }
        List<PageEpochRead> finals = new ArrayList<>(first.size());
        for (int i = 0; i < first.size(); i++) {
            PageEpochRead r = first.get(i);
            int n = Math.max(0, Math.min(pt, seq.readEnd() - i * pt));
            pool.lineage().slots(Kind.READ_FINAL, r.page(), r.epoch(), seq.id(), seq.tenant(), 0, n);
            finals.add(new PageEpochRead(r.worker(), r.page(), r.epoch(), n, r.writerRequest(), r.lineageEventId()));
        }
        seq.finalReads(finals);
    }

    /** A refused read: no token from this step leaves; the pages it touched are quarantined and scrubbed. */
    private void isolationViolation(S seq, ReadCheck check) {
        finishReads(seq); // the refused step read nothing; the lineage keeps what earlier steps read, before the scrub
        List<PageRef> pages = seq.takeDecodePages();
        seq.markDetected();
        safety.refusedRead(check, pool.name(), seq.id(), seq.tenant());
        pool.quarantineAndScrub(seq.id(), pages);
        end(seq, () -> seq.fail("isolation_violation", check.refusal(seq.id())));
    }

    /** Takes a sampled token; returns whether the request goes on. */
    private boolean accept(S seq, int token) {
        for (int stop : stopTokens) {
            if (token == stop && !seq.request().sampling().ignoreEos()) {
                end(seq, () -> seq.finish(FinishReason.STOP, clock.getAsLong()));
                return false;
            }
        }
        seq.emit(token, clock.getAsLong());
        // a stop string matched, or the response format's output is complete
        if (seq.stopRequested() || seq.sampler().constraintComplete()) {
            end(seq, () -> seq.finish(FinishReason.STOP, clock.getAsLong()));
            return false;
        }
        if (seq.outputCount() >= seq.request().maxNewTokens()) {
            end(seq, () -> seq.finish(FinishReason.LENGTH, clock.getAsLong()));
            return false;
        }
        seq.pendingToken(token);
        return true;
    }

    private void end(S seq, Runnable terminal) {
        finishReads(seq);
        releaseReservation.accept(seq);
        terminal.run();
    }

    /** Requests ready or running (stepped mode: called between ticks). */
    public int pending() {
        return ready.size() + running.size();
    }

    /** Requests in the running batch after the last step (for the overview and tests). */
    public int runningCount() {
        return runningCount;
    }
}
