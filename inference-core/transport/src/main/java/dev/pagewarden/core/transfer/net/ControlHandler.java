package dev.pagewarden.core.transfer.net;

/**
 * What a node or the cluster client does with control messages. Calls for one connection come one at a
 * time and in arrival order, on a thread of that connection (never the network thread): a handler may
 * block briefly, for example to open a connection of its own.
 */
public interface ControlHandler {

    /** A connection was greeted (before any of its messages). */
    default void opened(ControlPeer peer) {
    }

    void received(ControlPeer from, ControlMessage message);

    /** The connection ended (closed by either side, lost, or refused a malformed message); once, after every message. */
    default void closed(ControlPeer peer) {
    }
}
