package dev.pagewarden.core.tensor;

import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;
import java.util.concurrent.locks.LockSupport;
import java.util.concurrent.locks.ReentrantLock;

/**
 * A fixed set of worker threads that runs a loop over {@code [0, n)} in contiguous pieces. Each
 * index is computed by exactly one thread with the same code, so results never depend on the
 * thread count or the split (batch invariance needs that).
 *
 * <p>Built for many short loops: a decode step issues ~60 parallel loops of tens to hundreds of
 * microseconds each, so dispatch must cost microseconds, not the tens of microseconds of an
 * executor. A loop is published by bumping a volatile generation counter; workers that finished a
 * job moments ago are still spinning on that counter and start at once, workers idle for longer
 * than {@link #SPIN_NANOS} have parked and are unparked.
 *
 * <p>The pieces are claimed as the threads go (guided self-scheduling): each claim takes
 * {@code 1 / (2 * threads)} of what is left, at least one index, so claims start large (few
 * restarts of a memory-bound matmul's weight streams) and shrink to single indices at the end.
 * A thread that starts late or runs slower (a shared machine) simply claims less, and whoever runs
 * out of work waits for at most one small piece of the other. (Pieces fixed in advance - four per
 * thread, large ones first - left the caller of a batch-1 decode step waiting for the worker's
 * last piece for 6-13% of its loops' time: on a shared machine the two threads do not run at the
 * same speed.) The caller claims too, and then spins until the pieces it did not run are done.
 *
 * <p>Calls from several threads are serialised; a call from inside a running loop body (nested
 * parallelism) runs inline on the calling thread. An exception thrown by any piece is rethrown to
 * the caller after all pieces have finished.
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

    private final int threads;
    private final Worker[] workers;
    private final ReentrantLock dispatch = new ReentrantLock();

    // The current job. Plain fields: written by the caller before the volatile write of
    // `generation`, read by workers after they have seen the new generation.
    private RangeBody body;
    private int n;

    private volatile long generation;
    private volatile boolean closed;
    /**
     * Claims of the current job in one word: the low 32 bits of its generation, then the first
     * index not claimed yet. The caller moves it to a new generation before it changes {@link #n}:
     * a worker still leaving the previous job that reads the new {@code n} then fails its
     * compare-and-set, so it can never claim indices of a job it does not run.
     */
    private final AtomicLong claims = new AtomicLong(-1L << 32);
    /** Indices of the current job not finished yet. */
    private final AtomicInteger pending = new AtomicInteger();
    private final AtomicReference<Throwable> failure = new AtomicReference<>();

    /** A sanity bound: kernel threads beyond the cores only take turns. */
    static final int MAX_THREADS = 4096;

    public Parallel(int threads) {
        if (threads < 1 || threads > MAX_THREADS) {
            throw new IllegalArgumentException("threads must be in [1, " + MAX_THREADS + "], got " + threads);
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

    /** Runs {@code body} over {@code [0, n)}, split into contiguous pieces over the threads; returns when all are done. */
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
        claims.set((gen & 0xffff_ffffL) << 32); // before n changes (see claims)
        this.body = body;
        this.n = n;
        pending.set(n);
        generation = gen; // publishes body, n, pending and claims; only the lock holder writes it
        for (Worker w : workers) {
            // Dekker pairing with Worker.awaitJob: either the worker sees the new generation, or we see it parked.
            if (w.parked) {
                LockSupport.unpark(w);
            }
        }
        try {
            runPieces(gen);
        } finally {
            awaitWorkers();
            this.body = null;
        }
        Throwable t = failure.getAndSet(null);
        if (t != null) {
            throw rethrowable(t);
        }
    }

    /** Claims and runs pieces of job {@code gen} until none is left. */
    private void runPieces(long gen) {
        for (long piece; (piece = claim(gen)) >= 0; ) {
            int start = (int) (piece >>> 32);
            int end = (int) piece;
            try {
                body.run(start, end);
            } catch (Throwable t) {
                failure.compareAndSet(null, t);
            } finally {
                pending.addAndGet(start - end);
            }
        }
    }

    /**
     * The next piece of job {@code gen} as {@code start << 32 | end}, or -1 if nothing is left (or
     * that job is over): {@link #pieceSize} of what is left.
     */
    private long claim(long gen) {
        while (true) {
            long c = claims.get();
            if (c >>> 32 != (gen & 0xffff_ffffL)) {
                return -1;
            }
            int next = (int) c;
            int left = n - next;
            if (left <= 0) {
                return -1;
            }
            int take = pieceSize(left, threads);
            if (claims.compareAndSet(c, c + take)) {
                return (long) next << 32 | (next + take);
            }
        }
    }

    /** Size of the next piece when {@code left} indices are unclaimed: 1 / (2 * threads) of them, at least one. */
    static int pieceSize(int left, int threads) {
        return Math.max(1, left / (2 * threads));
    }

    private void awaitWorkers() {
        // The workers finish within the same few microseconds as our own piece unless a core was
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
                runPieces(seen);
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
