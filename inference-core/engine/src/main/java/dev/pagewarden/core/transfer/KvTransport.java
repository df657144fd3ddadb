package dev.pagewarden.core.transfer;

/** Moves KV pages from a prefill pool to a decode pool. In process today; a network transport later. */
public interface KvTransport extends AutoCloseable {

    /** Starts a transfer and returns at once; completion is reported through the job's callback. */
    void send(TransferJob job);

    @Override
    void close();
}
