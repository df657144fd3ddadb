package dev.pagewarden.core.tensor;

import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;
import java.util.concurrent.locks.LockSupport;
import java.util.concurrent.locks.ReentrantLock;

/**
 * A fixed set of worker threads that splits a range of output rows into contiguous chunks. Each
 * output is computed by exactly one thread with the same code, so results never depend on the
 * thread count or the split (batch invariance needs that).
 *
 * <p>Built for many short loops: a decode step issues ~85 matmuls of a few hundred microseconds
 * each, so dispatch must cost microseconds, not the tens of microseconds of an executor. A loop is
 * published by bumping a volatile generation counter; workers that finished a job moments ago are
 * still spinning on that counter and start at once, workers idle for longer than {@link #SPIN_NANOS}
 * have parked and are unparked. The range is split into {@link #CHUNKS_PER_THREAD} contiguous
 * chunks per thread, large ones first and small ones last (see {@link #bound(int, int, int)}), that
 * any thread may claim: the caller claims one, and claims more while they
 * are left, so a worker that the OS has not scheduled yet (a shared machine) delays little; then it
 * spins until the chunks it did not run are done. Which thread runs a chunk never changes what it computes.
 *
 * <p>Calls from several threads are serialised; a call from inside a running loop body (nested
 * parallelism) runs inline on the calling thread. An exception thrown by any chunk is rethrown to
 * the caller after all chunks have finished.
 */
public final class Parallel implements AutoCloseable {

    /** Body of a parallel loop over {@code [start, end)}. */
    @FunctionalInterface
    public interface RangeBody {
        void run(int start, int end);
    }

    /**
     * How long an idle worker spins before parking. Long enough to bridge the gap between two
     * matmuls of one decode step (a few microseconds of norms/attention on the caller), short
     * enough not to burn a shared core between requests.
     */
    static final long SPIN_NANOS = 100_000;

    /**
     * Chunks per thread in a loop. More than one, so that a thread that starts late (a parked
     * worker takes tens of microseconds to wake) or runs slower (a shared core) delays the loop by
     * at most a chunk: the others take over the chunks it has not claimed. Measured here: worker
     * chunks 20% slower than the caller's on average and the caller waiting for them 12-16% of
     * the time with one chunk each. Not many more: each chunk of a memory-bound matmul restarts
     * its streams.
     */
    static final int CHUNKS_PER_THREAD = 4;

    private final int threads;
    private final Worker[] workers;
    private final ReentrantLock dispatch = new ReentrantLock();

    // The current job. Plain fields: written by the caller before the volatile write of
    // `generation`, read by workers after they have seen the new generation.
    private RangeBody body;
    private int n;
    private int chunks;

    private volatile long generation;
    private volatile boolean closed;
    /**
     * Claims of the current job in one word: low 32 bits of its generation, its chunk count (16
     * bits), the next unclaimed chunk (16 bits). The count travels with the generation because a
     * worker still leaving the previous job may read this word while the next job is being set up:
     * it must compare its index with its own job's count, not with a count that changes per job.
     */
    private final AtomicLong claims = new AtomicLong(-1L << 32);
    /** Chunks of the current job not finished yet. */
    private final AtomicInteger pending = new AtomicInteger();
    private final AtomicReference<Throwable> failure = new AtomicReference<>();

    public Parallel(int threads) {
        if (threads < 1 || threads > 0xffff / CHUNKS_PER_THREAD) {
            throw new IllegalArgumentException("threads must be in [1, " + 0xffff / CHUNKS_PER_THREAD + "], got " + threads);
        }
        this.threads = threads;
        this.workers = new Worker[threads - 1];
        for (int i = 0; i < workers.length; i++) {
            workers[i] = new Worker(i + 1);
            workers[i].start();
        }
    }

    public int threads() {
        return threads;
    }

    /** Runs {@code body} over {@code [0, n)} split into at most {@code CHUNKS_PER_THREAD * threads()} chunks; returns when all are done. */
    public void forRange(int n, RangeBody body) {
        if (n <= 0) {
            return;
        }
        if (workers.length == 0 || n == 1 || isNested()) {
            body.run(0, n);
            return;
        }
        if (closed) {
            throw new IllegalStateException("parallel pool is closed");
        }
        dispatch.lock();
        try {
            run(n, body);
        } finally {
            dispatch.unlock();
        }
    }

    private boolean isNested() {
        return dispatch.isHeldByCurrentThread()
                || (Thread.currentThread() instanceof Worker w && w.pool() == this);
    }

