package dev.pagewarden.db.lineage;

import dev.pagewarden.core.lineage.LineageEvent;
import dev.pagewarden.core.lineage.LineageSink;
import dev.pagewarden.db.journal.Journal;

import java.io.IOException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.locks.LockSupport;
import java.util.logging.Level;
import java.util.logging.Logger;

/**
 * The engine's {@link LineageSink}: engine threads put events into a bounded lock-free ring and return;
 * one writer thread drains the ring in batches into the {@link Journal} (one fsync per batch).
 *
 * <p>Nothing is ever dropped. If the ring is full (the disk cannot keep up) {@link #emit} waits for space:
 * the one place the engine can be slowed, counted in {@link #producerWaits()}. {@link #accepting()} is false
 * while the journal is at its cap, the ring is nearly full, or the journal cannot be written, so admission
 * stops taking new work before that happens.
 */
public final class JournalingLineageSink implements LineageSink, AutoCloseable {
    private static final Logger LOG = Logger.getLogger(JournalingLineageSink.class.getName());

    private final Journal journal;
    private final EventRing<LineageEvent> ring;
    private final int batchMax;
    private final long groupCommitNanos;
    private final Thread writer;
    private final AtomicLong emitted = new AtomicLong();
    private final AtomicLong journaled = new AtomicLong();
    private final AtomicLong producerWaits = new AtomicLong();
    private volatile boolean writerParked;
    private volatile boolean running = true;
    private volatile IOException lastError;

    /**
     * Longest an event waits in the ring before its group is appended and fsynced, by default. An fsync on this
     * machine's disk takes 2.5-3.5 ms of wall time and 0.2-0.35 ms of CPU: at a 2 ms window a trickle of events
     * kept the writer fsyncing back to back (~200/s, 4-7% of a core taken from a 2-core engine); at 20 ms it is
     * at most 50/s. Events in the ring are lost on a crash whatever the window; bursts still wake the writer
     * at a half-full batch, so the window bounds only the trickle case.
     */
    public static final Duration DEFAULT_GROUP_COMMIT = Duration.ofMillis(20);

    /**
     * @param ringCapacity events the ring holds (power of two); engine threads wait only when it is full
     * @param batchMax     most events per journal append (one fsync)
     */
    public JournalingLineageSink(Journal journal, int ringCapacity, int batchMax) {
        this(journal, ringCapacity, batchMax, DEFAULT_GROUP_COMMIT);
    }

    /** As above, with the group-commit window (the writer's sleep between appends when events trickle in). */
    public JournalingLineageSink(Journal journal, int ringCapacity, int batchMax, Duration groupCommit) {
        if (groupCommit.isNegative() || groupCommit.isZero()) {
            throw new IllegalArgumentException("group commit window must be positive: " + groupCommit);
        }
        this.journal = journal;
        this.ring = new EventRing<>(ringCapacity);
        this.batchMax = batchMax;
        this.groupCommitNanos = groupCommit.toNanos();
        this.writer = Thread.ofPlatform().name("lineage-journal-writer").daemon().unstarted(this::writeLoop);
        writer.start();
    }

    @Override
    public void emit(LineageEvent event) {
        emitted.incrementAndGet();
        if (!ring.offer(event)) {
            producerWaits.incrementAndGet();
            do {
                LockSupport.unpark(writer);
                LockSupport.parkNanos(50_000);
            } while (!ring.offer(event));
        }
        // Group commit: the writer wakes on its own every groupCommitNanos; waking it for every event
        // would mean an fsync per event and a core taken from the engine on a small machine.
        if (writerParked && ring.size() >= batchMax / 2) {
            LockSupport.unpark(writer);
        }
    }

    @Override
    public boolean accepting() {
        return lastError == null && journal.accepting() && ring.size() < ring.capacity() - ring.capacity() / 8;
    }

