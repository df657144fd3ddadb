package dev.pagewarden.core.request;

import java.util.concurrent.CompletableFuture;

/**
 * What a {@link RequestHandle} asks of the engine's record of its request: implemented by the engine,
 * never by an application.
 */
public interface RequestControl {
    long id();

    CompletableFuture<GenerationResult> result();

    RequestState state();

    /** Asks decode to finish the request normally (STOP) right after the token being emitted. */
    void requestStop();

    /** Asks for an abort at the next safe point of whichever stage holds the request. */
    void requestAbort(String reason);

    /** Whether a detector flagged or stopped the request. */
    boolean detected();
}
