package dev.pagewarden.core.transfer.net;

import dev.pagewarden.core.kv.KvLayout;

/** The other end of one control connection, as either side sees it. */
public interface ControlPeer {

    /** The peer's node name: the CN of the certificate it presented (checked against the cluster CA). */
    String name();

    /** The KV layout the peer said it holds in its hello (null: a client that holds no pages). */
    KvLayout layout();

    /** Where the peer is, for logs. */
    String address();

    /** Queues {@code message} to the peer; false when the connection is closed (the message is lost). */
    boolean send(ControlMessage message);

    boolean isOpen();

    /** Closes the connection; the handler's {@link ControlHandler#closed} follows. */
    void close();
}
