package dev.pagewarden.core.request;

import dev.pagewarden.core.sequence.Sequence;

/** Engine state of a submitted request that isolation tests look at (its page table, whether a detector saw it). */
public final class GroundTruth {
    private GroundTruth() {
    }

    /** Whether a detector flagged it. */
    public static boolean detected(RequestHandle h) {
        return h.sequence().detected();
    }

    /** Its current decode page table (empty once handed to release, deferral or quarantine). */
    public static java.util.List<dev.pagewarden.core.kv.PageRef> decodePages(RequestHandle h) {
        return ((Sequence) h.sequence()).decodePages();
    }
}
