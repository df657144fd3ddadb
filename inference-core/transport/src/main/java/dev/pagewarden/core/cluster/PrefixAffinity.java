package dev.pagewarden.core.cluster;

import dev.pagewarden.core.kv.CacheScope;
import dev.pagewarden.core.kv.PrefixKeys;
import dev.pagewarden.core.request.GenerationRequest;
import dev.pagewarden.core.request.PrefixCaching;

import java.util.LinkedHashMap;
import java.util.Map;

/**
 * Which prefill node last finished a prompt of a scope starting with a given first page: where that scope's prefix
 * is most likely still cached. Keyed by the scope's digest and the first full page's prefix key (the key the node's
 * cache files that page under), so neither a tenant's name nor its prompt is kept here; at most {@link #CAPACITY}
 * entries, the least recently used dropped first. Only a preference: placement still checks health and room.
 */
final class PrefixAffinity {
    static final int CAPACITY = 4096;
    private final Map<String, String> nodes = new LinkedHashMap<>(64, 0.75f, true) {
        @Override
        protected boolean removeEldestEntry(Map.Entry<String, String> eldest) {
            return size() > CAPACITY;
        }
    };

    /**
     * The key of {@code request}'s prefix for a model {@code modelId} with pages of {@code pageTokens}; null when its
     * prompt cannot reuse a page (caching off, or no full page before its last token).
     */
    static String key(GenerationRequest request, String modelId, int pageTokens) {
        PrefixCaching caching = request.caching();
        if (!caching.enabled() || request.promptLength() - 1 < pageTokens) {
            return null;
        }
        CacheScope scope = new CacheScope(request.tenant(), caching.key());
        String first = PrefixKeys.chain(modelId, scope, caching.template(), request.promptTokens(), pageTokens, 1)
                .getFirst();
        return Long.toHexString(scope.digest()) + ":" + first;
    }

    /** The node that last finished a prompt with this key; null when none is known (or {@code key} is null). */
    synchronized String node(String key) {
        return key == null ? null : nodes.get(key);
    }

    /** {@code node} prefilled a prompt with this key, which finished (its pages stayed cached there). */
    synchronized void finished(String key, String node) {
        if (key != null) {
            nodes.put(key, node);
        }
    }

    synchronized int size() {
        return nodes.size();
    }
}
