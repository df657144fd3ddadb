package dev.pagewarden.core.kv;

/** Life of a page in one pool. Free pages keep their stale data: freeing never touches page memory. */
public enum PageState {
    FREE,
    OWNED,
    DEFERRED,
    QUARANTINED,
    /**
     * A full prompt page kept after its writer's request as a read-only prefix page of one scope (tenant
     * and prompt cache key): readable by requests of exactly that scope, written by nobody, evicted
     * least recently used once no reader holds it.
     */
    CACHED
}
