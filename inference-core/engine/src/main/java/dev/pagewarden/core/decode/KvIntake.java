package dev.pagewarden.core.decode;

import dev.pagewarden.core.context.EngineContext;
import dev.pagewarden.core.kv.IntakePages;
import dev.pagewarden.core.kv.PageRef;
import dev.pagewarden.core.lineage.LineageEvent.Kind;
import dev.pagewarden.core.policy.AbortRelease;
import dev.pagewarden.core.request.RequestState;
import dev.pagewarden.core.sequence.IntakeView;
import dev.pagewarden.core.safety.SafetyEvent;
import dev.pagewarden.core.safety.SafetyMonitor;
import dev.pagewarden.core.spi.Clock;
import dev.pagewarden.core.spi.EngineMetrics;
import dev.pagewarden.core.transfer.InProcessKvTransport;
import dev.pagewarden.core.transfer.KvReceiver;
import dev.pagewarden.core.transfer.PageFrame;
import dev.pagewarden.core.transfer.TransferDone;

import java.time.Duration;
import java.util.List;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.Consumer;

/**
 * Decode's side of the handoff, and the owner of every page whose transfer may still be writing.
 *
 * <p>A frame is written only if it belongs to a transfer this worker expects (request and
 * generation), its index is inside the reservation, its checksum verifies and the destination page
 * is still that request's in that epoch. A request becomes ready only when the tokens received
 * equal the prompt it reserved for. A failed handoff quarantines the pages and fails the request.
 *
 * <p>An abort while a transfer runs does not free the pages: they are deferred until the sender's
 * ack for that (request, generation) says no write is in flight (outcome "drained"); if the ack does
 * not come in time they are quarantined and scrubbed (outcome "timeout") - never simply reused.
 */
public final class KvIntake<S extends IntakeView> implements KvReceiver {
    private final IntakePages pool;
    /** False only in the replay lab's "detectors off" twin. */
    private final boolean checking;
    /** What an abort during a transfer does with its pages (production: defer them until the ack). */
    private final AbortRelease abortRelease;
    private final SafetyMonitor safety;
    private final EngineMetrics metrics;
    private final Clock clock;
    private final long deferNanos;
    private final Consumer<S> onReady;
    private final Consumer<S> releaseReservation;
    private final Runnable pagesFreed;
    private final ConcurrentHashMap<Long, Transfer> transfers = new ConcurrentHashMap<>();
    /** How long an expected transfer may go without its first page or done (0: for ever, as in process). */
    private volatile long startNanos;

    private enum Phase { RECEIVING, DONE, DEFERRED, QUARANTINED, RELEASED_EARLY }

    /** One expected transfer. Guarded by its own monitor: frames, done, ack, abort and reaping race. */
    private final class Transfer {
        final S seq;
        final int generation;
        final List<PageRef> pages;
        final boolean[] received;
        int tokens;
        Phase phase = Phase.RECEIVING;
        long deadline;
        /** Whether the sender has been heard from (a page or done) for this transfer. */
        boolean started;
        /** When an unstarted transfer fails (see {@link #startTimeout}); only while {@code timed}. */
        long startDeadline;
        boolean timed;

        Transfer(S seq, int generation, List<PageRef> pages, int frames) {
            this.seq = seq;
            this.generation = generation;
            this.pages = pages;
            this.received = new boolean[frames];
        }
    }

    public KvIntake(IntakePages pool, EngineContext context, Duration deferredReleaseTimeout, Consumer<S> onReady,
                    Consumer<S> releaseReservation, Runnable pagesFreed) {
        this.pool = pool;
        this.checking = context.checks();
        this.abortRelease = context.hooks().abortRelease();
        this.safety = context.safety();
        this.metrics = context.metrics();
        this.clock = context.clock();
        this.deferNanos = deferredReleaseTimeout.toNanos();
        this.onReady = onReady;
        this.releaseReservation = releaseReservation;
        this.pagesFreed = pagesFreed;
    }

    /**
     * Fails, closed, a transfer that is expected but never starts: when neither a page nor the sender's done
     * has arrived within {@code timeout} of {@link #expect} (the sender's connection, handshake or hello
     * failed, or the sender went away before its first page), the request fails with kv_transfer_failed and
     * its pages are scrubbed and released; a page arriving later is refused. Zero (the default) waits for ever,
     * which suits a sender in this process: it starts every transfer at once.
     */
    public void startTimeout(Duration timeout) {
        if (timeout.isNegative()) {
            throw new IllegalArgumentException("transfer start timeout must be >= 0, got " + timeout);
        }
        this.startNanos = timeout.toNanos();
    }

