package dev.pagewarden.core.kv;

/** Life of a page in one pool. Free pages keep their stale data: freeing never touches page memory. */
public enum PageState {
    FREE,
    OWNED,
    DEFERRED,
    QUARANTINED
}
