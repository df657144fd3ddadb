package dev.pagewarden.platform.engine;

import dev.pagewarden.core.spi.EngineMetrics;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Timer;

import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * The engine's measurements as Micrometer meters, named as the engine documents them (Prometheus
 * adds {@code _total} / {@code _seconds}). Counters are looked up per call: the registry caches them,
 * and these calls are rare next to a decode step.
 */
final class MicrometerEngineMetrics implements EngineMetrics {
    private final MeterRegistry registry;
    private final Timer decodeStep;
    private final Timer prefillChunk;
    private final Counter decodeTokens;
    private final Counter prefillTokens;
    private final TenantMeters tenants;
    private final AtomicInteger cachedPages = new AtomicInteger();

    MicrometerEngineMetrics(MeterRegistry registry, TenantMeters tenants) {
        this.registry = registry;
        this.tenants = tenants;
        this.decodeStep = Timer.builder("engine.decode.step").description("one decode step over the running batch")
                .register(registry);
        this.prefillChunk = Timer.builder("engine.prefill.chunk").register(registry);
        this.decodeTokens = Counter.builder("engine.decode.tokens").description("tokens generated").register(registry);
        this.prefillTokens = Counter.builder("engine.prefill.tokens").description("prompt tokens prefilled").register(registry);
        io.micrometer.core.instrument.Gauge.builder("engine.prefix.cache.pages", cachedPages, AtomicInteger::get)
                .description("prefill pool pages held by cached prompt prefixes").register(registry);
    }

    @Override
    public void decodeStep(int batchSize, long nanos) {
        decodeStep.record(nanos, TimeUnit.NANOSECONDS);
        decodeTokens.increment(batchSize);
    }

    @Override
    public void prefillChunk(int tokens, long nanos) {
        prefillChunk.record(nanos, TimeUnit.NANOSECONDS);
        prefillTokens.increment(tokens);
    }

    @Override
    public void deferredRelease(String outcome) {
        registry.counter("kv.deferred.release", "outcome", outcome).increment();
    }

    @Override
    public void admissionRejected(String reason) {
        registry.counter("kv.admission.rejections", "reason", reason).increment();
    }

    @Override
    public void transferFailed() {
        registry.counter("kv.transfer.failures").increment();
    }

    @Override
    public void isolationViolation(String detector) {
        registry.counter("kv.isolation.violations", "detector", detector).increment();
    }

    @Override
    public void canaryCheck(String result) {
        registry.counter("kv.canary.checks", "result", result).increment();
    }

    @Override
    public void lateWriteDropped() {
        registry.counter("kv.late.writes.dropped").increment();
    }

    @Override
    public void tenantQueued(String tenant, int depth) {
        tenants.queued(tenant, depth);
    }

    @Override
    public void tenantServed(String tenant, long tokens) {
        tenants.served(tenant, tokens);
    }

    @Override
    public void preemption(String outcome) {
        registry.counter("kv.preemptions", "outcome", outcome).increment();
    }

    @Override
    public void prefixCacheLookup(int hitTokens, int missTokens) {
        registry.counter("engine.prefix.cache.tokens", "result", "hit").increment(hitTokens);
        registry.counter("engine.prefix.cache.tokens", "result", "miss").increment(missTokens);
    }

    @Override
    public void prefixCacheEvicted(int pages) {
        registry.counter("engine.prefix.cache.evictions").increment(pages);
    }

    @Override
    public void prefixCachePages(int pages) {
        cachedPages.set(pages);
    }
}
