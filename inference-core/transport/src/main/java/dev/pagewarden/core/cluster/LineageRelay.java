package dev.pagewarden.core.cluster;

import dev.pagewarden.core.lineage.LineageEvent;
import dev.pagewarden.core.lineage.LineageSink;
import dev.pagewarden.core.transfer.net.ControlMessage;
import dev.pagewarden.core.transfer.net.ControlPeer;

import java.util.Objects;

/**
 * The nodes' page life steps (LINEAGE) into the platform's {@link LineageSink}, acknowledged once it has taken them;
 * a batch with an event that names another node than the certificate of the connection it came on is refused whole
 * and that connection closed (a node writes only its own lineage).
 */
final class LineageRelay {
    private static final System.Logger LOG = System.getLogger(LineageRelay.class.getName());
    private final LineageSink sink;

    LineageRelay(LineageSink sink) {
        this.sink = Objects.requireNonNull(sink, "lineage");
    }

    /** Whether the sink takes steps now (no request may start while it does not). */
    boolean accepting() {
        return sink.accepting();
    }

    void relay(ControlPeer from, ControlMessage.Lineage l) {
        for (LineageEvent e : l.events()) {
            if (!e.node().equals(from.name())) {
                LOG.log(System.Logger.Level.ERROR, "engine node " + from + " sent lineage event " + e.id() + " naming node "
                        + e.node() + "; a node writes only its own lineage: batch refused, connection closed");
                from.close();
                return;
            }
        }
        for (LineageEvent e : l.events()) {
            sink.emit(e);
        }
        if (!l.events().isEmpty()) {
            from.send(new ControlMessage.LineageAck(l.firstSeq() + l.events().size() - 1));
        }
    }
}
