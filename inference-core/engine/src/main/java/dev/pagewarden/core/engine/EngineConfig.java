package dev.pagewarden.core.engine;

import dev.pagewarden.core.receipt.ServingIdentity;

import java.time.Duration;

/**
 * Engine settings. Build with {@link #builder()}; every value is checked when built.
 *
 * @param backend                "cpu", "gpu" or "auto"
 * @param threads                CPU kernel threads (0 = all cores)
 * @param pageTokens             token slots per KV page
 * @param contextWindow          advertised window in tokens (0 = the model's own limit)
 * @param prefillKvBytes         prefill pool memory budget (0 = see prefillPoolTokens)
 * @param decodeKvBytes          decode pool memory budget (0 = see decodePoolTokens)
 * @param prefillPoolTokens      prefill pool size in tokens when no byte budget is set (0 = twice the window)
 * @param decodePoolTokens       decode pool size in tokens when no byte budget is set (0 = four times the window)
 * @param maxBatch               most sequences in one decode step
 * @param maxQueue               most requests waiting for pages before admission answers "overloaded"
 * @param prefillChunkTokens     most prompt tokens per prefill step
 * @param capacityPolicy         strict (refuse to start) or clamp, when the window exceeds pool capacity
 * @param deferredReleaseTimeout how long an aborted request's pages wait for the transfer ack before quarantine
 * @param transferStartTimeout   how long the decode side waits for the first page of a transfer from another
 *                               process before the request fails (kv_transfer_failed) and its pages are scrubbed;
 *                               a transfer in this process starts at once and is not timed
 * @param canaryInterval         how often the known-answer canary runs on the decode worker (zero = never)
 * @param requestIdBase          request ids are base+1, base+2, ...: a platform gives each engine start its own block
 *                               so that ids stay unique across engines and restarts sharing one audit database
 * @param requestIdKey           non-zero: the ids within the block are the request counter through a permutation
 *                               keyed by this (unique, but they do not show other tenants' request volume);
 *                               0: base+1, base+2, ... (reproducible, for the command line and the replay lab)
 * @param nodeId                 the node lineage events and receipts name (null = the host name)
 * @param replicaId              the replica (engine start) receipts name (null = random per engine start)
 * @param decodeHeadroomPages    decode pages a request reserves beyond its prompt's; decode takes more a page at a
 *                               time as it goes ({@link #FULL_RESERVATION}: prompt + max new tokens at once)
 * @param maxPreemptions         how often one request may be preempted (its pages taken back for others, then
 *                               re-prefilled) before it fails with preempted_too_often
 * @param prefixCache            keep the full pages of each prompt in the prefill pool as read-only prefix pages of
 *                               the request's scope (tenant and prompt cache key) and reuse them for later prompts of
 *                               that scope that start with the same pages; evicted least recently used (off by default)
 */
