package dev.pagewarden.db.testing;

import dev.pagewarden.core.lineage.LineageEvent;
import dev.pagewarden.core.lineage.LineageEvent.Kind;

import java.util.concurrent.atomic.AtomicLong;

/** Builds synthetic lineage events for tests: one builder per engine start (node, id prefix), explicit clock. */
public final class Ev {
    /** The node of a builder made without one. */
    public static final String NODE = "node-a";
    private final String node;
    private final long prefix;
    private final AtomicLong counter = new AtomicLong();
    private long timeMicros;

    public Ev(int prefix24, long startMicros) {
        this(NODE, prefix24, startMicros);
    }

    public Ev(String node, int prefix24, long startMicros) {
        this.node = node;
        this.prefix = ((long) prefix24) << 40;
        this.timeMicros = startMicros;
    }

    /** Advances the clock by {@code micros} and returns the new time. */
    public long tick(long micros) {
        return timeMicros += micros;
    }

    public long now() {
        return timeMicros;
    }

    private long id() {
        return prefix | counter.incrementAndGet();
    }

    public LineageEvent allocate(String worker, int page, long epoch, long request, String tenant) {
        return new LineageEvent(id(), Kind.ALLOCATE, tick(1), node, worker, page, epoch, request, tenant, -1, -1, null, -1, -1, 0, 0, true);
    }

    public LineageEvent write(String worker, int page, long epoch, long request, String tenant, int from, int to) {
        return new LineageEvent(id(), Kind.WRITE, tick(1), node, worker, page, epoch, request, tenant, from, to, null, -1, -1, 0, 0, true);
    }

    public LineageEvent transferOut(String worker, int page, long epoch, long request, String tenant, String toWorker,
                                    int toPage, long toEpoch, int generation, int crc) {
        return new LineageEvent(id(), Kind.TRANSFER_OUT, tick(1), node, worker, page, epoch, request, tenant, -1, -1, toWorker,
                toPage, toEpoch, generation, crc, true);
    }

    public LineageEvent transferIn(String worker, int page, long epoch, long request, String tenant, int from, int to,
                                   String fromWorker, int fromPage, long fromEpoch, int generation, int crc) {
        return new LineageEvent(id(), Kind.TRANSFER_IN, tick(1), node, worker, page, epoch, request, tenant, from, to, fromWorker,
                fromPage, fromEpoch, generation, crc, true);
    }

    public LineageEvent read(String worker, int page, long epoch, long request, String tenant, int from, int to) {
        return new LineageEvent(id(), Kind.BIND_READ, tick(1), node, worker, page, epoch, request, tenant, from, to, null, -1, -1, 0, 0, true);
    }

    public LineageEvent readFinal(String worker, int page, long epoch, long request, String tenant, int to) {
        return new LineageEvent(id(), Kind.READ_FINAL, tick(1), node, worker, page, epoch, request, tenant, 0, to, null, -1, -1, 0, 0, true);
    }

    /** CACHE: the writer's full page kept as a cached prefix page of the scope with digest {@code scope}. */
    public LineageEvent cache(String worker, int page, long epoch, long writer, String tenant, int slots, long scope) {
        return new LineageEvent(id(), Kind.CACHE, tick(1), node, worker, page, epoch, writer, tenant, 0, slots, null, -1, scope, 0, 0, true);
    }

    /** REUSE: a reader of scope digest {@code scope} reused a cached prefix page. */
    public LineageEvent reuse(String worker, int page, long epoch, long reader, String tenant, int slots, long scope) {
        return new LineageEvent(id(), Kind.REUSE, tick(1), node, worker, page, epoch, reader, tenant, 0, slots, null, -1, scope, 0, 0, true);
    }

    public LineageEvent release(String worker, int page, long epoch, long request, String tenant) {
        return new LineageEvent(id(), Kind.RELEASE, tick(1), node, worker, page, epoch, request, tenant, -1, -1, null, -1, -1, 0, 0, true);
    }

    public LineageEvent scrub(String worker, int page, long epoch) {
        return scrub(worker, page, epoch, 0, null);
    }

    /** A scrub as the engine records it: naming the quarantined page's last owner. */
    public LineageEvent scrub(String worker, int page, long epoch, long request, String tenant) {
        return new LineageEvent(id(), Kind.SCRUB, tick(1), node, worker, page, epoch, request, tenant, -1, -1, null, -1, -1, 0, 0, true);
    }

    public LineageEvent verify(String worker, int page, long epoch, long request, String tenant, boolean ok) {
        return new LineageEvent(id(), Kind.VERIFY, tick(1), node, worker, page, epoch, request, tenant, -1, -1, null, -1, -1, 0, 0, ok);
    }
}
