package dev.pagewarden.core.tensor;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

import java.util.concurrent.CountDownLatch;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicIntegerArray;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assertions.assertTimeoutPreemptively;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

class ParallelTest {

    @ParameterizedTest
    @ValueSource(ints = {1, 2, 3, 4})
    void everyIndexRunsExactlyOnceInPiecesThatShrinkTowardsTheEnd(int threads) {
        try (Parallel pool = new Parallel(threads)) {
            for (int n : new int[] {0, 1, 2, 3, 5, 17, 1000, 32000}) {
                AtomicIntegerArray hits = new AtomicIntegerArray(Math.max(n, 1));
                int[] pieceAt = new int[Math.max(n, 1)]; // the size of the piece that starts at each index
                pool.forRange(n, (start, end) -> {
                    assertThat(start).isLessThan(end);
                    pieceAt[start] = end - start; // pieces never overlap, so no two threads write one slot
                    for (int i = start; i < end; i++) {
                        hits.incrementAndGet(i);
                    }
                });
                for (int i = 0; i < n; i++) {
                    assertThat(hits.get(i)).as("index %d of %d", i, n).isEqualTo(1);
                }
                if (threads == 1 || n <= 1) {
                    assertThat(pieceAt[0]).isEqualTo(n); // one call, inline (none for n = 0)
                    continue;
                }
                // pieces in claim order (= address order) never grow, each is 1/(2*threads) of what
                // was left (at least one), and the last is a single index
                int last = Integer.MAX_VALUE;
                int pieces = 0;
                for (int at = 0; at < n; ) {
                    int size = pieceAt[at];
                    assertThat(size).as("n=%d piece at %d", n, at).isEqualTo(Parallel.pieceSize(n - at, threads))
                            .isLessThanOrEqualTo(last);
                    last = size;
                    at += size;
                    pieces++;
                }
                assertThat(last).isEqualTo(1);
                if (n == 32000) {
                    assertThat(pieces).as("claims for n=32000, %d threads", threads).isLessThan(40 * threads);
                }
            }
        }
    }

    @Test
    void pieceSizeIsAFractionOfWhatIsLeftAndNeverZero() {
        assertThat(Parallel.pieceSize(1000, 2)).isEqualTo(250);
        assertThat(Parallel.pieceSize(12, 2)).isEqualTo(3);
        assertThat(Parallel.pieceSize(3, 2)).isEqualTo(1);
        assertThat(Parallel.pieceSize(1, 8)).isEqualTo(1);
    }

    /**
     * Loops of different sizes back to back (each job a different n): a worker still leaving one
     * loop must not claim a piece of the next. A miscounted claim leaves the caller waiting forever
     * or runs an index twice.
     */
    @Test
    void loopsOfChangingSizesBackToBackEachRunEveryIndexOnce() {
        // a lost piece leaves the caller spinning: fail after a minute rather than hang the build
        assertTimeoutPreemptively(java.time.Duration.ofSeconds(60), () -> {
            int[] sizes = {2, 64, 3, 100, 2, 9};
            for (int threads : new int[] {2, 3}) {
                try (Parallel pool = new Parallel(threads)) {
                    int[][] hits = new int[sizes.length][];
                    for (int i = 0; i < sizes.length; i++) {
                        hits[i] = new int[sizes[i]];
                    }
                    for (int iter = 0; iter < 300_000; iter++) {
                        int[] h = hits[iter % sizes.length];
                        pool.forRange(h.length, (start, end) -> {
                            for (int i = start; i < end; i++) {
                                h[i]++;
                            }
                        });
                    }
                    for (int i = 0; i < sizes.length; i++) {
                        for (int j = 0; j < sizes[i]; j++) {
                            assertThat(hits[i][j]).as("threads %d size %d index %d", threads, sizes[i], j)
                                    .isEqualTo(300_000 / sizes.length);
                        }
                    }
                }
            }
        });
    }

    @Test
    void manyShortLoopsInARowAllComplete() {
        try (Parallel pool = new Parallel(2)) {
            long[] sums = new long[64];
            for (int iter = 0; iter < 20_000; iter++) {
                pool.forRange(64, (start, end) -> {
                    for (int i = start; i < end; i++) {
                        sums[i]++;
                    }
                });
            }
            for (long s : sums) {
                assertThat(s).isEqualTo(20_000);
            }
        }
    }

