package dev.pagewarden.core.kv;

import dev.pagewarden.core.lineage.LineageRecorder;

import java.util.List;

/**
 * The decode intake's view of its pool: land transferred pages, record them, and settle the pages of a
 * transfer that failed or was aborted (deferred until its ack, quarantined, scrubbed). Implementations
 * guard their metadata with their own monitor, which the intake holds to read an epoch and report it in
 * one step.
 */
public interface IntakePages {
    String name();

    KvLayout layout();

    KvStorage storage();

    LineageRecorder lineage();

    long epochOf(int page);

    /** Whether a page is, right now, owned by (request, epoch). */
    boolean ownedBy(long requestId, PageRef ref);

    /** Records written slots up to {@code slotsEnd}; {@code viaTransfer}: a transfer frame's lineage event reports them. */
    void markWritten(long requestId, PageRef ref, int slotsEnd, boolean viaTransfer);

    /** Parks an aborted request's pages while writes of transfer {@code generation} may still land. */
    void defer(long requestId, List<PageRef> pages, int generation);

    /** The ack for (request, generation) arrived: frees the deferred pages; false when the ack is stale. */
    boolean drain(long requestId, List<PageRef> pages, int generation);

    /** Takes pages out of service. */
    void quarantine(long requestId, List<PageRef> pages);

    /** Zeroes quarantined pages, then frees them. */
    void scrubAndFree(long requestId, List<PageRef> pages);
}
