package dev.pagewarden.core.engine;

/**
 * Engine settings.
 *
 * @param backend            "cpu", "gpu" or "auto"
 * @param threads            CPU kernel threads (0 = all cores)
 * @param pageTokens         token slots per KV page
 * @param contextWindow      advertised window in tokens (0 = the model's own limit)
 * @param prefillPoolTokens  prefill KV pool size in tokens (0 = twice the window)
 * @param decodePoolTokens   decode KV pool size in tokens (0 = four times the window)
 * @param maxBatch           most sequences in one decode step
 * @param maxQueue           most requests waiting for pages before admission says "overloaded"
 * @param prefillChunkTokens most prompt tokens per prefill step
 */
public record EngineConfig(String backend, int threads, int pageTokens, int contextWindow, int prefillPoolTokens,
                           int decodePoolTokens, int maxBatch, int maxQueue, int prefillChunkTokens) {

    public EngineConfig {
        requireAtLeast("threads", threads, 0);
        requireAtLeast("page_tokens", pageTokens, 1);
        requireAtLeast("context_window", contextWindow, 0);
        requireAtLeast("prefill_pool_tokens", prefillPoolTokens, 0);
        requireAtLeast("decode_pool_tokens", decodePoolTokens, 0);
        requireAtLeast("max_batch", maxBatch, 1);
        requireAtLeast("max_queue", maxQueue, 0);
        requireAtLeast("prefill_chunk_tokens", prefillChunkTokens, 1);
    }

    private static void requireAtLeast(String name, int value, int min) {
        if (value < min) {
            throw new IllegalArgumentException(name + " must be >= " + min + ", got " + value);
        }
    }

    public static EngineConfig defaults() {
        return new EngineConfig("auto", 0, 16, 0, 0, 0, 32, 256, 256);
    }

    public EngineConfig withBackend(String b) {
        return new EngineConfig(b, threads, pageTokens, contextWindow, prefillPoolTokens, decodePoolTokens, maxBatch, maxQueue, prefillChunkTokens);
    }

    public EngineConfig withThreads(int t) {
        return new EngineConfig(backend, t, pageTokens, contextWindow, prefillPoolTokens, decodePoolTokens, maxBatch, maxQueue, prefillChunkTokens);
    }

    public EngineConfig withPools(int prefillTokens, int decodeTokens) {
        return new EngineConfig(backend, threads, pageTokens, contextWindow, prefillTokens, decodeTokens, maxBatch, maxQueue, prefillChunkTokens);
    }

    public EngineConfig withMaxBatch(int b) {
        return new EngineConfig(backend, threads, pageTokens, contextWindow, prefillPoolTokens, decodePoolTokens, b, maxQueue, prefillChunkTokens);
    }

    public EngineConfig withMaxQueue(int q) {
        return new EngineConfig(backend, threads, pageTokens, contextWindow, prefillPoolTokens, decodePoolTokens, maxBatch, q, prefillChunkTokens);
    }

    public EngineConfig withContextWindow(int w) {
        return new EngineConfig(backend, threads, pageTokens, w, prefillPoolTokens, decodePoolTokens, maxBatch, maxQueue, prefillChunkTokens);
    }

    public EngineConfig withPageTokens(int p) {
        return new EngineConfig(backend, threads, p, contextWindow, prefillPoolTokens, decodePoolTokens, maxBatch, maxQueue, prefillChunkTokens);
    }

    public EngineConfig withPrefillChunk(int c) {
        return new EngineConfig(backend, threads, pageTokens, contextWindow, prefillPoolTokens, decodePoolTokens, maxBatch, maxQueue, c);
    }
}
