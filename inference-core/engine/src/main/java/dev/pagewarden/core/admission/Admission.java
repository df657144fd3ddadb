package dev.pagewarden.core.admission;

import dev.pagewarden.core.kv.PageGrants;
import dev.pagewarden.core.kv.PageRef;
import dev.pagewarden.core.request.GenerationRequest;
import dev.pagewarden.core.request.InvalidRequestException;
import dev.pagewarden.core.request.RequestState;
import dev.pagewarden.core.sequence.AdmissionView;
import dev.pagewarden.core.spi.EngineMetrics;

import java.util.ArrayDeque;
import java.util.List;
import java.util.function.BooleanSupplier;
import java.util.function.Consumer;
import java.util.function.LongSupplier;

/**
 * The gate before any KV is touched. A request that can never fit - longer than the effective
 * window, or than what the pools can hold for one request - is rejected here with its original
 * error, before a single page is reserved or any transfer starts. One that fits gets its whole
 * decode reservation (prompt + max new tokens) at once, or waits in a bounded FIFO queue; a full
 * queue rejects with a retryable error rather than letting callers hang.
 */
public final class Admission<S extends AdmissionView> {

    /** What admission compares requests with. {@code checkPoolFit=false} only in the replay of the 2026 incident. */
    public record Limits(int vocabSize, int contextWindow, long prefillCapacityTokens, long decodeCapacityTokens,
                         int maxQueue, boolean checkPoolFit) {
    }

    private final PageGrants decodePool;
    private final Limits limits;
    private final Consumer<S> onReserved;
    private final BooleanSupplier auditAccepting;
    private final EngineMetrics metrics;
    private final LongSupplier clock;
    private final ArrayDeque<S> waiting = new ArrayDeque<>();

    public Admission(PageGrants decodePool, Limits limits, Consumer<S> onReserved, BooleanSupplier auditAccepting,
                     EngineMetrics metrics, LongSupplier clock) {
        this.decodePool = decodePool;
        this.limits = limits;
        this.onReserved = onReserved;
        this.auditAccepting = auditAccepting;
        this.metrics = metrics;
        this.clock = clock;
    }

    public int contextWindow() {
        return limits.contextWindow();
    }

    /**
     * The engine's one check of a request's own values against this engine: every prompt token in the
     * vocabulary, max_tokens no larger than the window. Throws at once; what only the sum of prompt and
     * max_tokens exceeds is a rejection of {@link #submit} instead (context length exceeded).
     */
    public void validate(GenerationRequest request) {
        validate(request, limits.vocabSize(), limits.contextWindow());
    }

    /** {@link #validate(GenerationRequest)} against a vocabulary and window known otherwise (a cluster's, from its nodes). */
    public static void validate(GenerationRequest request, int vocabSize, int contextWindow) {
        for (int t : request.promptTokens()) {
            if (t < 0 || t >= vocabSize) {
                throw new InvalidRequestException("prompt", "token id " + t + " is outside the vocabulary of " + vocabSize);
            }
        }
        if (request.maxNewTokens() > contextWindow) {
            throw new InvalidRequestException("max_tokens", "max_tokens " + request.maxNewTokens()
                    + " is larger than the model's context window of " + contextWindow + " tokens");
        }
    }

    /** The decode pages a request reserves: prompt and max new tokens, in pages of {@code pageTokens}. */
    public static long pagesNeeded(GenerationRequest request, int pageTokens) {
        long tokens = (long) request.promptLength() + request.maxNewTokens();
        return (tokens + pageTokens - 1) / pageTokens;
    }

    /** Admits, queues or rejects. Rejection completes the sequence's result exceptionally. */
    public void submit(S seq) {
        String refusal = neverFits(seq);
        if (refusal != null) {
            reject(seq, "context_length_exceeded", refusal);
            return;
        }
        if (!auditAccepting.getAsBoolean()) {
            // fail closed: no page life step may go unrecorded, so no new work while the audit journal is full
            reject(seq, "audit_backpressure", "the audit journal is at its capacity; retry later");
            return;
        }
        boolean reservedNow;
        synchronized (this) {
            seq.moveTo(new RequestState.Admitted());
            // Queue order is FIFO: a newcomer may reserve directly only when nobody is waiting.
            reservedNow = waiting.isEmpty() && tryReserve(seq);
            if (!reservedNow) {
                if (waiting.size() >= limits.maxQueue()) {
                    reject(seq, "overloaded", "the admission queue is full (" + limits.maxQueue()
                            + " waiting); retry later");
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

    private String neverFits(S seq) {
        int prompt = seq.request().promptLength();
        long need = (long) prompt + seq.request().maxNewTokens();
        if (need > limits.contextWindow()) {
            return "this model's maximum context length is " + limits.contextWindow() + " tokens, but the request needs "
                    + need + " (" + prompt + " in the prompt + " + seq.request().maxNewTokens() + " max new tokens)";
        }
        if (limits.checkPoolFit() && (prompt > limits.prefillCapacityTokens() || need > limits.decodeCapacityTokens())) {
            return "the request needs " + need + " tokens (" + prompt + " in the prompt) but the KV pools hold at most "
                    + limits.prefillCapacityTokens() + " prompt tokens (prefill) and " + limits.decodeCapacityTokens()
                    + " tokens (decode) for one request";
        }
        return null;
    }

    private void reject(S seq, String code, String message) {
        metrics.admissionRejected(code);
        seq.reject(code, message);
    }

    /** Reserves the whole decode reservation of {@code seq}, all or nothing. */
    private boolean tryReserve(S seq) {
        int pages = decodePool.layout().pagesFor((long) seq.request().promptLength() + seq.request().maxNewTokens());
        List<PageRef> reserved = decodePool.allocate(seq.id(), seq.tenant(), pages);
        if (reserved == null) {
            return false;
        }
        seq.decodePages(reserved, clock.getAsLong());
        seq.moveTo(new RequestState.Reserved());
        return true;
    }

    /** Returns a sequence's decode pages (if it still holds them) and lets waiting requests in. */
    public void release(S seq) {
        List<PageRef> pages = seq.takeDecodePages();
        if (!pages.isEmpty()) {
            decodePool.release(seq.id(), pages);
        }
        drain();
    }

    /** An abort of a request still waiting for pages ends it at once. */
    public void abortWaiting(S seq) {
        boolean removed;
        synchronized (this) {
            removed = waiting.remove(seq);
        }
        if (removed) {
            seq.abortNow();
        }
    }

    /** Pages came back by another way (drained, scrubbed): let waiting requests in. */
    public void pagesFreed() {
        drain();
    }

    public synchronized int queued() {
        return waiting.size();
    }

    /** Reserves for the head of the queue while pages last (FIFO: no starvation of long prompts). */
    private void drain() {
        while (true) {
            S next;
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
