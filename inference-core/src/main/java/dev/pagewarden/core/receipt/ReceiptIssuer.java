package dev.pagewarden.core.receipt;

import java.util.List;

/**
 * Builds and signs the (version 2) receipt of a finished request (the engine holds one when a signer
 * is wired).
 */
public final class ReceiptIssuer {
    private final String modelId;
    private final ReceiptSigner signer;
    private final ServingIdentity served;

    public ReceiptIssuer(String modelId, ReceiptSigner signer, ServingIdentity served) {
        this.modelId = modelId;
        this.signer = signer;
        this.served = served;
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
        return sign(ReceiptBody.v2(requestId, tenant, modelId, served, reads, ReceiptCodec.outputHash(output)));
    }

    /** Signs a body as it is (any version). */
    public Receipt sign(ReceiptBody body) {
        byte[] digest = ReceiptCodec.digest(ReceiptCodec.encodeBody(body));
        ReceiptSigner.Signed signed = signer.sign(digest);
        return new Receipt(body, digest, signed.keyId(), signed.signature());
    }
}
