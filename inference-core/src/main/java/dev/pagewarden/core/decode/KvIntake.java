package dev.pagewarden.core.decode;

import dev.pagewarden.core.kv.KvPool;
import dev.pagewarden.core.kv.PageRef;
import dev.pagewarden.core.request.RequestState;
import dev.pagewarden.core.request.Sequence;
import dev.pagewarden.core.transfer.InProcessKvTransport;
import dev.pagewarden.core.transfer.KvReceiver;
import dev.pagewarden.core.transfer.PageFrame;
import dev.pagewarden.core.transfer.TransferDone;

import java.util.concurrent.ConcurrentHashMap;
import java.util.function.Consumer;

/**
 * Decode's side of the handoff. A frame is written into the reserved page only if it belongs to a
 * transfer this worker expects (request and generation), its page index is inside the reservation,
 * and its checksum verifies. A request becomes ready only when the tokens received equal the prompt
 * it reserved for; anything else fails it - never a partial cache that looks complete.
 */
public final class KvIntake implements KvReceiver {
    private final KvPool pool;
    private final Consumer<Sequence> onReady;
    private final Consumer<Sequence> releaseReservation;
    private final ConcurrentHashMap<Long, Expected> expected = new ConcurrentHashMap<>();

    private static final class Expected {
        final Sequence seq;
        final int generation;
        final boolean[] received;
        int tokens;

        Expected(Sequence seq, int generation, int frames) {
            this.seq = seq;
            this.generation = generation;
            this.received = new boolean[frames];
        }
    }

    public KvIntake(KvPool pool, Consumer<Sequence> onReady, Consumer<Sequence> releaseReservation) {
        this.pool = pool;
        this.onReady = onReady;
        this.releaseReservation = releaseReservation;
    }

    /** Registers the transfer a sequence is about to receive (its current generation). */
    public void expect(Sequence seq) {
        int frames = pool.layout().pagesFor(seq.request().promptLength());
        expected.put(seq.id(), new Expected(seq, seq.transferGeneration(), frames));
    }

    @Override
    public boolean onFrame(PageFrame frame) {
        Expected e = expected.get(frame.requestId());
        if (e == null || e.generation != frame.generation()) {
            return false; // stale or unknown transfer: never written anywhere
        }
        String problem = check(e, frame);
        if (problem != null) {
            fail(e, problem);
            return false;
        }
        PageRef dst = e.seq.decodePages().get(frame.pageIndex());
        pool.storage().writePage(dst.page(), frame.bytes());
        pool.markWritten(e.seq.id(), dst, frame.tokens());
        e.received[frame.pageIndex()] = true;
        e.tokens += frame.tokens();
        return true;
    }

    private String check(Expected e, PageFrame frame) {
        if (frame.pageIndex() < 0 || frame.pageIndex() >= e.received.length) {
            return "page index " + frame.pageIndex() + " outside the " + e.received.length + " pages expected";
        }
        if (e.received[frame.pageIndex()]) {
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
        Expected e = expected.get(done.requestId());
        if (e == null || e.generation != done.generation()) {
            return false;
        }
        int prompt = e.seq.request().promptLength();
        for (boolean got : e.received) {
            if (!got) {
                fail(e, "transfer done but a page is missing (" + e.tokens + " of " + prompt + " tokens received)");
                return false;
            }
        }
        if (e.tokens != prompt || done.totalTokens() != prompt) {
            fail(e, "received " + e.tokens + " tokens, sender claims " + done.totalTokens() + ", reserved for " + prompt);
            return false;
        }
        expected.remove(done.requestId());
        if (e.seq.abortRequested()) {
            releaseReservation.accept(e.seq);
            e.seq.abortNow();
            return true;
        }
        e.seq.moveTo(new RequestState.Ready());
        onReady.accept(e.seq);
        return true;
    }

    private void fail(Expected e, String problem) {
        if (expected.remove(e.seq.id(), e)) {
            releaseReservation.accept(e.seq);
            e.seq.fail("kv_transfer_failed", "request " + e.seq.id() + ": KV transfer rejected: " + problem);
        }
    }
}
