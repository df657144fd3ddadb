package dev.pagewarden.core.receipt;

import org.junit.jupiter.api.Test;

import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.security.PublicKey;
import java.util.Arrays;
import java.util.Base64;
import java.util.List;
import java.util.Map;
import java.util.Properties;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/** Receipts: canonical bytes (version 2, and version 1 still verifying), Ed25519 round trip, tampering, wrong keys, rotation. */
class ReceiptSignatureTest {
    static final int[] OUTPUT = {5, 17, 300, 2};

    static Receipt sample(ReceiptKeys keys) {
        List<PageEpochRead> reads = List.of(new PageEpochRead("decode-0", 7, 3, 16, 42, 1001),
                new PageEpochRead("decode-0", 2, 9, 5, 42, 1002));
        return new ReceiptIssuer("stories260K.bin", keys, new ServingIdentity("node-a", "r-0123456789abcdef"))
                .issue(42, "acme", reads, OUTPUT);
    }

    @Test
    void canonicalBytesRoundTripAndSignatureVerifies() {
        ReceiptKeys keys = ReceiptKeys.generate("k");
        Receipt r = sample(keys);
        byte[] canonical = ReceiptCodec.encodeBody(r.body());
        assertThat(ReceiptCodec.decodeBody(canonical)).isEqualTo(r.body());
        assertThat(r.digest()).isEqualTo(ReceiptCodec.digest(canonical));
        assertThat(r.body().outputHash()).isEqualTo(ReceiptCodec.outputHash(OUTPUT));
        assertThat(r.keyId()).isEqualTo("k-1-" + ReceiptKeys.fingerprint(keys.publicKeys().values().iterator().next()));
        assertThat(ReceiptVerifier.verifySignature(r, keys.publicKeys())).isTrue();

        assertThat(r.body().version()).isEqualTo(3);
        assertThat(r.body().nodeId()).isEqualTo("node-a");
        assertThat(r.body().replicaId()).isEqualTo("r-0123456789abcdef");
        assertThat(r.body().issuedAt()).isNotNull();
        assertThat(new String(canonical, 4, ReceiptCodec.DOMAIN_V3.length(), StandardCharsets.UTF_8))
                .isEqualTo("pagewarden.receipt.v3");
        assertThat(r.toJson()).containsEntry("version", 3).containsEntry("node_id", "node-a")
                .containsEntry("replica_id", "r-0123456789abcdef").containsEntry("issued_at", r.body().issuedAt().toString());

        String compact = r.toCompact();
        assertThat(compact).startsWith("pwr1.").doesNotContain("=", "+", "/", " ");
        Receipt back = Receipt.fromCompact(compact);
        assertThat(back).isEqualTo(r);
        // a tenant with only the published keys
        Map<String, PublicKey> published = ReceiptKeys.parsePublished(keys.publishedKeys());
        assertThat(ReceiptVerifier.verifyCompact(compact, published)).isTrue();
    }

    /** A receipt an engine issued before version 2 (stored when v1 was current) keeps verifying offline. */
    @Test
    void storedVersion1ReceiptStillVerifies() throws Exception {
        Properties fixture = new Properties();
        try (InputStream in = getClass().getResourceAsStream("/receipts/v1-receipt.properties")) {
            fixture.load(in);
        }
        Map<String, PublicKey> published = ReceiptKeys.parsePublished(Map.of("pw-1", fixture.getProperty("key.pw-1")));
        String compact = fixture.getProperty("receipt");
        assertThat(ReceiptVerifier.verifyCompact(compact, published)).isTrue();
        Receipt r = Receipt.fromCompact(compact);
        assertThat(r.toCompact()).isEqualTo(compact);
        ReceiptBody b = r.body();
        assertThat(b.version()).isEqualTo(1);
        assertThat(b.nodeId()).isNull();
        assertThat(b.replicaId()).isNull();
        assertThat(b.tenant()).isEqualTo("acme");
        int[] output = Arrays.stream(fixture.getProperty("output").split(",")).mapToInt(Integer::parseInt).toArray();
        assertThat(b.outputHash()).isEqualTo(ReceiptCodec.outputHash(output));
        // v1 counted the slots cached at each page's first read: 6 prompt tokens on 4-token pages
        assertThat(b.reads()).extracting(PageEpochRead::slots).containsExactly(4, 2, 0, 0, 0);
        assertThat(r.toJson()).containsEntry("version", 1).doesNotContainKeys("node_id", "replica_id");
        // and it is still tamper-evident: the same body re-signed by another key does not pass
        ReceiptKeys other = ReceiptKeys.generate("pw");
        Receipt resigned = new ReceiptIssuer(b.modelId(), other).sign(b);
        assertThat(ReceiptVerifier.verifySignature(resigned, published)).isFalse();
        assertThat(ReceiptVerifier.verifySignature(resigned, other.publicKeys())).isTrue();
    }

