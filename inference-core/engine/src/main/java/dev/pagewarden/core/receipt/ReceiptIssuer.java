package dev.pagewarden.core.receipt;

import java.time.Clock;
import java.util.List;

/**
 * Builds and signs the (version 3) receipt of a finished request (the engine holds one when a signer
 * is wired), stamped with the time it is signed.
 */
public final class ReceiptIssuer {
    private final String modelId;
    private final ReceiptSigner signer;
    private final ServingIdentity served;
    private final Clock clock;

    public ReceiptIssuer(String modelId, ReceiptSigner signer, ServingIdentity served, Clock clock) {
        this.modelId = modelId;
        this.signer = signer;
        this.served = served;
        this.clock = clock;
    }

    public ReceiptIssuer(String modelId, ReceiptSigner signer, ServingIdentity served) {
        this(modelId, signer, served, Clock.systemUTC());
    }

    /** An issuer for this process: the host name as node id, a random replica id. */
    public ReceiptIssuer(String modelId, ReceiptSigner signer) {
        this(modelId, signer, ServingIdentity.of(null, null));
    }

    public String modelId() {
        return modelId;
    }

    public ServingIdentity served() {
        return served;
    }

    /** {@code reads}: every page epoch the request's decode read, with its final slot range. */
    public Receipt issue(long requestId, String tenant, List<PageEpochRead> reads, int[] output) {
        return issue(requestId, tenant, reads, List.of(), output);
    }

    /**
     * As above, with the cached prefix pages the request's prefill reused: a version 4 receipt when there are any,
     * version 3 otherwise.
     */
    public Receipt issue(long requestId, String tenant, List<PageEpochRead> reads, List<ReusedPage> reused, int[] output) {
        byte[] hash = ReceiptCodec.outputHash(output);
        return sign(reused.isEmpty() ? ReceiptBody.v3(requestId, tenant, modelId, served, clock.instant(), reads, hash)
                : ReceiptBody.v4(requestId, tenant, modelId, served, clock.instant(), reads, reused, hash));
    }

    /** Signs a body as it is (any version). */
    public Receipt sign(ReceiptBody body) {
        byte[] digest = ReceiptCodec.digest(ReceiptCodec.encodeBody(body));
        ReceiptSigner.Signed signed = signer.sign(digest);
        return new Receipt(body, digest, signed.keyId(), signed.signature());
    }
}
