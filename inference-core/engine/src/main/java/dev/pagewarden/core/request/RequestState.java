package dev.pagewarden.core.request;

/**
 * Where a request is in its life. Only the transitions in {@link #canMoveTo} exist; everything else
 * throws at once. The 2026 incident was a "rejected" request that one component took for alive: here
 * a rejected or aborted request has no way back into reservation, transfer or decode.
 *
 * <pre>
 * Queued -> Admitted -> Reserved -> Prefilling -> Transferring -> Ready -> Decoding -> Finished
 * terminal failures: Rejected (only before Reserved), Aborted, Failed
 * Decoding -> Preempted -> Reserved -> ...   (its decode pages were taken for others: re-queued, later
 *                                             re-prefilled from prompt + the tokens generated so far)
 * </pre>
 */
public sealed interface RequestState {
    record Queued() implements RequestState { }
    record Admitted() implements RequestState { }
    record Reserved() implements RequestState { }
    record Prefilling() implements RequestState { }
    record Transferring() implements RequestState { }
    record Ready() implements RequestState { }
    record Decoding() implements RequestState { }
    /** Its decode pages went to other requests; it waits for new ones ({@code count}: its preemptions so far). */
    record Preempted(int count) implements RequestState { }
    record Finished(FinishReason reason) implements RequestState { }
    record Rejected(String code, String message) implements RequestState { }
    record Aborted(String reason) implements RequestState { }
    record Failed(String code, String message) implements RequestState { }

    default boolean isTerminal() {
        return switch (this) {
            case Finished f -> true;
            case Rejected r -> true;
            case Aborted a -> true;
            case Failed f -> true;
            case Queued q -> false;
            case Admitted a -> false;
            case Reserved r -> false;
            case Prefilling p -> false;
            case Transferring t -> false;
            case Ready r -> false;
            case Decoding d -> false;
            case Preempted p -> false;
        };
    }

    /** The lifecycle graph, exhaustively. */
    default boolean canMoveTo(RequestState next) {
        return switch (this) {
            case Queued q -> next instanceof Admitted || next instanceof Rejected || next instanceof Aborted;
            case Admitted a -> next instanceof Reserved || next instanceof Rejected || next instanceof Aborted;
            case Reserved r -> next instanceof Prefilling || next instanceof Aborted || next instanceof Failed;
            case Prefilling p -> next instanceof Transferring || next instanceof Aborted || next instanceof Failed;
            case Transferring t -> next instanceof Ready || next instanceof Aborted || next instanceof Failed;
            case Ready r -> next instanceof Decoding || next instanceof Finished || next instanceof Aborted
                    || next instanceof Failed;
            case Decoding d -> next instanceof Finished || next instanceof Preempted || next instanceof Aborted
                    || next instanceof Failed;
            case Preempted p -> next instanceof Reserved || next instanceof Aborted || next instanceof Failed;
            case Finished f -> false;
            case Rejected r -> false;
            case Aborted a -> false;
            case Failed f -> false;
        };
    }
}
