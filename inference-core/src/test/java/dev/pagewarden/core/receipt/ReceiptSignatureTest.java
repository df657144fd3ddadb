package dev.pagewarden.core.receipt;

import org.junit.jupiter.api.Test;

import java.security.PublicKey;
import java.util.Base64;
import java.util.List;
import java.util.Map;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/** Receipts: canonical bytes, Ed25519 round trip, tampering, wrong keys, rotation. */
class ReceiptSignatureTest {
    static final int[] OUTPUT = {5, 17, 300, 2};

    static Receipt sample(ReceiptKeys keys) {
        List<PageEpochRead> reads = List.of(new PageEpochRead("decode-0", 7, 3, 16, 42, 1001),
                new PageEpochRead("decode-0", 2, 9, 5, 42, 1002));
        return new ReceiptIssuer("stories260K.bin", keys).issue(42, "acme", reads, OUTPUT);
    }

    @Test
    void canonicalBytesRoundTripAndSignatureVerifies() {
        ReceiptKeys keys = ReceiptKeys.generate("k");
        Receipt r = sample(keys);
        byte[] canonical = ReceiptCodec.encodeBody(r.body());
        assertThat(ReceiptCodec.decodeBody(canonical)).isEqualTo(r.body());
        assertThat(r.digest()).isEqualTo(ReceiptCodec.digest(canonical));
        assertThat(r.body().outputHash()).isEqualTo(ReceiptCodec.outputHash(OUTPUT));
        assertThat(r.keyId()).isEqualTo("k-1");
        assertThat(ReceiptVerifier.verifySignature(r, keys.publicKeys())).isTrue();

        String compact = r.toCompact();
        assertThat(compact).startsWith("pwr1.").doesNotContain("=", "+", "/", " ");
        Receipt back = Receipt.fromCompact(compact);
        assertThat(back).isEqualTo(r);
        // a tenant with only the published keys
        Map<String, PublicKey> published = ReceiptKeys.parsePublished(keys.publishedKeys());
        assertThat(ReceiptVerifier.verifyCompact(compact, published)).isTrue();
    }

    @Test
    void everyBodyByteFlipIsRejected() {
        ReceiptKeys keys = ReceiptKeys.generate("k");
        Receipt r = sample(keys);
        String[] parts = r.toCompact().split("\\.");
        byte[] canonical = Base64.getUrlDecoder().decode(parts[1]);
        Base64.Encoder b64 = Base64.getUrlEncoder().withoutPadding();
        for (int i = 0; i < canonical.length; i++) {
            for (int bit : new int[] {0x01, 0x80}) {
                byte[] t = canonical.clone();
                t[i] ^= (byte) bit;
                String tampered = parts[0] + "." + b64.encodeToString(t) + "." + parts[2] + "." + parts[3];
                assertThat(ReceiptVerifier.verifyCompact(tampered, keys.publicKeys()))
                        .as("byte %d bit %x", i, bit).isFalse();
            }
        }
        byte[] sig = r.signature();
        for (int i = 0; i < sig.length; i++) {
            byte[] t = sig.clone();
            t[i] ^= 1;
            assertThat(ReceiptVerifier.verifySignature(new Receipt(r.body(), r.digest(), r.keyId(), t), keys.publicKeys()))
                    .isFalse();
        }
    }

    @Test
    void tamperedFieldsWrongDigestAndWrongKeyAreRejected() {
        ReceiptKeys keys = ReceiptKeys.generate("k");
        Receipt r = sample(keys);
        ReceiptBody b = r.body();
        List<ReceiptBody> forged = List.of(
                new ReceiptBody(43, b.tenant(), b.modelId(), b.reads(), b.outputHash()),
                new ReceiptBody(b.requestId(), "globex", b.modelId(), b.reads(), b.outputHash()),
                new ReceiptBody(b.requestId(), b.tenant(), b.modelId(), b.reads().subList(0, 1), b.outputHash()),
                new ReceiptBody(b.requestId(), b.tenant(), b.modelId(), List.of(b.reads().get(1), b.reads().get(0)),
                        b.outputHash()),
                new ReceiptBody(b.requestId(), b.tenant(), b.modelId(), b.reads(), ReceiptCodec.outputHash(new int[] {5})));
        for (ReceiptBody f : forged) {
            assertThat(ReceiptVerifier.verifySignature(new Receipt(f, r.digest(), r.keyId(), r.signature()),
                    keys.publicKeys())).isFalse();
            byte[] d = ReceiptCodec.digest(ReceiptCodec.encodeBody(f)); // digest recomputed, signature not
            assertThat(ReceiptVerifier.verifySignature(new Receipt(f, d, r.keyId(), r.signature()),
                    keys.publicKeys())).isFalse();
        }
        ReceiptKeys other = ReceiptKeys.generate("k"); // same id, other key
        assertThat(ReceiptVerifier.verifySignature(r, other.publicKeys())).isFalse();
        assertThat(ReceiptVerifier.verifySignature(r, Map.of())).isFalse();
        assertThat(ReceiptVerifier.verifyCompact("pwr1.AAAA.k-1.AAAA", keys.publicKeys())).isFalse();
        assertThat(ReceiptVerifier.verifyCompact("garbage", keys.publicKeys())).isFalse();
        assertThatThrownBy(() -> Receipt.fromCompact("pwr2.a.b.c")).isInstanceOf(IllegalArgumentException.class);
    }

    @Test
    void rotationKeepsOldReceiptsVerifiableUntilTheKeyIsRetired() {
        ReceiptKeys keys = ReceiptKeys.generate("platform");
        Receipt old = sample(keys);
        String next = keys.rotate();
        assertThat(next).isEqualTo("platform-2");
        Receipt fresh = sample(keys);
        assertThat(fresh.keyId()).isEqualTo("platform-2");
        assertThat(old.keyId()).isEqualTo("platform-1");
        Map<String, PublicKey> published = ReceiptKeys.parsePublished(keys.publishedKeys());
        assertThat(published).containsOnlyKeys("platform-1", "platform-2");
        assertThat(ReceiptVerifier.verifySignature(old, published)).isTrue();
        assertThat(ReceiptVerifier.verifySignature(fresh, published)).isTrue();
        // the old receipt does not verify under the new key
        assertThat(ReceiptVerifier.verifySignature(new Receipt(old.body(), old.digest(), "platform-2", old.signature()),
                published)).isFalse();
        keys.retire("platform-1");
        assertThat(ReceiptVerifier.verifySignature(old, keys.publicKeys())).isFalse();
        assertThat(ReceiptVerifier.verifySignature(fresh, keys.publicKeys())).isTrue();
        assertThatThrownBy(() -> keys.retire("platform-2")).isInstanceOf(IllegalArgumentException.class);
    }
}
