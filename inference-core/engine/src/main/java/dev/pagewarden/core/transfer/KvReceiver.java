package dev.pagewarden.core.transfer;

/** The decode side of a transfer. */
public interface KvReceiver {

    /** A page arrives; returns whether it was accepted (a refusal ends the transfer). */
    boolean onFrame(PageFrame frame);

    /** The sender claims completion; returns whether the request is now verified and ready. */
    boolean onDone(TransferDone done);

    /**
     * The sender's word that no write of (request, generation) is in flight any more - sent after
     * the last frame of a transfer, whether it completed or failed. Only this (or a timeout that
     * quarantines) may release an aborted request's pages; an ack of another generation is stale.
     */
    void onAck(long requestId, int generation);
}