    @Test
    void bodiesMustSayTheirVersionConsistently() {
        byte[] hash = ReceiptCodec.outputHash(OUTPUT);
        assertThatThrownBy(() -> new ReceiptBody(2, 1, "acme", "m", null, null, List.of(), hash))
                .isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> new ReceiptBody(1, 1, "acme", "m", "node-a", "r-1", List.of(), hash))
                .isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> new ReceiptBody(3, 1, "acme", "m", "node-a", "r-1", List.of(), hash))
                .isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> new ServingIdentity("node a", "r-1")).hasMessageContaining("node_id");
        assertThatThrownBy(() -> new ServingIdentity("node-a", "")).hasMessageContaining("replica_id");
        assertThatThrownBy(() -> new ServingIdentity("n".repeat(129), "r-1")).hasMessageContaining("node_id");
        ServingIdentity local = ServingIdentity.of(null, " ");
        assertThat(local.nodeId()).isEqualTo(ServingIdentity.hostName());
        assertThat(local.replicaId()).matches("r-[0-9a-f]{16}").isNotEqualTo(ServingIdentity.of(null, null).replicaId());
        assertThat(ServingIdentity.of("node-7", "r-7")).isEqualTo(new ServingIdentity("node-7", "r-7"));
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
        ServingIdentity served = new ServingIdentity(b.nodeId(), b.replicaId());
        List<PageEpochRead> widened = List.of(b.reads().get(0), new PageEpochRead("decode-0", 2, 9, 6, 42, 1002));
        List<ReceiptBody> forged = List.of(
                ReceiptBody.v2(43, b.tenant(), b.modelId(), served, b.reads(), b.outputHash()),
                ReceiptBody.v2(b.requestId(), "globex", b.modelId(), served, b.reads(), b.outputHash()),
                ReceiptBody.v2(b.requestId(), b.tenant(), b.modelId(), served, b.reads().subList(0, 1), b.outputHash()),
                ReceiptBody.v2(b.requestId(), b.tenant(), b.modelId(), served,
                        List.of(b.reads().get(1), b.reads().get(0)), b.outputHash()),
                ReceiptBody.v2(b.requestId(), b.tenant(), b.modelId(), served, widened, b.outputHash()),
                ReceiptBody.v2(b.requestId(), b.tenant(), b.modelId(), new ServingIdentity("node-b", b.replicaId()),
                        b.reads(), b.outputHash()),
                ReceiptBody.v2(b.requestId(), b.tenant(), b.modelId(), new ServingIdentity(b.nodeId(), "r-other"),
                        b.reads(), b.outputHash()),
                // another issue time (a replaced key's receipt moved to before its replacement): signed, so refused
                ReceiptBody.v3(b.requestId(), b.tenant(), b.modelId(), served, b.issuedAt().minusSeconds(3600), b.reads(),
                        b.outputHash()),
                // the same claims as a version 2 or 1 body (no issue time): other bytes, so the signature does not carry over
                ReceiptBody.v2(b.requestId(), b.tenant(), b.modelId(), served, b.reads(), b.outputHash()),
                ReceiptBody.v1(b.requestId(), b.tenant(), b.modelId(), b.reads(), b.outputHash()),
                ReceiptBody.v2(b.requestId(), b.tenant(), b.modelId(), served, b.reads(), ReceiptCodec.outputHash(new int[] {5})));
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
        String first = old.keyId();
        String next = keys.rotate();
        assertThat(first).startsWith("platform-1-");
        assertThat(next).startsWith("platform-2-");
        Receipt fresh = sample(keys);
        assertThat(fresh.keyId()).isEqualTo(next);
        Map<String, PublicKey> published = ReceiptKeys.parsePublished(keys.publishedKeys());
        assertThat(published).containsOnlyKeys(first, next);
        assertThat(ReceiptVerifier.verifySignature(old, published)).isTrue();
        assertThat(ReceiptVerifier.verifySignature(fresh, published)).isTrue();
        // the old receipt does not verify under the new key
        assertThat(ReceiptVerifier.verifySignature(new Receipt(old.body(), old.digest(), next, old.signature()),
                published)).isFalse();
        keys.retire(first);
        assertThat(ReceiptVerifier.verifySignature(old, keys.publicKeys())).isFalse();
        assertThat(ReceiptVerifier.verifySignature(fresh, keys.publicKeys())).isTrue();
        assertThatThrownBy(() -> keys.retire(next)).isInstanceOf(IllegalArgumentException.class);
    }
}
