package dev.pagewarden.core.request;

/** Lab ground truth of a submitted request, for isolation tests: what really happened to its reads. */
public final class GroundTruth {
    private GroundTruth() {
    }

    /** Slots this request read whose data another tenant's request wrote last. */
    public static int crossTenantSlotsRead(RequestHandle h) {
        return h.sequence().crossTenantSlotsRead();
    }

    /** Tokens it emitted after such a read. */
    public static int exposedTokens(RequestHandle h) {
        return h.sequence().exposedTokens();
    }

    /** Whether a detector flagged it. */
    public static boolean detected(RequestHandle h) {
        return h.sequence().detected();
    }

    /** Its current decode page table (empty once handed to release, deferral or quarantine). */
    public static java.util.List<dev.pagewarden.core.kv.PageRef> decodePages(RequestHandle h) {
        return h.sequence().decodePages();
    }
}
