package dev.pagewarden.core.receipt;

import java.time.Instant;
import java.time.temporal.ChronoUnit;
import java.util.Arrays;
import java.util.List;
import java.util.Objects;

/**
 * What an isolation receipt attests: which request (of which tenant, on which model, served by which
 * node and replica) read which page epochs - with which slots, written, the engine says, by whom - and
 * what it answered (SHA-256 of the output token ids). The byte form that is hashed and signed is
 * {@link ReceiptCodec#encodeBody}.
 *
 * <p>Version 4 (what the engine issues for a request that reused cached prefix pages): as version 3, plus the
 * cached pages its prefill reused, each with its writer, epoch and prompt positions. Version 3 (what the engine
 * issues otherwise): as version 2, plus the time it was issued, so a verifier can refuse a
 * receipt issued after its key was replaced. Version 2: every page epoch the decode read with its final slot
 * range [0, slots), and the serving node and replica. Version 1: the slots cached at each page epoch's first
 * read, no node or replica (both null). Versions 1 and 2 carry no issue time (null); they are decoded, and
 * verified only against keys pinned as legacy (see {@link TrustedKeys}).
 *
 * @param version    1, 2, 3 or 4
 * @param requestId  the engine's request id
 * @param tenant     the request's tenant
 * @param modelId    the model that served it (its file name)
 * @param nodeId     the node that served it (version 2; null in version 1)
 * @param replicaId  the engine start on that node (version 2; null in version 1)
 * @param reads      every page epoch its decode read, in read order (page table order)
 * @param outputHash SHA-256 of the output token ids ({@link ReceiptCodec#outputHash})
 * @param issuedAt   when it was signed, to the millisecond (versions 3 and 4; null in versions 1 and 2)
 * @param reused     the cached prefix pages the request's prefill reused, in prompt order (version 4; empty before)
 */
public record ReceiptBody(int version, long requestId, String tenant, String modelId, String nodeId, String replicaId,
                          List<PageEpochRead> reads, byte[] outputHash, Instant issuedAt, List<ReusedPage> reused) {
    public ReceiptBody {
        if (tenant == null || modelId == null) {
            throw new IllegalArgumentException("tenant and model id are required");
        }
        if (version == 1 ? nodeId != null || replicaId != null : (version < 2 || version > 4) || nodeId == null || replicaId == null) {
            throw new IllegalArgumentException("a version 2, 3 or 4 body names its node and replica, a version 1 body neither"
                    + " (version " + version + ")");
        }
        if ((version >= 3) != (issuedAt != null)) {
            throw new IllegalArgumentException("a version 3 or 4 body carries its issue time, versions 1 and 2 none (version "
                    + version + ")");
        }
        reused = reused == null ? List.of() : List.copyOf(reused);
        if (version < 4 && !reused.isEmpty()) {
            throw new IllegalArgumentException("only a version 4 body lists reused prefix pages (version " + version + ")");
        }
        issuedAt = issuedAt == null ? null : issuedAt.truncatedTo(ChronoUnit.MILLIS);
        if (outputHash == null || outputHash.length != 32) {
            throw new IllegalArgumentException("output hash must be 32 bytes (SHA-256)");
        }
        reads = List.copyOf(reads);
        outputHash = outputHash.clone();
    }

    /** A body that reused no cached prefix page (versions 1 to 3). */
    public ReceiptBody(int version, long requestId, String tenant, String modelId, String nodeId, String replicaId,
                       List<PageEpochRead> reads, byte[] outputHash, Instant issuedAt) {
        this(version, requestId, tenant, modelId, nodeId, replicaId, reads, outputHash, issuedAt, List.of());
    }

    /** A body without issue time (versions 1 and 2). */
    public ReceiptBody(int version, long requestId, String tenant, String modelId, String nodeId, String replicaId,
                       List<PageEpochRead> reads, byte[] outputHash) {
        this(version, requestId, tenant, modelId, nodeId, replicaId, reads, outputHash, null);
    }

    /** A version 3 body (what the engine issues). */
    public static ReceiptBody v3(long requestId, String tenant, String modelId, ServingIdentity served, Instant issuedAt,
                                 List<PageEpochRead> reads, byte[] outputHash) {
        return new ReceiptBody(3, requestId, tenant, modelId, served.nodeId(), served.replicaId(), reads, outputHash,
                issuedAt);
    }

    /** A version 4 body: a version 3 body plus the cached prefix pages the request reused. */
    public static ReceiptBody v4(long requestId, String tenant, String modelId, ServingIdentity served, Instant issuedAt,
                                 List<PageEpochRead> reads, List<ReusedPage> reused, byte[] outputHash) {
        return new ReceiptBody(4, requestId, tenant, modelId, served.nodeId(), served.replicaId(), reads, outputHash,
                issuedAt, reused);
    }

    /** A version 2 body (as engines issued them before issue times). */
    public static ReceiptBody v2(long requestId, String tenant, String modelId, ServingIdentity served,
                                 List<PageEpochRead> reads, byte[] outputHash) {
        return new ReceiptBody(2, requestId, tenant, modelId, served.nodeId(), served.replicaId(), reads, outputHash);
    }

    /** A version 1 body (as engines before version 2 issued them). */
    public static ReceiptBody v1(long requestId, String tenant, String modelId, List<PageEpochRead> reads,
                                 byte[] outputHash) {
        return new ReceiptBody(1, requestId, tenant, modelId, null, null, reads, outputHash);
    }

    @Override
    public byte[] outputHash() {
        return outputHash.clone();
    }

    @Override
    public boolean equals(Object o) {
        return o instanceof ReceiptBody b && version == b.version && requestId == b.requestId
                && tenant.equals(b.tenant) && modelId.equals(b.modelId) && Objects.equals(nodeId, b.nodeId)
                && Objects.equals(replicaId, b.replicaId) && reads.equals(b.reads)
                && Arrays.equals(outputHash, b.outputHash) && Objects.equals(issuedAt, b.issuedAt)
                && reused.equals(b.reused);
    }

    @Override
    public int hashCode() {
        return Long.hashCode(requestId) * 31 + Arrays.hashCode(outputHash);
    }
}