    /** Registers the transfer a sequence is about to receive (its current generation); the start timeout runs from now. */
    public void expect(S seq) {
        expect(seq, true);
    }

    /**
     * Registers the transfer a sequence will receive. {@code timed} false: the start timeout runs only from
     * {@link #senderStarting} (the sender may first have a queue of prompts to work through).
     */
    public void expect(S seq, boolean timed) {
        int frames = pool.layout().pagesFor(seq.prefillLength());
        Transfer t = new Transfer(seq, seq.transferGeneration(), seq.decodePages(), frames);
        t.timed = timed;
        t.startDeadline = clock.nanoTime() + startNanos;
        transfers.put(seq.id(), t);
    }

    /** The sender says the transfer of (request, generation) starts now: its first page is due within the start timeout. */
    public void senderStarting(long requestId, int generation) {
        Transfer t = transfers.get(requestId);
        if (t == null || t.generation != generation) {
            return;
        }
        synchronized (t) {
            if (!t.timed) {
                t.timed = true;
                t.startDeadline = clock.nanoTime() + startNanos;
            }
        }
    }

    @Override
    public boolean onFrame(PageFrame frame) {
        Transfer t = transfers.get(frame.requestId());
        if (t == null || t.generation != frame.generation()) {
            lateWrite(frame, t == null ? "no transfer of this request is expected" : "stale generation "
                    + frame.generation() + " (current " + t.generation + ")");
            return false;
        }
        synchronized (t) {
            t.started = true;
            if (frame.pageIndex() < 0 || frame.pageIndex() >= t.pages.size()) {
                return fail(t, SafetyEvent.Type.TRANSFER_INCOMPLETE, "page index " + frame.pageIndex()
                        + " outside the reservation of " + t.pages.size() + " pages");
            }
            PageRef dst = t.pages.get(frame.pageIndex());
            if (t.phase == Phase.QUARANTINED) {
                return false; // its pages are being taken out of service; nothing lands there
            }
            if (checking) {
                String problem = check(t, frame, dst);
                if (problem != null) {
                    if (t.phase == Phase.RELEASED_EARLY) {
                        lateWrite(frame, problem);
                        return false;
                    }
                    return fail(t, problem.startsWith("checksum") ? SafetyEvent.Type.CHECKSUM_MISMATCH
                            : SafetyEvent.Type.TRANSFER_INCOMPLETE, problem);
                }
            }
            // The bytes land outside the pool's lock: on a device the write waits for the device thread, which
            // may be busy with a step whose start reads page metadata; holding the lock here would stall every
            // admission and release behind that step. While this transfer's monitor is held, the checks above
            // keep the page this request's (abort, failure and reaping all take the monitor first), so nothing
            // moves between the write and its lineage event below.
            // only the slots the frame claims: the sender's stale bytes past them never cross
            pool.storage().writeSlots(dst.page(), frame.bytes(), frame.tokens(), frame.writers());
            // lineage: the copy landed here, in whatever epoch the page is now (a released-early page may be
            // another request's by now - exactly what the audit must be able to show)
            synchronized (pool) { // the epoch read and its event in one step: no allocation comes between them
                pool.lineage().transfer(Kind.TRANSFER_IN, dst.page(), pool.epochOf(dst.page()), t.seq.id(),
                        t.seq.tenant(), frame.tokens(), frame.sourcePool(), frame.source().page(), frame.source().epoch(),
                        frame.generation(), frame.crc32c());
            }
            if (t.phase == Phase.RECEIVING) {
                pool.markWritten(t.seq.id(), dst, frame.tokens(), true);
            }
            if (frame.pageIndex() < t.received.length) {
                t.received[frame.pageIndex()] = true;
            }
            t.tokens += frame.tokens();
            return true;
        }
    }

    private String check(Transfer t, PageFrame frame, PageRef dst) {
        if (!pool.ownedBy(t.seq.id(), dst)) {
            return "destination page " + dst.page() + " epoch " + dst.epoch() + " is no longer request "
                    + t.seq.id() + "'s";
        }
        if (frame.pageIndex() >= t.received.length) {
            return "page index " + frame.pageIndex() + " beyond the " + t.received.length + " pages of the prompt";
        }
        if (t.received[frame.pageIndex()]) {
            return "page index " + frame.pageIndex() + " received twice";
        }
        if (frame.tokens() <= 0 || frame.tokens() > pool.layout().pageTokens()) {
            return "frame claims " + frame.tokens() + " tokens";
        }
        if (InProcessKvTransport.crc32c(frame.bytes()) != frame.crc32c()) {
            return "checksum mismatch on page index " + frame.pageIndex();
        }
        return null;
    }