    @Test
    void workersThatParkedAreWokenUp() throws InterruptedException {
        try (Parallel pool = new Parallel(2)) {
            AtomicInteger done = new AtomicInteger();
            for (int i = 0; i < 3; i++) {
                Thread.sleep(20); // far beyond the spin time: the worker parks
                pool.forRange(2, (start, end) -> done.addAndGet(end - start));
            }
            assertThat(done.get()).isEqualTo(6);
        }
    }

    @Test
    void exceptionInAWorkerChunkReachesTheCaller() {
        try (Parallel pool = new Parallel(2)) {
            assertThatThrownBy(() -> pool.forRange(10, (start, end) -> {
                if (start > 0) {
                    throw new IllegalArgumentException("boom in worker");
                }
            })).isInstanceOf(IllegalArgumentException.class).hasMessage("boom in worker");
            // and the pool still works afterwards
            AtomicInteger count = new AtomicInteger();
            pool.forRange(10, (start, end) -> count.addAndGet(end - start));
            assertThat(count.get()).isEqualTo(10);
        }
    }

    @Test
    void exceptionInTheCallerChunkWaitsForWorkersThenPropagates() {
        try (Parallel pool = new Parallel(2)) {
            AtomicInteger othersDone = new AtomicInteger();
            assertThatThrownBy(() -> pool.forRange(10, (start, end) -> {
                if (start == 0) {
                    throw new IllegalStateException("boom in caller");
                }
                othersDone.addAndGet(end - start);
            })).isInstanceOf(IllegalStateException.class).hasMessage("boom in caller");
            // every other piece still ran to its end before the exception came out
            assertThat(othersDone.get()).isEqualTo(10 - Parallel.pieceSize(10, 2));
        }
    }

    @Test
    void errorsPropagateUnwrapped() {
        try (Parallel pool = new Parallel(2)) {
            assertThatThrownBy(() -> pool.forRange(10, (start, end) -> {
                if (start > 0) {
                    throw new AssertionError("worker error");
                }
            })).isInstanceOf(AssertionError.class).hasMessage("worker error");
        }
    }

    @Test
    void nestedLoopsRunInline() {
        try (Parallel pool = new Parallel(2)) {
            AtomicIntegerArray hits = new AtomicIntegerArray(100);
            pool.forRange(10, (start, end) -> {
                for (int i = start; i < end; i++) {
                    int outer = i;
                    pool.forRange(10, (s, e) -> {
                        for (int j = s; j < e; j++) {
                            hits.incrementAndGet(outer * 10 + j);
                        }
                    });
                }
            });
            for (int i = 0; i < 100; i++) {
                assertThat(hits.get(i)).isEqualTo(1);
            }
        }
    }

    @Test
    void concurrentCallersAreSerialisedAndAllComplete() throws InterruptedException {
        try (Parallel pool = new Parallel(2)) {
            int callers = 4;
            long[][] sums = new long[callers][100];
            CountDownLatch go = new CountDownLatch(1);
            Thread[] ts = new Thread[callers];
            for (int c = 0; c < callers; c++) {
                long[] mine = sums[c];
                ts[c] = new Thread(() -> {
                    try {
                        go.await();
                    } catch (InterruptedException e) {
                        return;
                    }
                    for (int iter = 0; iter < 2000; iter++) {
                        pool.forRange(100, (start, end) -> {
                            for (int i = start; i < end; i++) {
                                mine[i]++;
                            }
                        });
                    }
                });
                ts[c].start();
            }
            go.countDown();
            for (Thread t : ts) {
                t.join();
            }
            for (long[] mine : sums) {
                for (long s : mine) {
                    assertThat(s).isEqualTo(2000);
                }
            }
        }
    }

    @Test
    void rejectsBadThreadCountAndUseAfterClose() {
        assertThatThrownBy(() -> new Parallel(0)).isInstanceOf(IllegalArgumentException.class);
        Parallel pool = new Parallel(2);
        pool.close();
        assertThatThrownBy(() -> pool.forRange(10, (s, e) -> { })).isInstanceOf(IllegalStateException.class);
    }
}
