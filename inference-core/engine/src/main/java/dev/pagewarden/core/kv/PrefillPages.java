package dev.pagewarden.core.kv;

import java.util.List;

/** The prefill stage's view of its pool: pages for a prompt while it is prefilled and sent, then back. */
public interface PrefillPages extends StagePages {
    int capacityPages();

    /** Gives {@code count} pages to a request, all or nothing; null when too few are free. */
    List<PageRef> allocate(long requestId, String tenantId, int count);

    /** Frees a request's pages (no transfer can still be reading them). */
    void release(long requestId, List<PageRef> pages);
}