    @Override
    public boolean onDone(TransferDone done) {
        Transfer t = transfers.get(done.requestId());
        if (t == null || t.generation != done.generation()) {
            return false;
        }
        synchronized (t) {
            t.started = true;
            if (t.phase != Phase.RECEIVING) {
                return false; // aborted or failed meanwhile; the ack settles its pages
            }
            int prompt = t.seq.prefillLength();
            if (checking) {
                for (int i = 0; i < t.received.length; i++) {
                    if (!t.received[i]) {
                        return fail(t, SafetyEvent.Type.TRANSFER_INCOMPLETE, "transfer reported done but page index "
                                + i + " never arrived (" + t.tokens + " of " + prompt + " reserved tokens received)");
                    }
                }
                if (t.tokens != prompt || done.totalTokens() != prompt) {
                    return fail(t, SafetyEvent.Type.TRANSFER_INCOMPLETE, "received " + t.tokens + " tokens, sender claims "
                            + done.totalTokens() + ", reserved for " + prompt);
                }
            }
            for (int i = 0; i < t.received.length; i++) {
                PageRef p = t.pages.get(i);
                pool.lineage().verify(p.page(), p.epoch(), t.seq.id(), t.seq.tenant(), t.generation, true);
            }
            t.phase = Phase.DONE; // from here the request belongs to decode; an abort is decode's to handle
            transfers.remove(done.requestId(), t);
        }
        if (t.seq.abortRequested()) {
            releaseReservation.accept(t.seq);
            t.seq.abortNow();
            return true;
        }
        t.seq.moveTo(new RequestState.Ready());
        onReady.accept(t.seq);
        return true;
    }

    @Override
    public void onAck(long requestId, int generation) {
        Transfer t = transfers.get(requestId);
        if (t == null || t.generation != generation) {
            return; // stale ack: it must never release a newer transfer's pages
        }
        synchronized (t) {
            switch (t.phase) {
                case RECEIVING -> {
                    // The ack follows the sender's last frame and its done message; still receiving here
                    // means the sender stopped short (it failed reading or sending a page) and sent no
                    // done. Left alone, the request would wait in "transferring" for ever, holding its
                    // reservation. Fail it, and as nothing is in flight any more, scrub and free at once.
                    fail(t, SafetyEvent.Type.TRANSFER_INCOMPLETE, "the sender ended transfer generation " + generation
                            + " without completing it (" + t.tokens + " of " + t.seq.prefillLength()
                            + " tokens received)");
                    pool.scrubAndFree(t.seq.id(), t.pages);
                }
                case DONE -> {
                    return; // already handed to decode
                }
                case DEFERRED -> {
                    if (pool.drain(t.seq.id(), t.pages, generation)) {
                        metrics.deferredRelease("drained");
                    }
                }
                case QUARANTINED -> pool.scrubAndFree(t.seq.id(), t.pages);
                case RELEASED_EARLY -> {
                    // the abort release policy handed the pages back without waiting for this ack
                }
            }
            transfers.remove(requestId, t);
        }
        pagesFreed.run();
    }

    /**
     * The sender's word, given another way than on the transfer's own connection, that it never sent a page
     * of (request, generation) and never will (a prefill node that gave the request up before its transfer,
     * or that could not be reached). A transfer still waiting for its first page is dropped and true returned:
     * its request keeps its reservation, for the caller to end. An aborted one's deferred pages are settled as
     * by its ack. A transfer that has started is left to its own connection's ack (false).
     */
    public boolean withdraw(long requestId, int generation) {
        Transfer t = transfers.get(requestId);
        if (t == null || t.generation != generation) {
            return false;
        }
        synchronized (t) {
            if (t.started) {
                return false; // pages went on the KV connection: only its ack can say none is in flight
            }
            if (t.phase == Phase.RECEIVING) {
                transfers.remove(requestId, t);
                return true;
            }
        }
        onAck(requestId, generation);
        return false;
    }

