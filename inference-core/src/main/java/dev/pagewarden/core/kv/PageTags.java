package dev.pagewarden.core.kv;

/**
 * What a backend may see of a pool's page metadata: each page's owner, epoch and written slots, to
 * check reads a second time on its device. A backend gets this view, never the pool, so it cannot
 * allocate, release or mark writes.
 */
public interface PageTags {

    /** A consistent copy of one page's metadata. */
    KvPool.PageInfo info(int page);

    /** Whether reads are checked at all (the device checks follow the pool's). */
    boolean checksOn();
}
