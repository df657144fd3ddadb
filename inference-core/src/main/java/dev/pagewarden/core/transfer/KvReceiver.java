package dev.pagewarden.core.transfer;

/** The decode side of a transfer. Each call returns whether the frame was accepted. */
public interface KvReceiver {
    boolean onFrame(PageFrame frame);

    /** Returns whether the request is now complete and verified (ready to decode). */
    boolean onDone(TransferDone done);
}
