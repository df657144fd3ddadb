package dev.pagewarden.core.kv;

import java.util.List;

/**
 * What a stage that runs steps on a pool's pages may do with the pool itself, beyond the step guard: know its
 * name and layout, and take the pages a refused read touched out of service. The prefill and decode workers'
 * views extend it; {@link KvPool} implements every view of itself.
 */
public interface StagePages {
    String name();

    KvLayout layout();

    /** Quarantines a request's pages and scrubs them before they are freed (a refused read touched them). */
    void quarantineAndScrub(long requestId, List<PageRef> pages);
}
