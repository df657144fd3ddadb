package dev.pagewarden.core.transfer;

/** The sender's claim that a transfer is complete: the receiver checks it against what it actually got. */
public record TransferDone(long requestId, int generation, int totalTokens, int frames) {
}
