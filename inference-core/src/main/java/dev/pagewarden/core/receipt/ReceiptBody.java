package dev.pagewarden.core.receipt;

import java.util.Arrays;
import java.util.List;

/**
 * What an isolation receipt attests: which request (of which tenant, on which model) read which page
 * epochs - written, the engine says, by whom - and what it answered (SHA-256 of the output token ids).
 * The byte form that is hashed and signed is {@link ReceiptCodec#encodeBody}.
 *
 * @param requestId  the engine's request id
 * @param tenant     the request's tenant
 * @param modelId    the model that served it (its file name)
 * @param reads      every page epoch its decode read, in read order (page table order)
 * @param outputHash SHA-256 of the output token ids ({@link ReceiptCodec#outputHash})
 */
public record ReceiptBody(long requestId, String tenant, String modelId, List<PageEpochRead> reads, byte[] outputHash) {
    public ReceiptBody {
        if (tenant == null || modelId == null) {
            throw new IllegalArgumentException("tenant and model id are required");
        }
        if (outputHash == null || outputHash.length != 32) {
            throw new IllegalArgumentException("output hash must be 32 bytes (SHA-256)");
        }
        reads = List.copyOf(reads);
        outputHash = outputHash.clone();
    }

    @Override
    public byte[] outputHash() {
        return outputHash.clone();
    }

    @Override
    public boolean equals(Object o) {
        return o instanceof ReceiptBody b && requestId == b.requestId && tenant.equals(b.tenant)
                && modelId.equals(b.modelId) && reads.equals(b.reads) && Arrays.equals(outputHash, b.outputHash);
    }

    @Override
    public int hashCode() {
        return Long.hashCode(requestId) * 31 + Arrays.hashCode(outputHash);
    }
}
