package dev.pagewarden.core.kv;

/**
 * What a backend may see of a pool's page metadata: each page's owner, epoch and written slots, to
 * check reads a second time on its device. A backend gets this, never the pool, so it cannot
 * allocate, release or mark writes. It is a copy taken before the step on the engine's thread
 * ({@link KvPool#tags(int[])}), so reading it takes no lock: a device thread must never wait for
 * the pool's lock, whose holders may be waiting for the device thread.
 */
public interface PageTags {

    /** A consistent copy of one page's metadata. */
    KvPool.PageInfo info(int page);

    /** Whether reads are checked at all (the device checks follow the pool's). */
    boolean checksOn();
}