    /**
     * The journal side of the audit path, for a health indicator ({@code up} false = admission is paused or
     * the audit trail is damaged).
     *
     * @param detail          why it is down; empty when up
     * @param bytesUsed       journal bytes on disk (not yet acknowledged by the database)
     * @param capBytes        the configured cap; at it admission pauses (fail closed)
     * @param corruption      a damaged record found when the journal was opened (file and offset), or null
     * @param writeError      the append error the writer is retrying, or null
     * @param queuedEvents    events in the ring, not yet journaled
     * @param producerWaits   times an engine thread had to wait for ring space
     */
    public record Health(boolean up, String detail, long bytesUsed, long capBytes, String corruption, String writeError,
                         long queuedEvents, long emittedEvents, long journaledEvents, long producerWaits) {
        public boolean atCap() {
            return bytesUsed >= capBytes;
        }

        public double usedFraction() {
            return capBytes == 0 ? 0 : (double) bytesUsed / capBytes;
        }
    }

    public Health health() {
        long used = journal.bytesOnDisk();
        long cap = journal.config().capBytes();
        IOException err = lastError;
        String corruption = journal.recovery().corruptionDetail();
        long queued = ring.size();
        String detail;
        if (used >= cap) {
            detail = "lineage journal at its cap (" + used + " of " + cap + " bytes): admission paused until the database catches up";
        } else if (err != null) {
            detail = "lineage journal cannot be written: " + err.getMessage();
        } else if (corruption != null) {
            detail = "lineage journal corrupted: " + corruption;
        } else if (queued >= ring.capacity() - ring.capacity() / 8) {
            detail = "lineage ring nearly full (" + queued + " of " + ring.capacity() + "): the journal disk is not keeping up";
        } else {
            detail = "";
        }
        return new Health(detail.isEmpty(), detail, used, cap, corruption, err == null ? null : String.valueOf(err.getMessage()),
                queued, emitted.get(), journaled.get(), producerWaits.get());
    }

    /** Null while healthy; otherwise the journal write error the writer is retrying. */
    public IOException lastError() {
        return lastError;
    }

    public long emitted() {
        return emitted.get();
    }

    /** Events fsynced to the journal. */
    public long journaled() {
        return journaled.get();
    }

    public long producerWaits() {
        return producerWaits.get();
    }

    /** Waits until every event emitted so far is fsynced (tests, orderly shutdown). */
    public boolean flush(long timeout, TimeUnit unit) {
        long target = emitted.get();
        long deadline = System.nanoTime() + unit.toNanos(timeout);
        while (journaled.get() < target) {
            if (System.nanoTime() > deadline) {
                return false;
            }
            LockSupport.unpark(writer);
            LockSupport.parkNanos(100_000);
        }
        return true;
    }

    /** Drains what is queued into the journal and stops the writer; the journal stays open (caller owns it). */
    @Override
    public void close() {
        flush(30, TimeUnit.SECONDS);
        running = false;
        LockSupport.unpark(writer);
        try {
            writer.join(TimeUnit.SECONDS.toMillis(30));
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    /** The writer thread (its CPU time is what the journal costs the engine's cores; benchmarks read it). */
    public Thread writerThread() {
        return writer;
    }

    private void writeLoop() {
        ArrayList<LineageEvent> batch = new ArrayList<>(batchMax);
        long backoffNanos = 1_000_000;
        while (running || ring.size() > 0 || !batch.isEmpty()) {
            if (batch.isEmpty()) {
                // wait for a group to gather (or for a half-full ring, a flush or close to wake us)
                if (ring.size() < batchMax / 2 && running) {
                    writerParked = true;
                    LockSupport.parkNanos(groupCommitNanos);
                    writerParked = false;
                }
                ring.drainTo(batch, batchMax);
                if (batch.isEmpty()) {
                    continue;
                }
            }
            try {
                journal.append(batch);
                journaled.addAndGet(batch.size());
                batch.clear();
                lastError = null;
                backoffNanos = 1_000_000;
            } catch (IOException e) {
                // Keep the batch and retry: the journal cut the half-written bytes; accepting() is false meanwhile.
                if (lastError == null) {
                    LOG.log(Level.SEVERE, "lineage journal append failed; admission paused, retrying", e);
                }
                lastError = e;
                LockSupport.parkNanos(backoffNanos);
                backoffNanos = Math.min(backoffNanos * 2, 1_000_000_000L);
            }
        }
    }
}
