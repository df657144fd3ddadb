package dev.pagewarden.core.cluster;

import dev.pagewarden.core.admission.Admission;
import dev.pagewarden.core.request.GenerationRequest;
import dev.pagewarden.core.sequence.Sequence;
import dev.pagewarden.core.transfer.net.ControlMessage;

import java.util.Comparator;
import java.util.List;

/**
 * Places an admitted request on engine nodes: the live decode node with the most free pages that can hold its
 * reservation there (the prompt's pages plus the node's headroom, at most prompt + max new tokens; the whole request
 * must fit its pool) and a live prefill node that can hold the prompt in its free and cached pages: the one that
 * last finished a prompt of the request's cache scope with the same first page (its prefix is likely cached
 * there, see {@link PrefixAffinity}), else the one with the most free pages (none: refused, {@code overloaded};
 * every candidate's lineage backlog at its bound: {@code audit_backpressure}). The limits admission
 * checks against are what the nodes report (vocabulary, window); while none is live, or nodes disagree on the model,
 * nothing is known to check.
 */
final class NodePlacement implements Admission.Placement<Sequence> {
    private final Membership membership;
    private final RemoteRequests requests;
    private final PrefixAffinity affinity;

    NodePlacement(Membership membership, RemoteRequests requests, PrefixAffinity affinity) {
        this.membership = membership;
        this.requests = requests;
        this.affinity = affinity;
    }

    /** What the nodes in rotation accept now; no queue here: a decode node queues what it admits itself. */
    Admission.Limits limits() {
        ClusterView v = membership.view();
        ControlMessage.Status any = v.any();
        if (any == null || v.problem() != null) {
            return Admission.Limits.unknown();
        }
        // each node's pool is checked when it is picked: a request no node can hold is refused as overloaded
        return new Admission.Limits(any.model().vocabSize(), v.window(), Long.MAX_VALUE, Long.MAX_VALUE, 0, false);
    }

    @Override
    public Admission.Room reserve(Sequence seq) {
        GenerationRequest request = seq.request();
        ClusterView now = membership.view();
        ClusterView.Live decode = pickDecode(now.live(NodeRole.DECODE), request);
        ControlMessage.Status any = now.any();
        String prefixKey = any == null ? null : PrefixAffinity.key(request, any.modelId(), any.layout().pageTokens());
        ClusterView.Live prefill = pickPrefill(now.live(NodeRole.PREFILL), request, affinity.node(prefixKey));
        if (decode == null || prefill == null) {
            NodeRole missing = decode == null ? NodeRole.DECODE : NodeRole.PREFILL;
            if (!now.live(missing).isEmpty() && now.live(missing).stream().noneMatch(l -> l.status().lineageAccepting())) {
                // fail closed: every such node holds as many unacknowledged page life steps as it may
                return new Admission.Room.Refused("audit_backpressure", "every live " + missing.label()
                        + " node's lineage backlog is at its bound; retry later");
            }
            return new Admission.Room.Refused("overloaded", "no live " + missing.label() + " node has room for "
                    + (decode == null ? Admission.tokensNeeded(request) + " tokens" : request.promptLength() + " prompt tokens")
                    + " now (" + now.live(NodeRole.DECODE).size() + " decode and " + now.live(NodeRole.PREFILL).size()
                    + " prefill nodes live); retry later");
        }
        membership.take(decode, reservation(decode, request));
        membership.take(prefill, decode.status().layout().pagesFor(request.promptLength()));
        requests.placed(seq, decode, prefill, prefixKey);
        return new Admission.Room.Reserved();
    }

    @Override
    public void start(Sequence seq) {
        requests.send(seq);
    }

    @Override
    public void release(Sequence seq) {
        // nothing held here: the decode node returns its reservation itself
    }

    /** The decode pages {@code r} reserves on {@code node} at admission (decode takes the rest as it goes). */
    private static long reservation(ClusterView.Live node, GenerationRequest r) {
        return Admission.reservationPages(r, r.promptLength(), node.status().layout().pageTokens(),
                node.status().headroomPages());
    }

    /** The decode node with the most free pages that can hold the request's reservation, its pool the whole request. */
    private static ClusterView.Live pickDecode(List<ClusterView.Live> nodes, GenerationRequest r) {
        return nodes.stream().filter(l -> reservation(l, r) <= l.free()
                        && Admission.tokensNeeded(r) <= l.status().pool().capacityTokens() && l.status().lineageAccepting())
                .max(Comparator.comparingLong(ClusterView.Live::free)).orElse(null);
    }

    /**
     * The prefill node that can hold the prompt (in free pages and cached ones it may evict): {@code preferred} when
     * it is one of them, else the one with the most free pages.
     */
    private static ClusterView.Live pickPrefill(List<ClusterView.Live> nodes, GenerationRequest r, String preferred) {
        List<ClusterView.Live> fit = nodes.stream().filter(l -> l.status().layout().pagesFor(r.promptLength())
                        <= l.status().pool().availablePages() - l.taken()
                        && r.promptLength() <= l.status().pool().capacityTokens() && l.status().lineageAccepting())
                .toList();
        for (ClusterView.Live l : fit) {
            if (l.status().node().equals(preferred)) {
                return l;
            }
        }
        return fit.stream().max(Comparator.comparingLong(ClusterView.Live::free)).orElse(null);
    }
}
