package dev.pagewarden.core.admission;

import dev.pagewarden.core.kv.PageGrants;
import dev.pagewarden.core.request.GenerationRequest;
import dev.pagewarden.core.request.InvalidRequestException;
import dev.pagewarden.core.request.RequestState;
import dev.pagewarden.core.request.TokenListener;
import dev.pagewarden.core.request.ValidRequest;
import dev.pagewarden.core.sampling.TokenLogprobs;
import dev.pagewarden.core.sequence.AdmissionView;
import dev.pagewarden.core.spi.EngineMetrics;

import java.util.Comparator;
import java.util.PriorityQueue;
import java.util.function.BooleanSupplier;
import java.util.function.Consumer;
import java.util.function.LongSupplier;
import java.util.function.Supplier;

/**
 * The gate before any KV is touched, the same for an engine in this process and for a cluster of engine nodes.
 * A request that can never fit - longer than the effective window, or than what the pools can hold for one
 * request - is rejected here with its original error, before a single page is reserved or any transfer starts.
 * One that fits gets its decode reservation from its {@link Placement} (in this process: its prompt's pages plus a
 * small headroom, decode takes the rest as it goes; in a cluster the decode node's own admission does the same), or waits in a
 * bounded queue, fair between tenants ({@link FairQueue}); a full queue rejects with a retryable error rather than
 * letting callers hang. A request whose decode pages were taken back for others ({@link #requeue}) waits ahead of
 * that queue, oldest admission first.
 */
public final class Admission<S extends AdmissionView> {

    /**
     * What admission compares requests with. {@code checkPoolFit=false} in the replay of the 2026 incident, and for a
     * cluster, whose placement checks each node's pool itself.
     */
    public record Limits(int vocabSize, int contextWindow, long prefillCapacityTokens, long decodeCapacityTokens,
                         int maxQueue, boolean checkPoolFit) {

        /** Nothing known to check against (a cluster with no node live): only the placement decides, and finds no room. */
        public static Limits unknown() {
            return new Limits(Integer.MAX_VALUE, Integer.MAX_VALUE, Long.MAX_VALUE, Long.MAX_VALUE, 0, false);
        }
    }

    /**
     * Where admitted requests run and what their reservation is taken from: this process's decode pool, or the engine
     * nodes of a cluster. Admission makes every check on the request; a placement only finds room for it.
     */
    public interface Placement<S> {
        /** Takes {@code seq}'s whole reservation now, all or nothing. Called under admission's lock: one decision at a time. */
        Room reserve(S seq);

        /** Starts a request whose reservation was taken (outside admission's lock). */
        void start(S seq);

        /** Returns what {@code seq} still holds, if anything. */
        void release(S seq);
    }

    /** What a placement found for one request. */
    public sealed interface Room {
        /** Reserved: the request goes on. */
        record Reserved() implements Room {
        }

        /** No room now: the request waits in the queue, if there is place in it. */
        record Wait() implements Room {
        }

        /** Not here: the request is rejected with this code and message. */
        record Refused(String code, String message) implements Room {
        }
    }

    private final Placement<S> placement;
    private final Supplier<Limits> limits;
    private final BooleanSupplier auditAccepting;
    private final EngineMetrics metrics;
    private final FairQueue<S> waiting;
    /** Preempted requests waiting for their pages again: served before {@link #waiting}, oldest admission first. */
    private final PriorityQueue<S> resuming = new PriorityQueue<>(Comparator.comparingLong(AdmissionView::admissionOrder));
    private long admitted;

    /** Admission to {@code placement}, checking against what {@code limits} says at each request. */
    public Admission(Placement<S> placement, Supplier<Limits> limits, BooleanSupplier auditAccepting, EngineMetrics metrics) {
        this.placement = placement;
        this.limits = limits;
        this.auditAccepting = auditAccepting;
        this.metrics = metrics;
        this.waiting = new FairQueue<>(metrics);
    }

    /**
     * Admission to this process's {@code decodePool}: a reserved request goes to {@code onReserved}. Each request
     * reserves prompt + max new tokens at once.
     */
    public Admission(PageGrants decodePool, Limits limits, Consumer<S> onReserved, BooleanSupplier auditAccepting,
                     EngineMetrics metrics, LongSupplier clock) {
        this(decodePool, limits, onReserved, auditAccepting, metrics, clock, Integer.MAX_VALUE);
    }

