package dev.pagewarden.core.cluster;

import dev.pagewarden.core.transfer.net.ControlMessage;
import dev.pagewarden.core.transfer.net.ControlPeer;

/** One engine node at one address, and where the cluster client stands with it. */
final class Member {
    final NodeRole role;
    final String host;
    final int port;
    volatile State state = new State.Down("not connected yet", 0, 0);
    /** Whether it was announced out of rotation for missed heartbeats (to say so once, and when it is back). */
    volatile boolean outOfRotation;
    /** Its address is no longer among its name's: out of rotation, dropped once its requests and lineage are done. */
    volatile boolean leaving;

    Member(NodeRole role, String host, int port) {
        this.role = role;
        this.host = host;
        this.port = port;
    }

    String where() {
        return role.label() + "@" + host + ":" + port;
    }

    /** The client's view of one node, exhaustively. */
    sealed interface State {
        /** No connection; the next attempt is due at {@code retryAt} (nanoTime). */
        record Down(String reason, long retryAt, int failures) implements State { }

        /** An attempt is under way. */
        record Connecting(int failures) implements State { }

        /**
         * Connected; {@code status} is the last STATUS (null until the first), {@code seen} when it came, {@code
         * taken} the pages this client has routed there since (so a burst spreads before the next STATUS).
         */
        record Connected(ControlPeer peer, ControlMessage.Status status, long seen, long taken) implements State { }
    }
}
