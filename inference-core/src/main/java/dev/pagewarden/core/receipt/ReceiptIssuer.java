package dev.pagewarden.core.receipt;

import java.util.List;

/** Builds and signs the receipt of a finished request (the engine holds one when a signer is wired). */
public final class ReceiptIssuer {
    private final String modelId;
    private final ReceiptSigner signer;

    public ReceiptIssuer(String modelId, ReceiptSigner signer) {
        this.modelId = modelId;
        this.signer = signer;
    }

    public String modelId() {
        return modelId;
    }

    public Receipt issue(long requestId, String tenant, List<PageEpochRead> reads, int[] output) {
        ReceiptBody body = new ReceiptBody(requestId, tenant, modelId, reads, ReceiptCodec.outputHash(output));
        byte[] digest = ReceiptCodec.digest(ReceiptCodec.encodeBody(body));
        ReceiptSigner.Signed signed = signer.sign(digest);
        return new Receipt(body, digest, signed.keyId(), signed.signature());
    }
}
