package dev.pagewarden.core.backend;

/** Knobs a backend honours. {@code threads} is the CPU kernel thread count (0 = all cores). */
public record BackendOptions(int threads) {
    public static BackendOptions defaults() {
        return new BackendOptions(0);
    }

    public int resolvedThreads() {
        return threads > 0 ? threads : Runtime.getRuntime().availableProcessors();
    }
}
