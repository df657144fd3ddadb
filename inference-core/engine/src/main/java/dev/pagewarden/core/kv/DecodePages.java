package dev.pagewarden.core.kv;

import dev.pagewarden.core.lineage.LineageRecorder;

import java.util.List;

/**
 * The decode loop's view of its pool: the lineage of its reads and of its coalesced writes, and the pages it takes
 * as its requests grow and gives back when it preempts one. Their first pages arrive through the intake and are
 * returned by admission. Implementations guard their metadata with their own monitor, which the decode loop holds
 * to take pages back and hand them on in one step.
 */
public interface DecodePages extends StagePages {
    LineageRecorder lineage();

    /** Gives {@code count} pages to a request, all or nothing; null when too few are free. */
    List<PageRef> allocate(long requestId, String tenantId, int count);

    /** Takes a running request's pages back for others (no write of it can be in flight): preempted, then released. */
    void preempt(long requestId, List<PageRef> pages);

    /** Reports now the request's written-but-unreported slots, so that lineage emitted next comes after them. */
    void reportWrites(long requestId, List<PageRef> pages);
}
