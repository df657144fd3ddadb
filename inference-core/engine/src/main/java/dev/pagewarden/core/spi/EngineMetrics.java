package dev.pagewarden.core.spi;

/**
 * Engine measurements; the platform binds this to Micrometer. Called on engine threads: keep it
 * cheap. Names follow the metrics the platform exports, e.g. {@code kv_deferred_release_total{outcome}}.
 */
public interface EngineMetrics {

    /** One decode step ran {@code batchSize} sequences in {@code nanos}. */
    default void decodeStep(int batchSize, long nanos) {
    }

    /** One prefill chunk of {@code tokens} tokens ran in {@code nanos}. */
    default void prefillChunk(int tokens, long nanos) {
    }

    /** {@code kv_deferred_release_total{outcome="drained"|"timeout"}}. */
    default void deferredRelease(String outcome) {
    }

    /** {@code kv_admission_rejections_total{reason}}. */
    default void admissionRejected(String reason) {
    }

    /** {@code kv_transfer_failures_total}. */
    default void transferFailed() {
    }

    /** {@code kv_isolation_violations_total{detector}}. */
    default void isolationViolation(String detector) {
    }

    /** {@code kv_canary_checks_total{result="pass"|"fail"}}. */
    default void canaryCheck(String result) {
    }

    /** {@code kv_late_writes_dropped_total}. */
    default void lateWriteDropped() {
    }

    /**
     * {@code engine_tenant_queue_depth{tenant}}: {@code tenant} now has {@code depth} requests waiting for admission.
     * Called under admission's lock: only record the number.
     */
    default void tenantQueued(String tenant, int depth) {
    }

    /** {@code engine_tenant_served_tokens_total{tenant}}: prompt tokens at admission, generated tokens as sampled. */
    default void tenantServed(String tenant, long tokens) {
    }

    /**
     * {@code kv_preemptions_total{outcome="requeued"|"preempted_too_often"}}: a running request's decode pages were
     * taken back for others; it was re-queued, or failed having been preempted too often.
     */
    default void preemption(String outcome) {
    }

    EngineMetrics NONE = new EngineMetrics() {
    };

    /**
     * A prompt met the prefix cache: {@code hitTokens} of its tokens came from cached pages of its scope,
     * {@code missTokens} were computed (a miss is a lookup with no hit; a request that does not use the cache
     * reports nothing).
     */
    default void prefixCacheLookup(int hitTokens, int missTokens) {
    }

    /** Cached prefix pages evicted (least recently used) to make room for an allocation. */
    default void prefixCacheEvicted(int pages) {
    }

    /** Pages held now by cached prefixes in the prefill pool (referenced or not). */
    default void prefixCachePages(int pages) {
    }
}
