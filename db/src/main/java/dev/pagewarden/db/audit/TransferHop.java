package dev.pagewarden.db.audit;

import java.time.Instant;

/**
 * One transfer into a page epoch the request read: source (prefill) page epoch -> this page epoch, both
 * pools of {@code node}.
 * {@code checksumSent} is the sender's TRANSFER_OUT value, null if the sender never logged one.
 */
public record TransferHop(String node, String fromWorker, int fromPage, long fromEpoch, String toWorker, int toPage, long toEpoch,
                          int generation, int slotFrom, int slotTo, int checksumReceived, Integer checksumSent,
                          long writerRequest, Instant at) {
    public boolean checksumsAgree() {
        return checksumSent != null && checksumSent == checksumReceived;
    }
}
