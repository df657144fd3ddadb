package dev.pagewarden.core.tensor;

import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.ArrayList;
import java.util.List;

/**
 * A fixed set of worker threads that splits a range of output rows into contiguous chunks. Each
 * output is computed by exactly one thread with the same code, so results never depend on the
 * thread count or the split (batch invariance needs that).
 *
 * <p>STUB: simple executor-based version; the kernels work replaces it with a low-latency pool.
 */
public final class Parallel implements AutoCloseable {

    /** Body of a parallel loop over {@code [start, end)}. */
    @FunctionalInterface
    public interface RangeBody {
        void run(int start, int end);
    }

    private final int threads;
    private final ExecutorService executor;

    public Parallel(int threads) {
        if (threads < 1) {
            throw new IllegalArgumentException("threads must be >= 1, got " + threads);
        }
        this.threads = threads;
        this.executor = threads == 1 ? null : Executors.newFixedThreadPool(threads, r -> {
            Thread t = new Thread(r, "pagewarden-kernel");
            t.setDaemon(true);
            return t;
        });
    }

    public int threads() {
        return threads;
    }

    /** Runs {@code body} over {@code [0, n)} split into at most {@code threads()} chunks; returns when all are done. */
    public void forRange(int n, RangeBody body) {
        if (executor == null || n < 2) {
            body.run(0, n);
            return;
        }
        int chunks = Math.min(threads, n);
        List<Future<?>> futures = new ArrayList<>(chunks);
        for (int c = 1; c < chunks; c++) {
            int s = (int) ((long) n * c / chunks);
            int e = (int) ((long) n * (c + 1) / chunks);
            futures.add(executor.submit(() -> body.run(s, e)));
        }
        body.run(0, (int) ((long) n / chunks));
        try {
            for (Future<?> f : futures) {
                f.get();
            }
        } catch (Exception ex) {
            throw new IllegalStateException("parallel kernel failed", ex);
        }
    }

    @Override
    public void close() {
        if (executor != null) {
            executor.shutdownNow();
        }
    }
}
