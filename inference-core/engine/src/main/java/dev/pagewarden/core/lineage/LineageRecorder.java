package dev.pagewarden.core.lineage;

import dev.pagewarden.core.lineage.LineageEvent.Kind;
import dev.pagewarden.core.spi.Clock;
import dev.pagewarden.core.lineage.LineageSink;

/**
 * Builds lineage events for one pool of one node and hands them to the sink. One per pool; shares the
 * engine's id source so ids stay unique across pools.
 */
public final class LineageRecorder {
    private final LineageSink sink;
    private final LineageIds ids;
    private final Clock clock;
    private final String node;
    private final String worker;

    /** {@code node}: the node the pool belongs to (see {@link LineageEvent#node}); {@code worker}: the pool. */
    public LineageRecorder(LineageSink sink, LineageIds ids, Clock clock, String node, String worker) {
        this.sink = sink;
        this.ids = ids;
        this.clock = clock;
        this.node = node;
        this.worker = worker;
    }

    public static LineageRecorder none(String worker) {
        return new LineageRecorder(LineageSink.NONE, new LineageIds(0), Clock.SYSTEM, "local", worker);
    }

    public String node() {
        return node;
    }

    public String worker() {
        return worker;
    }

    public boolean enabled() {
        return sink != LineageSink.NONE;
    }

    private long micros() {
        java.time.Instant now = clock.now();
        return now.getEpochSecond() * 1_000_000L + now.getNano() / 1_000;
    }

    /** A page step that concerns one request and no slot range. */
    public void page(Kind kind, int page, long epoch, long requestId, String tenant) {
        if (enabled()) {
            sink.emit(new LineageEvent(ids.next(), kind, micros(), node, worker, page, epoch, requestId, tenant, -1, -1, null,
                    -1, -1, 0, 0, true));
        }
    }

    /** A step on slots [from, to) of a page (WRITE, BIND_READ, READ_FINAL); returns the event's id, 0 when lineage is off. */
    public long slots(Kind kind, int page, long epoch, long requestId, String tenant, int from, int to) {
        if (enabled()) {
            long id = ids.next();
            sink.emit(new LineageEvent(id, kind, micros(), node, worker, page, epoch, requestId, tenant, from, to, null,
                    -1, -1, 0, 0, true));
            return id;
        }
        return 0;
    }

    /** DEFER and DRAIN: a page step tied to a transfer generation. */
    public void generation(Kind kind, int page, long epoch, long requestId, String tenant, int generation) {
        if (enabled()) {
            sink.emit(new LineageEvent(ids.next(), kind, micros(), node, worker, page, epoch, requestId, tenant, -1, -1, null,
                    -1, -1, generation, 0, true));
        }
    }

    /** TRANSFER_OUT / TRANSFER_IN: this pool's page and the page at the other end. */
    public void transfer(Kind kind, int page, long epoch, long requestId, String tenant, int slots, String peerWorker,
                         int peerPage, long peerEpoch, int generation, int checksum) {
        if (enabled()) {
            sink.emit(new LineageEvent(ids.next(), kind, micros(), node, worker, page, epoch, requestId, tenant, 0, slots,
                    peerWorker, peerPage, peerEpoch, generation, checksum, true));
        }
    }

    /**
     * CACHE and REUSE: a whole cached prefix page of the scope whose digest is {@code scopeDigest}; returns the
     * event's id, 0 when lineage is off.
     */
    public long prefix(Kind kind, int page, long epoch, long requestId, String tenant, int slots, long scopeDigest) {
        if (enabled()) {
            long id = ids.next();
            sink.emit(new LineageEvent(id, kind, micros(), node, worker, page, epoch, requestId, tenant, 0, slots,
                    null, -1, scopeDigest, 0, 0, true));
            return id;
        }
        return 0;
    }

    /** VERIFY: the verdict of a handoff check on a page. */
    public void verify(int page, long epoch, long requestId, String tenant, int generation, boolean ok) {
        if (enabled()) {
            sink.emit(new LineageEvent(ids.next(), Kind.VERIFY, micros(), node, worker, page, epoch, requestId, tenant, -1, -1,
                    null, -1, -1, generation, 0, ok));
        }
    }
}
