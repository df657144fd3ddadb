package dev.pagewarden.core.admission;

import dev.pagewarden.core.kv.KvPool;
import dev.pagewarden.core.kv.PageRef;
import dev.pagewarden.core.request.RequestState;
import dev.pagewarden.core.request.Sequence;

import java.util.ArrayDeque;
import java.util.List;
import java.util.function.Consumer;
import java.util.function.LongSupplier;

/**
 * The gate before any KV is touched. A request that can never fit is rejected here, with its
 * original error, before a single page is reserved. One that fits gets its whole decode reservation
 * (prompt + max new tokens) at once, or waits in a bounded FIFO queue; a full queue rejects with a
 * retryable error rather than letting callers hang.
 */
public final class Admission {
    private final KvPool decodePool;
    private final int contextWindow;
    private final int maxQueue;
    private final Consumer<Sequence> onReserved;
    private final LongSupplier clock;
    private final ArrayDeque<Sequence> waiting = new ArrayDeque<>();

    public Admission(KvPool decodePool, int contextWindow, int maxQueue, Consumer<Sequence> onReserved, LongSupplier clock) {
        this.decodePool = decodePool;
        this.contextWindow = contextWindow;
        this.maxQueue = maxQueue;
        this.onReserved = onReserved;
        this.clock = clock;
    }

    public int contextWindow() {
        return contextWindow;
    }

    /** Admits, queues or rejects. Rejection completes the sequence's result exceptionally. */
    public void submit(Sequence seq) {
        int prompt = seq.request().promptLength();
        long need = (long) prompt + seq.request().maxNewTokens();
        if (need > contextWindow) {
            seq.reject("context_length_exceeded", "this model's maximum context length is " + contextWindow
                    + " tokens, but the request needs " + need + " (" + prompt + " in the prompt + "
                    + seq.request().maxNewTokens() + " max new tokens)");
            return;
        }
        boolean reservedNow;
        synchronized (this) {
            seq.moveTo(new RequestState.Admitted());
            // Queue order is FIFO: a newcomer may reserve directly only when nobody is waiting.
            reservedNow = waiting.isEmpty() && tryReserve(seq);
            if (!reservedNow) {
                if (waiting.size() >= maxQueue) {
                    seq.reject("overloaded", "the admission queue is full (" + maxQueue + " waiting); retry later");
                    return;
                }
                waiting.add(seq);
            }
        }
        if (reservedNow) {
            onReserved.accept(seq);
        }
        drain();
    }

    /** Reserves the whole decode reservation of {@code seq}, all or nothing. */
    private boolean tryReserve(Sequence seq) {
        int pages = decodePool.layout().pagesFor((long) seq.request().promptLength() + seq.request().maxNewTokens());
        List<PageRef> reserved = decodePool.allocate(seq.id(), seq.tenant(), pages);
        if (reserved == null) {
            return false;
        }
        seq.decodePages(reserved, clock.getAsLong());
        seq.moveTo(new RequestState.Reserved());
        return true;
    }

    /** Returns a sequence's decode pages and lets waiting requests in. */
    public void release(Sequence seq) {
        List<PageRef> pages = seq.decodePages();
        if (!pages.isEmpty()) {
            decodePool.release(seq.id(), pages);
            seq.decodePages(List.of(), clock.getAsLong());
        }
        drain();
    }

    public synchronized int queued() {
        return waiting.size();
    }

    /** Reserves for the head of the queue while pages last (FIFO: no starvation of long prompts). */
    private void drain() {
        while (true) {
            Sequence next;
            synchronized (this) {
                next = waiting.peek();
                if (next == null) {
                    return;
                }
                if (next.abortRequested()) {
                    waiting.poll();
                    next.abortNow();
                    continue;
                }
                if (!tryReserve(next)) {
                    return;
                }
                waiting.poll();
            }
            onReserved.accept(next);
        }
    }
}
