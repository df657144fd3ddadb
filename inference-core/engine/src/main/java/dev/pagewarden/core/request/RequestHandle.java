package dev.pagewarden.core.request;

import java.util.concurrent.CompletableFuture;

/** A submitted request: its id, its eventual result, and a way to abort it. */
public final class RequestHandle {
    private final RequestControl sequence;

    public RequestHandle(RequestControl sequence) {
        this.sequence = sequence;
    }

    public long id() {
        return sequence.id();
    }

    /** Completes with the result, or exceptionally ({@link RequestAbortedException}, {@link RequestFailedException}). */
    public CompletableFuture<GenerationResult> result() {
        return sequence.result();
    }

    public RequestState state() {
        return sequence.state();
    }

    /** The engine's record, for lab ground truth in tests of this package (never part of the API). */
    RequestControl sequence() {
        return sequence;
    }

    /**
     * Finishes the request normally (finish reason STOP, with its receipt) right after the token
     * being delivered; call it from {@link TokenListener#onToken} when a stop string has matched.
     */
    public void stop() {
        sequence.requestStop();
    }

    /** Aborts at the next safe point of whichever stage holds the request. */
    public void abort(String reason) {
        sequence.requestAbort(reason);
    }

    /** Whether a detector flagged or stopped this request. */
    public boolean detected() {
        return sequence.detected();
    }
}
