package dev.pagewarden.core.receipt;

/**
 * Signs receipt digests (SPI: the platform wires one backed by a key file or the database; the
 * engine only asks for signatures). Must be thread-safe.
 */
public interface ReceiptSigner {
    /** The id of the key the next {@link #sign} uses (no '.'). */
    String currentKeyId();

    /** Ed25519 signature of {@code digest} with the current key, and that key's id. */
    Signed sign(byte[] digest);

    record Signed(String keyId, byte[] signature) {
    }
}