    /**
     * Aborts a request whose transfer is under way. Returns false if none is (the stage that holds
     * the request will see the abort flag instead).
     */
    public boolean abort(S seq) {
        Transfer t = transfers.get(seq.id());
        if (t == null) {
            return false;
        }
        synchronized (t) {
            if (t.phase == Phase.DONE || transfers.get(seq.id()) != t) {
                // onDone verified and removed it meanwhile: it (or decode) sees the abort flag and
                // returns the reservation; deferring here would strand pages no ack or reaper finds
                return false;
            }
            if (t.phase != Phase.RECEIVING) {
                return true;
            }
            abortRelease.settle(new AbortRelease.AbortedTransfer() {
                @Override
                public void deferUntilAck() {
                    pool.defer(seq.id(), seq.takeDecodePages(), t.generation);
                    t.phase = Phase.DEFERRED;
                    t.deadline = clock.nanoTime() + deferNanos;
                }

                @Override
                public void releaseNow() {
                    releaseReservation.accept(seq); // the pages are free while writes may still land
                    t.phase = Phase.RELEASED_EARLY;
                }
            });
            if (t.phase == Phase.RECEIVING) {
                throw new IllegalStateException("abort release policy " + abortRelease + " left transfer of request "
                        + seq.id() + " unsettled");
            }
        }
        seq.abortNow();
        return true;
    }

    /**
     * Quarantines and scrubs deferred pages whose ack is overdue, and fails transfers that never started
     * in time ({@link #startTimeout}). Called from the decode loop.
     */
    public void reap() {
        long now = clock.nanoTime();
        for (Transfer t : transfers.values()) {
            synchronized (t) {
                if (t.phase == Phase.RECEIVING && !t.started && t.timed && startNanos > 0 && now - t.startDeadline >= 0) {
                    neverStarted(t);
                    continue;
                }
                if ((t.phase != Phase.DEFERRED && t.phase != Phase.QUARANTINED) || now - t.deadline < 0) {
                    continue;
                }
                boolean wasDeferred = t.phase == Phase.DEFERRED;
                if (wasDeferred) {
                    pool.quarantine(t.seq.id(), t.pages);
                }
                pool.scrubAndFree(t.seq.id(), t.pages);
                transfers.remove(t.seq.id(), t);
                if (!wasDeferred) {
                    pagesFreed.run();
                    continue; // a failed handoff whose ack never came: already reported when it failed
                }
            }
            pagesFreed.run();
            metrics.deferredRelease("timeout");
            safety.report(SafetyEvent.Type.DEFERRED_RELEASE_TIMEOUT, pool.name(), t.seq.id(), t.seq.tenant(), t.pages,
                    "no ack for transfer generation " + t.generation + " within " + deferNanos / 1_000_000
                            + " ms; pages quarantined and scrubbed before reuse");
        }
    }

    /** Transfers still owning pages (receiving, deferred or quarantined). */
    public int inFlight() {
        return transfers.size();
    }

    /**
     * An expected transfer of which nothing arrived in time. Its pages are taken out of service at once:
     * every write goes through {@link #onFrame} under the transfer's monitor, and from here none is
     * accepted (a later page finds no transfer and is dropped as a late write).
     */
    private void neverStarted(Transfer t) {
        // caller holds t's monitor
        List<PageRef> pages = t.pages;
        fail(t, SafetyEvent.Type.TRANSFER_INCOMPLETE, "no page of transfer generation " + t.generation + " arrived within "
                + startNanos / 1_000_000 + " ms (the sender never started it)");
        pool.scrubAndFree(t.seq.id(), pages);
        transfers.remove(t.seq.id(), t);
        pagesFreed.run();
    }

    private boolean fail(Transfer t, SafetyEvent.Type type, String problem) {
        // caller holds t's monitor
        if (t.phase != Phase.RECEIVING) {
            return false;
        }
        List<PageRef> pages = t.seq.takeDecodePages();
        for (PageRef p : pages) {
            pool.lineage().verify(p.page(), p.epoch(), t.seq.id(), t.seq.tenant(), t.generation, false);
        }
        pool.quarantine(t.seq.id(), pages);
        t.phase = Phase.QUARANTINED; // scrubbed and freed when the sender's ack says nothing is in flight
        t.deadline = clock.nanoTime() + deferNanos;
        metrics.transferFailed();
        t.seq.markDetected();
        safety.report(type, pool.name(), t.seq.id(), t.seq.tenant(), pages, problem);
        releaseReservation.accept(t.seq); // pages already taken: this only lets waiting requests in
        t.seq.fail("kv_transfer_failed", "request " + t.seq.id() + ": KV transfer rejected: " + problem);
        return false;
    }

    private void lateWrite(PageFrame frame, String why) {
        metrics.lateWriteDropped();
        Transfer t = transfers.get(frame.requestId());
        if (t != null) {
            t.seq.markDetected();
        }
        safety.report(SafetyEvent.Type.LATE_WRITE_DROPPED, pool.name(), frame.requestId(), t == null ? null : t.seq.tenant(),
                List.of(), "dropped transfer write (generation " + frame.generation() + ", page index "
                        + frame.pageIndex() + "): " + why);
    }
}