public record EngineConfig(String backend, int threads, int pageTokens, int contextWindow, long prefillKvBytes,
                           long decodeKvBytes, int prefillPoolTokens, int decodePoolTokens, int maxBatch, int maxQueue,
                           int prefillChunkTokens, CapacityPolicy capacityPolicy, Duration deferredReleaseTimeout,
                           Duration transferStartTimeout, Duration canaryInterval, long requestIdBase, long requestIdKey, String nodeId, String replicaId,
                           int decodeHeadroomPages, int maxPreemptions, boolean prefixCache) {

    /** {@link #decodeHeadroomPages} that reserves a request's whole prompt + max new tokens at admission. */
    public static final int FULL_RESERVATION = Integer.MAX_VALUE;

    public EngineConfig {
        requireAtLeast("threads", threads, 0);
        requireAtLeast("page_tokens", pageTokens, 1);
        requireAtLeast("context_window", contextWindow, 0);
        requireAtLeast("prefill_kv_bytes", prefillKvBytes, 0);
        requireAtLeast("decode_kv_bytes", decodeKvBytes, 0);
        requireAtLeast("prefill_pool_tokens", prefillPoolTokens, 0);
        requireAtLeast("decode_pool_tokens", decodePoolTokens, 0);
        requireAtLeast("max_batch", maxBatch, 1);
        requireAtLeast("max_queue", maxQueue, 0);
        requireAtLeast("prefill_chunk_tokens", prefillChunkTokens, 1);
        requireAtLeast("request_id_base", requestIdBase, 0);
        requireAtLeast("decode_headroom_pages", decodeHeadroomPages, 0);
        requireAtLeast("max_preemptions", maxPreemptions, 0);
        ServingIdentity.validate(nodeId, replicaId);
        if (deferredReleaseTimeout.isNegative() || deferredReleaseTimeout.isZero()) {
            throw new IllegalArgumentException("deferred_release_timeout must be > 0, got " + deferredReleaseTimeout);
        }
        if (transferStartTimeout.isNegative() || transferStartTimeout.isZero()) {
            throw new IllegalArgumentException("transfer_start_timeout must be > 0, got " + transferStartTimeout);
        }
        if (canaryInterval.isNegative()) {
            throw new IllegalArgumentException("canary_interval must be >= 0, got " + canaryInterval);
        }
    }

    private static void requireAtLeast(String name, long value, long min) {
        if (value < min) {
            throw new IllegalArgumentException(name + " must be >= " + min + ", got " + value);
        }
    }

    public static EngineConfig defaults() {
        return builder().build();
    }

    public static Builder builder() {
        return new Builder();
    }

    public Builder toBuilder() {
        Builder b = new Builder();
        b.backend = backend;
        b.threads = threads;
        b.pageTokens = pageTokens;
        b.contextWindow = contextWindow;
        b.prefillKvBytes = prefillKvBytes;
        b.decodeKvBytes = decodeKvBytes;
        b.prefillPoolTokens = prefillPoolTokens;
        b.decodePoolTokens = decodePoolTokens;
        b.maxBatch = maxBatch;
        b.maxQueue = maxQueue;
        b.prefillChunkTokens = prefillChunkTokens;
        b.capacityPolicy = capacityPolicy;
        b.deferredReleaseTimeout = deferredReleaseTimeout;
        b.transferStartTimeout = transferStartTimeout;
        b.canaryInterval = canaryInterval;
        b.requestIdBase = requestIdBase;
        b.requestIdKey = requestIdKey;
        b.nodeId = nodeId;
        b.replicaId = replicaId;
        b.decodeHeadroomPages = decodeHeadroomPages;
        b.maxPreemptions = maxPreemptions;
        b.prefixCache = prefixCache;
        return b;
    }

    /** Mutable builder; defaults suit a small model on a laptop. */
    public static final class Builder {
        private String backend = "auto";
        private int threads;
        private int pageTokens = 16;
        private int contextWindow;
        private long prefillKvBytes;
        private long decodeKvBytes;
        private int prefillPoolTokens;
        private int decodePoolTokens;
        private int maxBatch = 32;
        private int maxQueue = 256;
        private int prefillChunkTokens = 256;
        private CapacityPolicy capacityPolicy = CapacityPolicy.STRICT;
        private Duration deferredReleaseTimeout = Duration.ofSeconds(5);
        private Duration transferStartTimeout = Duration.ofSeconds(30);
        private Duration canaryInterval = Duration.ZERO;
        private long requestIdBase;
        private long requestIdKey;
        private String nodeId;
        private String replicaId;
        private int decodeHeadroomPages = 1;
        private int maxPreemptions = 8;
        private boolean prefixCache;

        public Builder backend(String v) { backend = v; return this; }
        public Builder threads(int v) { threads = v; return this; }
        public Builder pageTokens(int v) { pageTokens = v; return this; }
        public Builder contextWindow(int v) { contextWindow = v; return this; }
        public Builder kvBytes(long prefill, long decode) { prefillKvBytes = prefill; decodeKvBytes = decode; return this; }
        public Builder poolTokens(int prefill, int decode) { prefillPoolTokens = prefill; decodePoolTokens = decode; return this; }
        public Builder maxBatch(int v) { maxBatch = v; return this; }
        public Builder maxQueue(int v) { maxQueue = v; return this; }
        public Builder prefillChunkTokens(int v) { prefillChunkTokens = v; return this; }
        public Builder capacityPolicy(CapacityPolicy v) { capacityPolicy = v; return this; }
        public Builder deferredReleaseTimeout(Duration v) { deferredReleaseTimeout = v; return this; }
        public Builder transferStartTimeout(Duration v) { transferStartTimeout = v; return this; }
        public Builder canaryInterval(Duration v) { canaryInterval = v; return this; }
        public Builder requestIdBase(long v) { requestIdBase = v; return this; }
        /** Non-zero: ids within the block are permuted by this key (see {@link EngineConfig}); 0: sequential. */
        public Builder requestIdKey(long v) { requestIdKey = v; return this; }
        /** Null or blank: the host name. */
        public Builder nodeId(String v) { nodeId = v; return this; }
        /** Null or blank: random per engine start. */
        public Builder replicaId(String v) { replicaId = v; return this; }
        /** Decode pages reserved beyond the prompt's; {@link EngineConfig#FULL_RESERVATION}: the whole request at once. */
        public Builder decodeHeadroomPages(int v) { decodeHeadroomPages = v; return this; }
        public Builder maxPreemptions(int v) { maxPreemptions = v; return this; }
        /** Keep and reuse full prompt pages per scope (see {@link EngineConfig}). */
        public Builder prefixCache(boolean v) { prefixCache = v; return this; }

        public EngineConfig build() {
            return new EngineConfig(backend, threads, pageTokens, contextWindow, prefillKvBytes, decodeKvBytes,
                    prefillPoolTokens, decodePoolTokens, maxBatch, maxQueue, prefillChunkTokens, capacityPolicy,
                    deferredReleaseTimeout, transferStartTimeout, canaryInterval, requestIdBase, requestIdKey,
                    nodeId, replicaId, decodeHeadroomPages, maxPreemptions, prefixCache);
        }
    }
}
