package dev.pagewarden.core.cluster;

import dev.pagewarden.core.lineage.LineageEvent;
import dev.pagewarden.core.lineage.LineageSink;
import dev.pagewarden.core.transfer.net.ControlMessage;
import dev.pagewarden.core.transfer.net.ControlPeer;

import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;

/**
 * A node's page life steps on their way to the platform: every event is numbered and kept here until the
 * platform acknowledges it (LINEAGE_ACK), and sent (LINEAGE, in batches) to every platform connection from the
 * first unacknowledged one, so that a lost connection loses nothing: the next one gets them again (the platform's
 * journal and {@code kv_lineage} ignore an event id they already hold).
 *
 * <p>{@link #emit} never blocks and never drops: the engine's workers call it. Past {@code bound} unacknowledged
 * events {@link #accepting()} is false, and the node admits no new request (fail closed, as a full journal does
 * on the platform) until the platform catches up; requests already admitted finish, so the backlog can grow past
 * the bound by what they still emit.
 */
final class LineageOutbox implements LineageSink {
    static final int DEFAULT_BOUND = 1 << 16;
    /** Events per LINEAGE message: a batch stays far below the control frame limit. */
    static final int BATCH = 512;

    private final LineageSink local;
    private final int bound;
    /** Guarded by this: unacknowledged events, oldest first, and the number the next one gets. */
    private final ArrayDeque<Numbered> pending = new ArrayDeque<>();
    private long next = 1;
    /** Each platform connection and the number of the last event sent on it. */
    private final Map<ControlPeer, Long> sent = new ConcurrentHashMap<>();

    private record Numbered(long seq, LineageEvent event) {
    }

    /** Events also go to {@code local} (an application's own sink; {@link LineageSink#NONE} for none). */
    LineageOutbox(LineageSink local, int bound) {
        if (bound < 1) {
            throw new IllegalArgumentException("lineage buffer must hold at least 1 event, got " + bound);
        }
        this.local = local;
        this.bound = bound;
    }

    @Override
    public void emit(LineageEvent event) {
        local.emit(event);
        synchronized (this) {
            pending.addLast(new Numbered(next++, event));
        }
    }

    @Override
    public boolean accepting() {
        return backlog() < bound && local.accepting();
    }

    synchronized int backlog() {
        return pending.size();
    }

    /** A platform connection: it gets every unacknowledged event, the oldest first. */
    void subscribe(ControlPeer platform) {
        sent.put(platform, 0L);
    }

    void unsubscribe(ControlPeer platform) {
        sent.remove(platform);
    }

    /** The platform has every event numbered up to {@code upTo}. */
    void acknowledged(ControlPeer from, long upTo) {
        if (!sent.containsKey(from)) {
            return; // not a platform connection
        }
        synchronized (this) {
            while (!pending.isEmpty() && pending.peekFirst().seq() <= upTo) {
                pending.removeFirst();
            }
        }
    }

    /** Sends each platform connection what it has not had yet (off the workers: the node's ticker calls this). */
    void flush() {
        for (Map.Entry<ControlPeer, Long> e : sent.entrySet()) {
            ControlPeer peer = e.getKey();
            long after = e.getValue();
            while (true) {
                List<LineageEvent> batch = new ArrayList<>();
                long first = 0;
                synchronized (this) {
                    Iterator<Numbered> it = pending.iterator();
                    while (it.hasNext() && batch.size() < BATCH) {
                        Numbered n = it.next();
                        if (n.seq() > after) {
                            if (batch.isEmpty()) {
                                first = n.seq();
                            }
                            batch.add(n.event());
                        }
                    }
                }
                if (batch.isEmpty() || !peer.send(new ControlMessage.Lineage(first, batch))) {
                    break; // a closed connection: its events stay here for the next one
                }
                after = first + batch.size() - 1;
                sent.replace(peer, after);
            }
        }
    }
}
