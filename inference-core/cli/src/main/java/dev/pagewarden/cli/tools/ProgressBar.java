package dev.pagewarden.cli.tools;

import java.io.PrintStream;
import java.util.Locale;
import java.util.function.LongConsumer;
import java.util.function.LongFunction;

/**
 * Byte progress on stderr: percent, bytes and rate. On a console it redraws one line at most ten
 * times a second; otherwise (logs, CI) it prints a line every ten percent so output stays short.
 */
public final class ProgressBar implements LongConsumer {
    /** Smaller outputs finish too fast for progress to be worth showing. */
    static final long MIN_BYTES = 64L << 20;
    private static final long REDRAW_NANOS = 100_000_000L;

    private final PrintStream err;
    private final String label;
    private final long total;
    private final boolean console;
    /** Counting bytes (sizes and a rate are shown) or plain steps. */
    private final boolean bytes;
    private final long startNanos = System.nanoTime();
    private long lastDraw;
    private int lastDecile = -1;

    public ProgressBar(PrintStream err, String label, long total, boolean console) {
        this(err, label, total, console, true);
    }

    private ProgressBar(PrintStream err, String label, long total, boolean console, boolean bytes) {
        this.err = err;
        this.label = label;
        this.total = Math.max(1, total);
        this.console = console;
        this.bytes = bytes;
    }

    /** Progress over {@code total} steps of work (benchmark runs, say) rather than bytes. */
    public static ProgressBar steps(PrintStream err, String label, long total) {
        return new ProgressBar(err, label, total, err == System.err && System.console() != null
                && System.console().isTerminal(), false);
    }

    /** A factory for writers that learn their total size late: a bar for large outputs, silence otherwise. */
    public static LongFunction<LongConsumer> forStderr(PrintStream err, String label) {
        return forStderr(err, label, MIN_BYTES);
    }

    /** Like {@link #forStderr(PrintStream, String)} with the caller's threshold (downloads show smaller files). */
    public static LongFunction<LongConsumer> forStderr(PrintStream err, String label, long minBytes) {
        boolean console = err == System.err && System.console() != null && System.console().isTerminal();
        return total -> total < minBytes ? done -> { } : new ProgressBar(err, label, total, console);
    }

    @Override
    public void accept(long done) {
        long now = System.nanoTime();
        boolean finished = done >= total;
        if (console) {
            if (finished || now - lastDraw >= REDRAW_NANOS) {
                lastDraw = now;
                err.print("\r" + line(done, now) + (finished ? "\n" : ""));
                err.flush();
            }
        } else {
            int decile = (int) Math.min(10, done * 10 / total);
            if (decile > lastDecile) {
                lastDecile = decile;
                err.println(line(done, now));
            }
        }
    }

    String line(long done, long now) {
        double seconds = Math.max(1e-9, (now - startNanos) / 1e9);
        if (!bytes) {
            return String.format(Locale.ROOT, "%s %3d%% %d / %d  %.1f s", label, done * 100 / total, done, total, seconds);
        }
        return String.format(Locale.ROOT, "%s %3d%% %s / %s  %s/s", label, done * 100 / total, mb(done), mb(total),
                mb((long) (done / seconds)));
    }

    /** Bytes as decimal megabytes, e.g. {@code 438.8 MB}. */
    static String mb(long bytes) {
        return String.format(Locale.ROOT, "%.1f MB", bytes / 1e6);
    }
}
