package dev.pagewarden.core.transfer;

import dev.pagewarden.core.kv.KvPool;
import dev.pagewarden.core.kv.PageRef;

import java.util.List;
import java.util.function.Consumer;

/**
 * Send the first {@code tokens} positions of a request's KV, held in {@code sourcePages} of
 * {@code source}. {@code onOutcome} runs once, after the receiver has answered for every frame
 * (true = accepted and verified); only then may the sender reuse its pages.
 */
public record TransferJob(long requestId, String tenant, int generation, KvPool source, List<PageRef> sourcePages,
                          int tokens, Consumer<Boolean> onOutcome) {
    public TransferJob {
        sourcePages = List.copyOf(sourcePages);
    }
}
