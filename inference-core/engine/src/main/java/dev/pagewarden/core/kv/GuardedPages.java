package dev.pagewarden.core.kv;

import java.util.List;

/**
 * The step guard's view of a pool: check a step's reads against the page metadata, hand the backend the
 * storage and a copy of the tags of the pages it touches, record the step's writes.
 */
public interface GuardedPages {
    String name();

    KvLayout layout();

    KvStorage storage();

    /**
     * Whether a sequence of cache scope {@code scope} ({@link CacheScope#id}; null: none) may read positions
     * {@code [0, startPos)} and write {@code [startPos, endPos)} of its table.
     */
    ReadCheck checkRead(long requestId, String scope, List<PageRef> table, int startPos, int endPos);

    /** A copy of the metadata of just {@code pages}, for a backend's own checks on its device. */
    PageTags tags(int[] pages);

    /** Marks written exactly the slots of positions {@code [fromPos, toPos)}. */
    void markPositionsWritten(long requestId, List<PageRef> table, int fromPos, int toPos);
}
