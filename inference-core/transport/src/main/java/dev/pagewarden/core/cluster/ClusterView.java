package dev.pagewarden.core.cluster;

import dev.pagewarden.core.transfer.net.ControlMessage;
import dev.pagewarden.core.transfer.net.ControlPeer;

import java.util.ArrayList;
import java.util.Collection;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;

/** The live nodes by role, as a request is routed by, and why nothing may be routed ({@code problem}; null: fine). */
record ClusterView(Map<NodeRole, List<Live>> byRole, String problem) {

    /** A node in rotation: its last STATUS and the pages routed there since. */
    record Live(Member member, ControlPeer peer, ControlMessage.Status status, long taken) {
        long free() {
            return status.pool().freePages() - taken;
        }
    }

    /** The members in rotation now: connected, reporting, heard within {@code staleNanos} and not leaving. */
    static ClusterView of(Collection<Member> members, long staleNanos) {
        long now = System.nanoTime();
        Map<NodeRole, List<Live>> byRole = new TreeMap<>();
        for (NodeRole r : NodeRole.values()) {
            byRole.put(r, new ArrayList<>());
        }
        for (Member m : members) {
            if (!m.leaving && m.state instanceof Member.State.Connected c && c.status() != null
                    && now - c.seen() <= staleNanos && c.peer().isOpen()) {
                byRole.get(m.role).add(new Live(m, c.peer(), c.status(), c.taken()));
            }
        }
        String problem = null;
        ControlMessage.Status first = null;
        for (List<Live> l : byRole.values()) {
            for (Live x : l) {
                if (first == null) {
                    first = x.status;
                } else if (!first.modelId().equals(x.status.modelId()) || !first.layout().equals(x.status.layout())
                        || first.model().vocabSize() != x.status.model().vocabSize()) {
                    problem = "engine nodes disagree: " + first.node() + " serves " + first.modelId() + " with pages of "
                            + first.layout() + ", " + x.status.node() + " serves " + x.status.modelId() + " with pages of "
                            + x.status.layout() + "; no request is routed until every node serves the same model";
                }
            }
        }
        return new ClusterView(byRole, problem);
    }

    List<Live> live(NodeRole r) {
        return byRole.getOrDefault(r, List.of());
    }

    ControlMessage.Status any() {
        for (List<Live> l : byRole.values()) {
            if (!l.isEmpty()) {
                return l.getFirst().status();
            }
        }
        return null;
    }

    /** The window of the cluster: what the best decode node and the best prefill node both accept. */
    int window() {
        int decode = live(NodeRole.DECODE).stream().mapToInt(l -> l.status.contextWindow()).max().orElse(0);
        int prefill = live(NodeRole.PREFILL).stream().mapToInt(l -> l.status.contextWindow()).max().orElse(0);
        return Math.min(decode, prefill);
    }
}
