package dev.pagewarden.platform.audit;

import dev.pagewarden.core.receipt.KeyEndorsement;

import java.security.PublicKey;
import java.util.Arrays;
import java.util.Base64;
import java.util.LinkedHashMap;
import java.util.Map;

/**
 * A receipt key as published (at {@code /.well-known/pagewarden-receipt-keys} and in evidence bundles): an RFC 8037
 * {@code OKP} JWK with {@code spki} (base64 X.509) and its place in its key chain - {@code root} (pinned), or the
 * endorsement by the key it replaced ({@code endorsed_by}, {@code endorsed_at}, {@code endorsement}: base64 Ed25519),
 * from which an offline verifier holding the pinned roots walks the chain.
 */
public final class PublishedKeys {
    private PublishedKeys() {
    }

    public static Map<String, Object> jwk(String keyId, PublicKey key, boolean root, KeyEndorsement endorsement) {
        byte[] spki = key.getEncoded();
        Map<String, Object> jwk = new LinkedHashMap<>();
        jwk.put("kty", "OKP");
        jwk.put("crv", "Ed25519");
        jwk.put("alg", "EdDSA");
        jwk.put("use", "sig");
        jwk.put("kid", keyId);
        // an Ed25519 SubjectPublicKeyInfo ends in the 32-byte raw public key
        jwk.put("x", Base64.getUrlEncoder().withoutPadding().encodeToString(Arrays.copyOfRange(spki, spki.length - 32, spki.length)));
        jwk.put("spki", Base64.getEncoder().encodeToString(spki));
        if (root) {
            jwk.put("root", true);
        } else if (endorsement != null) {
            jwk.put("endorsed_by", endorsement.previousId());
            jwk.put("endorsed_at", endorsement.at().toString());
            jwk.put("endorsement", Base64.getEncoder().encodeToString(endorsement.signature()));
        }
        return jwk;
    }
}
