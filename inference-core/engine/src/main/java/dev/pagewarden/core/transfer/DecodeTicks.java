package dev.pagewarden.core.transfer;

/**
 * Counts the decode worker's iterations (each one a step when it has work). Transfer delays are
 * expressed in these ticks rather than in milliseconds, so a delayed write lands after the same
 * number of decode steps however fast or loaded the machine is.
 */
public final class DecodeTicks {
    private long now;

    public synchronized long now() {
        return now;
    }

    /** One decode iteration began. */
    public synchronized void advance() {
        now++;
        notifyAll();
    }

    /**
     * Waits until the count reaches {@code target}; gives up after {@code maxMillis} (a stopped
     * engine advances no more). Returns whether it was reached.
     */
    public synchronized boolean awaitAtLeast(long target, long maxMillis) throws InterruptedException {
        long deadline = System.nanoTime() + maxMillis * 1_000_000L;
        while (now < target) {
            long left = (deadline - System.nanoTime()) / 1_000_000L;
            if (left <= 0) {
                return false;
            }
            wait(left);
        }
        return true;
    }
}
