package dev.pagewarden.core.sequence;

import dev.pagewarden.core.request.GenerationRequest;
import dev.pagewarden.core.request.RequestState;

/**
 * What every stage that holds a request reads of it and how it ends it. Each stage sees the request
 * through a narrower view of {@link Sequence} that extends this one; the moves themselves stay on
 * {@link RequestState}'s graph, which {@link #moveTo} enforces.
 */
public interface SequenceView {
    long id();

    String tenant();

    GenerationRequest request();

    boolean abortRequested();

    /** Moves along the lifecycle graph; an illegal move is a bug and throws. */
    void moveTo(RequestState next);

    /** Ends the request as aborted; the caller has already dealt with its pages. */
    void abortNow();
}
