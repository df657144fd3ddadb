package dev.pagewarden.incident.audit;

import java.time.Clock;

/**
 * How many unauthenticated refusals per minute get an audit row of their own. Past the budget they
 * are only counted; the next admitted row carries how many were left out, so the trail stays
 * complete in number while an anonymous flood cannot grow the table without bound.
 */
final class RefusalBudget {
    private final int perMinute;
    private final Clock clock;
    private long minute = Long.MIN_VALUE;
    private int admitted;
    private int leftOut;

    RefusalBudget(int perMinute, Clock clock) {
        this.perMinute = perMinute;
        this.clock = clock;
    }

    /** -1: no row for this one; otherwise a row, and how many were left out since the last admitted one. */
    synchronized int admit() {
        long now = clock.millis() / 60_000;
        if (now != minute) {
            minute = now;
            admitted = 0;
        }
        if (admitted >= perMinute) {
            leftOut++;
            return -1;
        }
        admitted++;
        int before = leftOut;
        leftOut = 0;
        return before;
    }
}
