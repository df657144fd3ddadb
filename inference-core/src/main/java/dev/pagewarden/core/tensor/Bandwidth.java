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
        return measure(pool, bytes, repetitions, Kernels.ROWS);
    }

    static double measure(Parallel pool, long bytes, int repetitions, RowKernels kernels) {
        long pieces = bytes / PIECE;
        if (pieces < 1 || pieces > Integer.MAX_VALUE || repetitions < 1) {
            throw new IllegalArgumentException("need at least 1 MiB and 1 repetition, got " + bytes + " bytes, "
                    + repetitions + " repetitions");
        }
        try (Arena arena = Arena.ofShared()) {
            MemorySegment buffer = arena.allocate(pieces * PIECE, 4096);
            buffer.fill((byte) 0x3c); // commits the pages before timing
            float[] sink = new float[(int) pieces];
            // Compile the read loop on a cache-resident prefix before timing.
            for (int i = 0; i < 2000; i++) {
                sink[0] += kernels.readAll(buffer, 0, Math.min(PIECE, buffer.byteSize()) / 4);
            }
            double best = 0;
            for (int rep = 0; rep < repetitions; rep++) {
                long t0 = System.nanoTime();
                pool.forRange((int) pieces, (start, end) ->
                        sink[start] += kernels.readAll(buffer, start * PIECE, end * PIECE));
                long t1 = System.nanoTime();
                best = Math.max(best, (double) buffer.byteSize() / (t1 - t0));
            }
            if (Float.isNaN(sum(sink))) {
                throw new AssertionError("unreachable: keeps the reads alive");
            }
            return best;
        }
    }

    private static float sum(float[] values) {
        float s = 0;
        for (float v : values) {
            s += v;
        }
        return s;
    }
}
