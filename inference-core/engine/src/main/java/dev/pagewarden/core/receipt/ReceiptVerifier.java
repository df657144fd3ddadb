package dev.pagewarden.core.receipt;

import java.security.GeneralSecurityException;
import java.security.MessageDigest;
import java.security.PublicKey;
import java.security.Signature;
import java.util.Map;

/** Offline check of a receipt: needs only the platform's published public keys. */
public final class ReceiptVerifier {
    private ReceiptVerifier() {
    }

    /**
     * True if the digest is the SHA-256 of the body's canonical bytes and the signature is a valid
     * Ed25519 signature of it by the key {@code receipt.keyId()} among {@code publicKeys}.
     */
    public static boolean verifySignature(Receipt receipt, Map<String, PublicKey> publicKeys) {
        byte[] digest = ReceiptCodec.digest(ReceiptCodec.encodeBody(receipt.body()));
        if (!MessageDigest.isEqual(digest, receipt.digest())) {
            return false;
        }
        PublicKey key = publicKeys.get(receipt.keyId());
        if (key == null) {
            return false;
        }
        try {
            Signature s = Signature.getInstance("Ed25519");
            s.initVerify(key);
            s.update(digest);
            return s.verify(receipt.signature());
        } catch (GeneralSecurityException | IllegalArgumentException e) {
            return false;
        }
    }

    /** Parses a compact receipt and checks it; false for anything malformed. */
    public static boolean verifyCompact(String compact, Map<String, PublicKey> publicKeys) {
        try {
            return verifySignature(Receipt.fromCompact(compact), publicKeys);
        } catch (IllegalArgumentException e) {
            return false;
        }
    }
}