    /**
     * As above, each request reserving its prompt's pages plus {@code headroomPages} ({@link Integer#MAX_VALUE}:
     * prompt + max new tokens): its decode takes more pages as it goes.
     */
    public Admission(PageGrants decodePool, Limits limits, Consumer<S> onReserved, BooleanSupplier auditAccepting,
                     EngineMetrics metrics, LongSupplier clock, int headroomPages) {
        this(new PoolPlacement<>(decodePool, onReserved, clock, headroomPages), () -> limits, auditAccepting, metrics);
    }

    public int contextWindow() {
        return limits.get().contextWindow();
    }

    /**
     * The engine's one check of a request's values against this engine (that they are there and positive is
     * {@link GenerationRequest}'s own): every prompt token and logit_bias id in the vocabulary, max_tokens no larger than the window.
     * Throws at once; what only the sum of prompt and max_tokens exceeds is a rejection of {@link #submit} instead
     * (context length exceeded).
     */
    public ValidRequest validate(GenerationRequest request) {
        Limits l = limits.get();
        validate(request, l.vocabSize(), l.contextWindow());
        return new Checked(request, this);
    }

    /** {@link #validate(GenerationRequest)} against a vocabulary and window known otherwise (a prefill node's). */
    public static void validate(GenerationRequest request, int vocabSize, int contextWindow) {
        for (int t : request.promptTokens()) {
            if (t < 0 || t >= vocabSize) {
                throw new InvalidRequestException("prompt", "token id " + t + " is outside the vocabulary of " + vocabSize);
            }
        }
        for (int t : request.sampling().logitBias().keySet()) {
            if (t >= vocabSize) {
                throw new InvalidRequestException("logit_bias", "logit_bias names token id " + t
                        + ", outside the vocabulary of " + vocabSize);
            }
        }
        if (request.maxNewTokens() > contextWindow) {
            throw new InvalidRequestException("max_tokens", "max_tokens " + request.maxNewTokens()
                    + " is larger than the model's context window of " + contextWindow + " tokens");
        }
    }

    /** A request this admission checked. */
    private record Checked(GenerationRequest request, Admission<?> by) implements ValidRequest {
    }

    /** The request {@code valid} holds, checked here once: again only if this admission did not check it. */
    public GenerationRequest request(ValidRequest valid) {
        return valid instanceof Checked c && c.by() == this ? c.request() : validate(valid.request()).request();
    }

    /** The KV positions a request reserves on decode: its prompt and its max new tokens. */
    public static long tokensNeeded(GenerationRequest request) {
        return (long) request.promptLength() + request.maxNewTokens();
    }

    /** The decode pages a request reserves: prompt and max new tokens, in pages of {@code pageTokens}. */
    public static long pagesNeeded(GenerationRequest request, int pageTokens) {
        return (tokensNeeded(request) + pageTokens - 1) / pageTokens;
    }

    /**
     * The decode pages a reservation takes: those of the {@code prefillLength} tokens prefill writes plus
     * {@code headroomPages}, never more than the whole request's {@link #pagesNeeded}.
     */
    public static int reservationPages(GenerationRequest request, int prefillLength, int pageTokens, int headroomPages) {
        long prefill = ((long) prefillLength + pageTokens - 1) / pageTokens;
        return (int) Math.min(prefill + headroomPages, pagesNeeded(request, pageTokens));
    }

    /** Admits, queues or rejects. Rejection completes the sequence's result exceptionally. */
    public void submit(S seq) {
        Limits l = limits.get();
        String refusal = neverFits(seq.request(), l);
        if (refusal != null) {
            reject(seq, "context_length_exceeded", refusal);
            return;
        }
        if (!auditAccepting.getAsBoolean()) {
            // fail closed: no page life step may go unrecorded, so no new work while the audit journal is full
            reject(seq, "audit_backpressure", "the audit journal is at its capacity; retry later");
            return;
        }
        Room room;
        synchronized (this) {
            seq.moveTo(new RequestState.Admitted());
            seq.admissionOrder(++admitted);
            // A newcomer may reserve directly only when nobody is waiting; otherwise the queues decide.
            room = waiting.isEmpty() && resuming.isEmpty() ? placement.reserve(seq) : new Room.Wait();
            if (room instanceof Room.Reserved) {
                waiting.admittedAtOnce(seq);
            } else if (room instanceof Room.Wait) {
                if (waiting.size() >= l.maxQueue()) {
                    room = new Room.Refused("overloaded", "the admission queue is full (" + l.maxQueue()
                            + " waiting); retry later");
                } else {
                    waiting.add(seq);
                }
            }
        }
        switch (room) {
            case Room.Reserved r -> placement.start(seq);
            case Room.Refused r -> {
                reject(seq, r.code(), r.message());
                return;
            }
            case Room.Wait w -> { }
        }
        drain();
    }

