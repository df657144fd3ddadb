package dev.pagewarden.core.kv;

import java.util.List;

/** Pages given to a request and taken back: what admission (decode reservations) and prefill (prompt pages) do with a pool. */
public interface PageGrants {
    KvLayout layout();

    /** Gives {@code count} pages to a request, all or nothing; null when too few are free. */
    List<PageRef> allocate(long requestId, String tenantId, int count);

    /** Frees a request's pages (no transfer can still be reading them). */
    void release(long requestId, List<PageRef> pages);
}
