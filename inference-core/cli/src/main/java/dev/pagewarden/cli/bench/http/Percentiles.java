package dev.pagewarden.cli.bench.http;

import java.util.Arrays;

/** Nearest-rank percentiles: the smallest sample with at least p% of all samples at or below it. */
public final class Percentiles {
    private Percentiles() {
    }

    /** {@code p} in (0, 100]; NaN for no samples. Does not modify {@code samples}. */
    public static double of(long[] samples, double p) {
        if (!(p > 0 && p <= 100)) {
            throw new IllegalArgumentException("percentile must be in (0, 100], got " + p);
        }
        if (samples.length == 0) {
            return Double.NaN;
        }
        long[] sorted = samples.clone();
        Arrays.sort(sorted);
        int rank = (int) Math.ceil(p / 100.0 * sorted.length);
        return sorted[Math.max(1, rank) - 1];
    }
}
