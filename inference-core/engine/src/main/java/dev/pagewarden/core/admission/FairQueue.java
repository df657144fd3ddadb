package dev.pagewarden.core.admission;

import dev.pagewarden.core.sequence.SequenceView;
import dev.pagewarden.core.spi.EngineMetrics;

import java.util.ArrayDeque;
import java.util.HashMap;
import java.util.Iterator;
import java.util.Map;

/**
 * The requests waiting for admission, served fairly between tenants: a virtual token counter per tenant, as in
 * "Fairness in Serving Large Language Models" (Sheng et al., OSDI 2024). Each tenant has a FIFO of its own; the next
 * request is the head of the tenant whose counter - the tokens it was served (prompt and generated), divided by its
 * weight - is the smallest. Ties go to the tenant served least recently, then to the head that has waited longest:
 * a tenant back from idle is lifted to the counter of one whose requests are running, and goes first rather than
 * waiting for one of them to end. A tenant flooding the queue is served its share and no more, so another tenant's
 * request waits for about one turn, not behind the flood.
 *
 * <p>Credit is not banked: a tenant that starts waiting after being idle has its counter lifted to the smallest
 * counter of the tenants waiting (or, when nobody waits, to the counter the last admitted request was chosen at),
 * so an hour of silence buys no burst that would shut others out.
 *
 * <p>Head of line: each decision re-picks the tenant with the least service, and if its head does not fit yet nobody
 * is admitted (see {@link Admission}). A large request therefore waits only for room and for its tenant's turn; no
 * stream of smaller requests can pass it for long, because every tenant that is served gains on its counter until
 * the large request's tenant is the least served again.
 *
 * <p>Not thread-safe: {@link Admission} calls it under its own lock.
 */
final class FairQueue<S extends SequenceView> {
    private final EngineMetrics metrics;
    /** Tenants waiting, or served recently enough that their counter still says something. */
    private final Map<String, Tenant<S>> tenants = new HashMap<>();
    private int size;
    /** Counters of tenants that start waiting are lifted to at least this: the counter of the last request admitted. */
    private double floor;
    private long arrivals;
    private long charges;

    private static final class Tenant<S> {
        final String id;
        final ArrayDeque<Entry<S>> waiting = new ArrayDeque<>();
        int weight = 1;
        /** Tokens served divided by weight, lifted when the tenant starts waiting after being idle. */
        double counter;
        /** When it was last charged, in charges; 0: not since it was (re)created. */
        long lastServed;

        Tenant(String id) {
            this.id = id;
        }
    }

    /** A waiting request and when it arrived (the tie-break between tenants of equal service). */
    private record Entry<S>(S seq, long arrival) {
    }

    FairQueue(EngineMetrics metrics) {
        this.metrics = metrics;
    }

    int size() {
        return size;
    }

    boolean isEmpty() {
        return size == 0;
    }

    /** Requests of {@code tenant} waiting now. */
    int queued(String tenant) {
        Tenant<S> t = tenants.get(tenant);
        return t == null ? 0 : t.waiting.size();
    }

    /** Adds {@code seq} at the back of its tenant's queue (the caller checked the bound). */
    void add(S seq) {
        Tenant<S> t = tenant(seq);
        if (t.waiting.isEmpty()) {
            lift(t);
        }
        t.waiting.addLast(new Entry<>(seq, arrivals++));
        grew(t);
    }

    /**
     * Puts {@code seq} back at the head of its tenant's queue: a request that had been admitted and must wait again
     * (its pages taken back) goes first among its tenant's, and keeps its counter (it was being served, not idle).
     * Not bounded by the queue's size: it had a place already.
     */
    void requeueFront(S seq) {
        Tenant<S> t = tenant(seq);
        // its original arrival is unknown here; the oldest possible keeps it ahead of ties, as it was admitted once
        t.waiting.addFirst(new Entry<>(seq, Long.MIN_VALUE));
        grew(t);
    }

    /** The request to admit next: the head of the least served tenant; null when nobody waits. */
    S peek() {
        Tenant<S> t = next();
        return t == null ? null : t.waiting.peekFirst().seq();
    }

    /** Removes what {@link #peek} returns: it is admitted (then {@link #admitted} charges it) or refused. */
    S poll() {
        Tenant<S> t = next();
        if (t == null) {
            return null;
        }
        S seq = t.waiting.pollFirst().seq();
        shrank(t);
        return seq;
    }

