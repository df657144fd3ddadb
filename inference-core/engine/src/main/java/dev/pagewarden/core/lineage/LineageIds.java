package dev.pagewarden.core.lineage;

import java.security.SecureRandom;
import java.util.concurrent.atomic.AtomicLong;

/**
 * Event ids unique across engine restarts without coordination: the top 24 bits are random per
 * engine start, the low 40 bits count events (a trillion per start). A duplicate shipped after a
 * crash carries the same id and is ignored by the database.
 */
public final class LineageIds {
    private final long prefix;
    private final AtomicLong counter = new AtomicLong();

    public LineageIds() {
        this(new SecureRandom().nextInt(1 << 24));
    }

    LineageIds(int prefix24) {
        this.prefix = ((long) (prefix24 & 0xFFFFFF)) << 40;
    }

    public long next() {
        return prefix | (counter.incrementAndGet() & 0xFF_FFFF_FFFFL);
    }
}
