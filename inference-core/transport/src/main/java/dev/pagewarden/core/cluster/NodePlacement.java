package dev.pagewarden.core.cluster;

import dev.pagewarden.core.admission.Admission;
import dev.pagewarden.core.request.GenerationRequest;
import dev.pagewarden.core.sequence.Sequence;
import dev.pagewarden.core.transfer.net.ControlMessage;

import java.util.Comparator;
import java.util.List;

/**
 * Places an admitted request on engine nodes: the live decode node with the most free pages that can hold prompt +
 * max new tokens and the live prefill node with the most free pages that can hold the prompt (none: refused, {@code
 * overloaded}; every candidate's lineage backlog at its bound: {@code audit_backpressure}). The limits admission
 * checks against are what the nodes report (vocabulary, window); while none is live, or nodes disagree on the model,
 * nothing is known to check.
 */
final class NodePlacement implements Admission.Placement<Sequence> {
    private final Membership membership;
    private final RemoteRequests requests;

    NodePlacement(Membership membership, RemoteRequests requests) {
        this.membership = membership;
        this.requests = requests;
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
        ClusterView.Live decode = pick(now.live(NodeRole.DECODE), request, true);
        ClusterView.Live prefill = pick(now.live(NodeRole.PREFILL), request, false);
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
        membership.take(decode, Admission.pagesNeeded(request, decode.status().layout().pageTokens()));
        membership.take(prefill, decode.status().layout().pagesFor(request.promptLength()));
        requests.placed(seq, decode, prefill);
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

    /** The node of {@code nodes} with the most free pages that can hold the request (its whole reservation on decode). */
    private static ClusterView.Live pick(List<ClusterView.Live> nodes, GenerationRequest r, boolean decode) {
        return nodes.stream().filter(l -> {
            int pt = l.status().layout().pageTokens();
            long pages = decode ? Admission.pagesNeeded(r, pt) : l.status().layout().pagesFor(r.promptLength());
            long tokens = decode ? Admission.tokensNeeded(r) : r.promptLength();
            return pages <= l.free() && tokens <= l.status().pool().capacityTokens() && l.status().lineageAccepting();
        }).max(Comparator.comparingLong(ClusterView.Live::free)).orElse(null);
    }
}
