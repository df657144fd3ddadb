package dev.pagewarden.core.tensor;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;

/**
 * Measures memory read bandwidth the way the matmul kernels read weights: the same threads, the
 * same contiguous split, vector loads from an off-heap buffer. The engine's {@code bench} command
 * reports its own throughput as a fraction of this figure.
 */
public final class Bandwidth {
    private Bandwidth() {
    }

    /** Unit of the split between threads; each thread reads a contiguous run of pieces. */
    private static final long PIECE = 1 << 20;

    /**
     * Reads an off-heap buffer of about {@code bytes} (rounded down to whole MiB; choose it far
     * larger than the last-level cache, e.g. 1 GiB) {@code repetitions} times with all threads of
     * {@code pool}, and returns the best rate in GB/s (10^9 bytes per second).
     *
     * <p>Best, not median: on a shared machine, other tenants and the OS can only slow a pass down,
     * never speed it up, so the fastest pass is the closest estimate of what the memory system can
     * deliver; a fraction of it is then a conservative efficiency figure. Use the best of repeated
     * runs for the throughput being compared, too.
     */
    public static double readGBs(Parallel pool, long bytes, int repetitions) {
        if (repetitions < 1) {
            throw new IllegalArgumentException("need at least 1 repetition, got " + repetitions);
        }
        try (Probe probe = new Probe(bytes, Kernels.ROWS)) {
            return probe.best(pool, repetitions);
        }
    }

    /** A buffer that can be timed again and again, e.g. interleaved with other measurements. */
    public static final class Probe implements AutoCloseable {
        private final Arena arena = Arena.ofShared();
        private final MemorySegment buffer;
        private final RowKernels kernels;
        private final float[] sink;

        /** A probe over about {@code bytes} (whole MiB) read with the default kernels. */
        public Probe(long bytes) {
            this(bytes, Kernels.ROWS);
        }

        Probe(long bytes, RowKernels kernels) {
            long pieces = bytes / PIECE;
            if (pieces < 1 || pieces > Integer.MAX_VALUE) {
                arena.close();
                throw new IllegalArgumentException("need at least 1 MiB, got " + bytes + " bytes");
            }
            this.kernels = kernels;
            // the same kind of memory the weights live in (huge pages where available): a fair ceiling
            this.buffer = HostMemory.allocate(arena, pieces * PIECE);
            buffer.fill((byte) 0x3c); // commits the pages before timing
            this.sink = new float[(int) pieces];
            // Compile the read loop on a cache-resident prefix before timing.
            for (int i = 0; i < 2000; i++) {
                sink[0] += kernels.readAll(buffer, 0, PIECE / 4);
            }
        }

        /** One timed pass over the whole buffer; GB/s. */
        public double pass(Parallel pool) {
            long t0 = System.nanoTime();
            pool.forRange(sink.length, (start, end) ->
                    sink[start] += kernels.readAll(buffer, start * PIECE, end * PIECE));
            long t1 = System.nanoTime();
            if (Float.isNaN(sink[0])) {
                throw new AssertionError("unreachable: keeps the reads alive");
            }
            return (double) buffer.byteSize() / (t1 - t0);
        }

        /** The best of {@code passes} timed passes; GB/s. */
        public double best(Parallel pool, int passes) {
            double best = 0;
            for (int i = 0; i < passes; i++) {
                best = Math.max(best, pass(pool));
            }
            return best;
        }

        @Override
        public void close() {
            arena.close();
        }
    }
}
