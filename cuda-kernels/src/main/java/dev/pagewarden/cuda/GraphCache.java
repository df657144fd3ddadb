package dev.pagewarden.cuda;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.function.Consumer;

/**
 * A bounded cache of captured CUDA graphs by step shape, least recently used first out. What leaves the
 * cache (evicted, or all of it at {@link #clear}) is handed to {@code free} at once: an instantiated
 * graph holds device resources. Not thread-safe: only the device thread uses it.
 */
final class GraphCache<K, V> {
    private final int capacity;
    private final Consumer<V> free;
    private final LinkedHashMap<K, V> entries = new LinkedHashMap<>(16, 0.75f, true);

    GraphCache(int capacity, Consumer<V> free) {
        if (capacity < 1) {
            throw new IllegalArgumentException("a graph cache holds at least one graph, asked for " + capacity);
        }
        this.capacity = capacity;
        this.free = free;
    }

    /** The value for {@code key}, now the most recently used; null when absent. */
    V get(K key) {
        return entries.get(key);
    }

    /** Adds a value for a key not yet present; frees the least recently used entry when over capacity. */
    void put(K key, V value) {
        if (entries.containsKey(key)) {
            throw new IllegalStateException("a graph for " + key + " is cached already");
        }
        entries.put(key, value);
        if (entries.size() > capacity) {
            Map.Entry<K, V> eldest = entries.entrySet().iterator().next();
            entries.remove(eldest.getKey());
            free.accept(eldest.getValue());
        }
    }

    /** Frees every entry (eldest first) and empties the cache. */
    void clear() {
        List<V> values = new ArrayList<>(entries.values());
        entries.clear();
        values.forEach(free);
    }

    int size() {
        return entries.size();
    }
}