    /** Removes {@code seq} wherever it waits (an abort); whether it was waiting. */
    boolean remove(S seq) {
        Tenant<S> t = tenants.get(seq.tenant());
        if (t == null) {
            return false;
        }
        for (Iterator<Entry<S>> it = t.waiting.iterator(); it.hasNext(); ) {
            if (it.next().seq() == seq) {
                it.remove();
                shrank(t);
                return true;
            }
        }
        return false;
    }

    /**
     * {@code seq}, taken from this queue, got its reservation: its tenant is charged its prompt now, and the counter
     * it was chosen at becomes the floor for tenants that start waiting later.
     */
    void admitted(S seq) {
        Tenant<S> t = tenant(seq);
        floor = Math.max(floor, t.counter);
        charge(t, seq.request().promptLength());
        forgetIdle();
    }

    /**
     * {@code seq} got its reservation without waiting (nobody was): its tenant is lifted first, like any tenant that
     * starts waiting after being idle, then charged as in {@link #admitted}.
     */
    void admittedAtOnce(S seq) {
        Tenant<S> t = tenant(seq);
        t.counter = Math.max(t.counter, floor);
        admitted(seq);
    }

    /**
     * Charges {@code tokens} generated for {@code tenant}. VTC charges as tokens are served, not when a request ends: a
     * tenant whose long generations are still running is already ahead of one whose single request waits, so the
     * waiting one is chosen at the next free room rather than after the long ones finish.
     */
    void served(String tenant, long tokens) {
        Tenant<S> t = tenants.get(tenant);
        if (t == null) {
            // forgotten while idle and below the floor: charge from the floor, where it would have been lifted to
            t = new Tenant<>(tenant);
            t.counter = floor;
            tenants.put(tenant, t);
        }
        charge(t, tokens);
    }

    /** The tenant's counter now (tokens served / weight, lifted), for tests. */
    double counter(String tenant) {
        Tenant<S> t = tenants.get(tenant);
        return t == null ? floor : t.counter;
    }

    private void charge(Tenant<S> t, long tokens) {
        t.counter += (double) tokens / t.weight;
        t.lastServed = ++charges;
        metrics.tenantServed(t.id, tokens);
    }

    private Tenant<S> tenant(S seq) {
        Tenant<S> t = tenants.computeIfAbsent(seq.tenant(), id -> {
            Tenant<S> fresh = new Tenant<>(id);
            fresh.counter = floor;
            return fresh;
        });
        // the latest request says the tenant's weight as its operator set it now
        t.weight = seq.request().weight();
        return t;
    }

    /** No banked credit: lifted to the least counter of those waiting, or to the floor when nobody waits. */
    private void lift(Tenant<S> t) {
        double least = Double.MAX_VALUE;
        for (Tenant<S> o : tenants.values()) {
            if (o != t && !o.waiting.isEmpty()) {
                least = Math.min(least, o.counter);
            }
        }
        t.counter = Math.max(t.counter, least == Double.MAX_VALUE ? floor : least);
    }

    private Tenant<S> next() {
        Tenant<S> best = null;
        for (Tenant<S> t : tenants.values()) {
            if (t.waiting.isEmpty()) {
                continue;
            }
            if (best == null || before(t, best)) {
                best = t;
            }
        }
        return best;
    }

    private static boolean before(Tenant<?> a, Tenant<?> b) {
        if (a.counter != b.counter) {
            return a.counter < b.counter;
        }
        if (a.lastServed != b.lastServed) {
            return a.lastServed < b.lastServed;
        }
        return a.waiting.peekFirst().arrival() < b.waiting.peekFirst().arrival();
    }

    /**
     * Drops idle tenants at or below the floor: they would be lifted to it anyway when they come back, so their entry
     * says nothing. Keeps the map to the tenants waiting or ahead of the floor.
     */
    private void forgetIdle() {
        tenants.values().removeIf(t -> t.waiting.isEmpty() && t.counter <= floor);
    }

    private void grew(Tenant<S> t) {
        size++;
        metrics.tenantQueued(t.id, t.waiting.size());
    }

    private void shrank(Tenant<S> t) {
        size--;
        metrics.tenantQueued(t.id, t.waiting.size());
    }
}