    private void run(int n, RangeBody body) {
        long gen = generation + 1;
        this.body = body;
        this.n = n;
        this.chunks = Math.min(n, threads * CHUNKS_PER_THREAD);
        pending.set(chunks);
        claims.set(gen << 32 | (long) chunks << 16);
        generation = gen; // publishes body, n, pending and claims; only the lock holder writes it
        for (Worker w : workers) {
            // Dekker pairing with Worker.awaitJob: either the worker sees the new generation, or we see it parked.
            if (w.parked) {
                LockSupport.unpark(w);
            }
        }
        try {
            runChunks(gen);
        } finally {
            awaitWorkers();
            this.body = null;
        }
        Throwable t = failure.getAndSet(null);
        if (t != null) {
            throw rethrowable(t);
        }
    }

    /** Claims and runs chunks of job {@code gen} until none is left. */
    private void runChunks(long gen) {
        for (int chunk; (chunk = claim(gen)) >= 0; ) {
            int start = bound(chunk);
            int end = bound(chunk + 1);
            try {
                if (start < end) {
                    body.run(start, end);
                }
            } catch (Throwable t) {
                failure.compareAndSet(null, t);
            } finally {
                pending.decrementAndGet();
            }
        }
    }

    /** The next unclaimed chunk of job {@code gen}, or -1 if there is none (or that job is over). */
    private int claim(long gen) {
        while (true) {
            long c = claims.get();
            int next = (int) (c & 0xffff);
            if (c >>> 32 != (gen & 0xffff_ffffL) || next >= (int) ((c >>> 16) & 0xffff)) {
                return -1;
            }
            if (claims.compareAndSet(c, c + 1)) {
                return next;
            }
        }
    }

    /** Start of chunk {@code c} of the current job. */
    private int bound(int c) {
        return bound(n, chunks, c);
    }

    /**
     * Start of chunk {@code c} of {@code [0, n)} split into {@code chunks}: a contiguous,
     * deterministic split in which the first half of the chunks cover three quarters of the range
     * and the second half the last quarter. Threads claim chunks in order, so the last ones to be
     * claimed are the small ones: a thread that runs out of work waits for at most a small chunk of
     * another (callers waited 25-40% less, and loops took 1-5% less time, in steps alternating this
     * split with equal chunks). Equal chunks where the range is too short for that (no chunk is
     * ever empty when {@code n >= chunks}).
     */
    static int bound(int n, int chunks, int c) {
        if (chunks < 4 || n < 2 * chunks) {
            return (int) ((long) n * c / chunks);
        }
        int half = chunks / 2;
        long big = 3L * n / 4;
        if (c <= half) {
            return (int) (big * c / half);
        }
        return (int) (big + (n - big) * (c - half) / (chunks - half));
    }

    private void awaitWorkers() {
        // The workers finish within the same few microseconds as our own chunk unless a core was
        // taken away from them (a shared machine); then yielding lets them run.
        for (int spins = 0; pending.get() != 0; spins++) {
            if (spins < 2_000) {
                Thread.onSpinWait();
            } else {
                Thread.yield();
            }
        }
    }

    private static RuntimeException rethrowable(Throwable t) {
        if (t instanceof RuntimeException re) {
            return re;
        }
        if (t instanceof Error e) {
            throw e;
        }
        return new IllegalStateException("parallel loop failed", t);
    }

    @Override
    public void close() {
        closed = true;
        for (Worker w : workers) {
            LockSupport.unpark(w);
        }
        for (Worker w : workers) {
            try {
                w.join(TimeUnit.SECONDS.toMillis(10));
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                return;
            }
        }
    }

    private final class Worker extends Thread {
        volatile boolean parked;

        Worker(int index) {
            super("pagewarden-kernel-" + index);
            setDaemon(true);
        }

        Parallel pool() {
            return Parallel.this;
        }

        @Override
        public void run() {
            long seen = 0;
            while (true) {
                seen = awaitJob(seen);
                if (closed) {
                    return;
                }
                runChunks(seen);
            }
        }

        /** Spins, then parks, until a generation other than {@code seen} is published or the pool closes. */
        private long awaitJob(long seen) {
            long spinStart = System.nanoTime();
            for (int i = 1; ; i++) {
                long g = generation;
                if (g != seen || closed) {
                    return g;
                }
                if ((i & 1023) == 0 && System.nanoTime() - spinStart > SPIN_NANOS) {
                    parked = true;
                    if (generation == seen && !closed) {
                        LockSupport.park(this);
                    }
                    parked = false;
                    spinStart = System.nanoTime();
                } else {
                    Thread.onSpinWait();
                }
            }
        }
    }
}
