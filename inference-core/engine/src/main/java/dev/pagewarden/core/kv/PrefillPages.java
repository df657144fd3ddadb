package dev.pagewarden.core.kv;

import java.util.List;

/**
 * The prefill stage's view of its pool: pages for a prompt while it is prefilled and sent, then back, or
 * kept as cached prefix pages of a scope that later prompts of that scope reuse.
 */
public interface PrefillPages extends StagePages, PageGrants {
    int capacityPages();

    /** See {@link KvPool#keep}. */
    boolean keep(long requestId, PageRef ref, CacheScope scope, String key, int[] tokens);

    /** See {@link KvPool#allocateWithPrefix}. */
    KvPool.PrefixGrant allocateWithPrefix(long requestId, String tenantId, CacheScope scope, List<String> keys, int[] tokens,
                                          int count);

    /** See {@link KvPool#grantWithPrefix}. */
    KvPool.PrefixGrant grantWithPrefix(long requestId, String tenantId, CacheScope lookupScope, List<String> keys,
                                       int[] tokens, int count);

    /** See {@link KvPool#recordReuse}. */
    long[] recordReuse(long requestId, String tenantId, CacheScope readerScope, List<PageRef> reused);

    /** See {@link KvPool#cachedPrefixPages}. */
    int cachedPrefixPages(CacheScope scope, List<String> keys, int[] tokens);

    /** See {@link KvPool#unref}. */
    void unref(long requestId, List<PageRef> pages);

    /** Pages held as cached prefixes now. */
    int cachedPages();

    /** Cached pages evicted so far. */
    long cacheEvictions();
}
