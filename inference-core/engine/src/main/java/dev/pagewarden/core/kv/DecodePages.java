package dev.pagewarden.core.kv;

import dev.pagewarden.core.lineage.LineageRecorder;

import java.util.List;

/**
 * The decode loop's view of its pool: the lineage of its reads and of its coalesced writes. Its pages arrive
 * through the intake and are returned by admission.
 */
public interface DecodePages extends StagePages {
    LineageRecorder lineage();

    /** Reports now the request's written-but-unreported slots, so that lineage emitted next comes after them. */
    void reportWrites(long requestId, List<PageRef> pages);
}