    /** Why {@code request} can never fit within {@code l} (context length exceeded), or null. */
    private static String neverFits(GenerationRequest request, Limits l) {
        int prompt = request.promptLength();
        long need = tokensNeeded(request);
        if (need > l.contextWindow()) {
            return "this model's maximum context length is " + l.contextWindow() + " tokens, but the request needs "
                    + need + " (" + prompt + " in the prompt + " + request.maxNewTokens() + " max new tokens)";
        }
        if (l.checkPoolFit() && (prompt > l.prefillCapacityTokens() || need > l.decodeCapacityTokens())) {
            return "the request needs " + need + " tokens (" + prompt + " in the prompt) but the KV pools hold at most "
                    + l.prefillCapacityTokens() + " prompt tokens (prefill) and " + l.decodeCapacityTokens()
                    + " tokens (decode) for one request";
        }
        return null;
    }

    private void reject(S seq, String code, String message) {
        metrics.admissionRejected(code);
        seq.reject(code, message);
    }

    /** Returns a sequence's reservation (if it still holds it) and lets waiting requests in. */
    public void release(S seq) {
        placement.release(seq);
        drain();
    }

    /**
     * Queues again a request whose decode pages were taken back (preempted): it is re-reserved, ahead of requests
     * never admitted, and re-prefilled. It holds no page now; the queue bound does not apply (it was admitted).
     */
    public void requeue(S seq) {
        synchronized (this) {
            resuming.add(seq);
        }
        drain();
    }

    /** An abort of a request still waiting for pages ends it at once. */
    public void abortWaiting(S seq) {
        boolean removed;
        synchronized (this) {
            removed = waiting.remove(seq) || resuming.remove(seq);
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
        return waiting.size() + resuming.size();
    }

    /**
     * {@code listener}, charging {@code tenant} each token it is given: fair admission counts service as it is
     * generated (see {@link FairQueue#served}).
     */
    public TokenListener charging(String tenant, TokenListener listener) {
        return new TokenListener() {
            @Override
            public void onToken(long id, int token) {
                served(tenant, 1);
                listener.onToken(id, token);
            }

            @Override
            public void onToken(long id, int token, TokenLogprobs logprobs) {
                // forwards the log probabilities too: a wrapper that only had the short form would drop them
                served(tenant, 1);
                listener.onToken(id, token, logprobs);
            }
        };
    }

    private synchronized void served(String tenant, int tokens) {
        waiting.served(tenant, tokens);
    }

    /**
     * Reserves for the request the fair queue picks while there is room. One that does not fit yet holds everyone
     * back (no smaller request slips past it), and the queue picks again at the next room: its tenant keeps its turn
     * unless another has since been served less, and the served ones' counters grow, so nobody starves.
     */
    private void drain() {
        while (true) {
            S next;
            Room room;
            synchronized (this) {
                boolean fromResuming = !resuming.isEmpty();
                next = fromResuming ? resuming.peek() : waiting.peek();
                if (next == null) {
                    return;
                }
                if (next.abortRequested()) {
                    if (fromResuming) {
                        resuming.poll();
                    } else {
                        waiting.poll();
                    }
                    next.abortNow();
                    continue;
                }
                room = placement.reserve(next);
                if (room instanceof Room.Wait) {
                    return;
                }
                if (fromResuming) {
                    resuming.poll();
                } else {
                    waiting.poll();
                    if (room instanceof Room.Reserved) {
                        waiting.admitted(next);
                    }
                }
            }
            switch (room) {
                case Room.Reserved r -> placement.start(next);
                case Room.Refused r -> reject(next, r.code(), r.message());
                case Room.Wait w -> throw new IllegalStateException("a waiting request left the queue");
            }
        }
    }
}
