package dev.pagewarden.db.lineage;

import java.util.List;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicLongArray;
import java.util.concurrent.atomic.AtomicReferenceArray;

/**
 * Bounded multi-producer, single-consumer array ring (Vyukov's sequenced cells): a producer claims a
 * slot with one CAS and publishes it with one release store, so engine threads never take a lock and
 * never wait for the consumer unless the ring is full. Capacity is a power of two.
 */
final class EventRing<T> {
    private final int mask;
    private final AtomicReferenceArray<T> items;
    private final AtomicLongArray sequence;
    private final AtomicLong tail = new AtomicLong();
    private long head; // consumer only

    EventRing(int capacity) {
        if (Integer.bitCount(capacity) != 1) {
            throw new IllegalArgumentException("capacity must be a power of two: " + capacity);
        }
        mask = capacity - 1;
        items = new AtomicReferenceArray<>(capacity);
        sequence = new AtomicLongArray(capacity);
        for (int i = 0; i < capacity; i++) {
            sequence.set(i, i);
        }
    }

    int capacity() {
        return mask + 1;
    }

    /** Adds {@code item} unless the ring is full. Any thread. */
    boolean offer(T item) {
        while (true) {
            long pos = tail.get();
            int cell = (int) pos & mask;
            long dif = sequence.getAcquire(cell) - pos;
            if (dif == 0) {
                if (tail.compareAndSet(pos, pos + 1)) {
                    items.setPlain(cell, item);
                    sequence.setRelease(cell, pos + 1);
                    return true;
                }
            } else if (dif < 0) {
                return false; // the consumer has not freed this cell yet: full
            }
            // dif > 0: another producer took this position; reload tail.
        }
    }

    /** Moves up to {@code max} items into {@code out}; returns how many. Consumer thread only. */
    int drainTo(List<T> out, int max) {
        int n = 0;
        while (n < max) {
            int cell = (int) head & mask;
            if (sequence.getAcquire(cell) != head + 1) {
                break; // empty, or the producer of this cell has not published yet
            }
            out.add(items.getPlain(cell));
            items.setPlain(cell, null);
            sequence.setRelease(cell, head + mask + 1);
            head++;
            n++;
        }
        return n;
    }

    /** Approximate count of queued items (racy, for metrics and tests). */
    long size() {
        return Math.max(0, tail.get() - head);
    }
}
