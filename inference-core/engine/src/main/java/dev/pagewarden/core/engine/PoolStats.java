package dev.pagewarden.core.engine;

import dev.pagewarden.core.kv.KvPool;
import dev.pagewarden.core.kv.PageState;

import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.Locale;
import java.util.Map;

/**
 * One KV pool's state at one moment, as the outside sees it (the pool itself never leaves the engine).
 *
 * @param name           the worker's pool ("prefill-0", "decode-0")
 * @param pageTokens     token slots per page
 * @param capacityPages  pages in the pool
 * @param capacityTokens tokens one request could hold if it had the whole pool
 * @param peakUsedPages  most pages in use at once since the start
 * @param pagesByState   pages per state ("free", "owned", "deferred", "quarantined", "cached"), every state present
 */
public record PoolStats(String name, int pageTokens, int capacityPages, long capacityTokens, int peakUsedPages,
                        Map<String, Integer> pagesByState) {

    public PoolStats {
        pagesByState = Collections.unmodifiableMap(new LinkedHashMap<>(pagesByState));
    }

    /** A snapshot of {@code pool} (engine nodes report theirs this way). */
    public static PoolStats of(KvPool pool) {
        Map<String, Integer> states = new LinkedHashMap<>();
        pool.countByState().forEach((state, n) -> states.put(label(state), n));
        return new PoolStats(pool.name(), pool.layout().pageTokens(), pool.capacityPages(), pool.capacityTokens(),
                pool.peakUsedPages(), states);
    }

    private static String label(PageState state) {
        return state.name().toLowerCase(Locale.ROOT);
    }

    public int freePages() {
        return pagesByState.getOrDefault("free", 0);
    }

    /** Pages held by cached prompt prefixes (see {@link EngineConfig#prefixCache}). */
    public int cachedPages() {
        return pagesByState.getOrDefault("cached", 0);
    }

    /** Pages requests own now. */
    public int ownedPages() {
        return pagesByState.getOrDefault("owned", 0);
    }

    /** Whether every page is back in the free list. */
    public boolean allFree() {
        return freePages() == capacityPages;
    }
}
