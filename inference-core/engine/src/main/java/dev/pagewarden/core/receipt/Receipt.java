package dev.pagewarden.core.receipt;

import java.util.Arrays;
import java.util.Base64;
import java.util.HexFormat;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * A signed isolation receipt: the body, its SHA-256 digest over {@link ReceiptCodec#encodeBody the
 * canonical bytes}, and the Ed25519 signature over that digest by the key {@code keyId}.
 *
 * <p>Compact form (one HTTP header value, {@link #toCompact}): {@code pwr1.B.K.S} with B the base64url
 * (no padding) canonical body bytes, K the key id, S the base64url signature. The digest is not sent:
 * whoever checks recomputes it from B. A tenant needs only SHA-256, Ed25519 and the published keys.
 * {@code pwr1} names this compact form, which both body versions share; the body's first field says
 * its version.
 */
public record Receipt(ReceiptBody body, byte[] digest, String keyId, byte[] signature) {
    public static final String COMPACT_PREFIX = "pwr1";

    public Receipt {
        if (body == null || keyId == null || keyId.isEmpty() || keyId.contains(".")) {
            throw new IllegalArgumentException("receipt needs a body and a key id without '.'");
        }
        digest = digest.clone();
        signature = signature.clone();
    }

    @Override
    public byte[] digest() {
        return digest.clone();
    }

    @Override
    public byte[] signature() {
        return signature.clone();
    }

    public String digestHex() {
        return HexFormat.of().formatHex(digest);
    }

    public String toCompact() {
        Base64.Encoder b64 = Base64.getUrlEncoder().withoutPadding();
        return COMPACT_PREFIX + '.' + b64.encodeToString(ReceiptCodec.encodeBody(body)) + '.' + keyId + '.'
                + b64.encodeToString(signature);
    }

    /**
     * Parses a compact receipt. The body must be in canonical form (decoding and re-encoding gives the
     * same bytes); the digest is recomputed from those bytes. Says nothing about the signature: see
     * {@link ReceiptVerifier}.
     */
    public static Receipt fromCompact(String compact) {
        String[] parts = compact.split("\\.", -1);
        if (parts.length != 4 || !COMPACT_PREFIX.equals(parts[0])) {
            throw new IllegalArgumentException("not a " + COMPACT_PREFIX + " receipt");
        }
        Base64.Decoder b64 = Base64.getUrlDecoder();
        byte[] canonical = b64.decode(parts[1]);
        ReceiptBody body = ReceiptCodec.decodeBody(canonical);
        if (!Arrays.equals(canonical, ReceiptCodec.encodeBody(body))) {
            throw new IllegalArgumentException("receipt body is not in canonical form");
        }
        return new Receipt(body, ReceiptCodec.digest(canonical), parts[2], b64.decode(parts[3]));
    }

    /** A readable view (for logs, the admin UI, JSON responses). */
    public Map<String, Object> toJson() {
        HexFormat hex = HexFormat.of();
        Map<String, Object> m = new LinkedHashMap<>();
        m.put("version", body.version());
        m.put("request_id", body.requestId());
        m.put("tenant", body.tenant());
        m.put("model", body.modelId());
        if (body.version() >= 2) {
            m.put("node_id", body.nodeId());
            m.put("replica_id", body.replicaId());
        }
        if (body.issuedAt() != null) {
            m.put("issued_at", body.issuedAt().toString());
        }
        List<Map<String, Object>> reads = body.reads().stream().map(r -> {
            Map<String, Object> e = new LinkedHashMap<>();
            e.put("worker", r.worker());
            e.put("page", r.page());
            e.put("epoch", r.epoch());
            e.put("slots", r.slots());
            e.put("writer_request", r.writerRequest());
            e.put("lineage_event_id", r.lineageEventId());
            return e;
        }).toList();
        m.put("reads", reads);
        if (body.version() >= 4) {
            m.put("reused_prefix_pages", body.reused().stream().map(r -> {
                Map<String, Object> e = new LinkedHashMap<>();
                e.put("worker", r.worker());
                e.put("page", r.page());
                e.put("epoch", r.epoch());
                e.put("positions", List.of(r.positionFrom(), r.positionTo()));
                e.put("writer_request", r.writerRequest());
                e.put("lineage_event_id", r.lineageEventId());
                return e;
            }).toList());
        }
        m.put("output_sha256", hex.formatHex(body.outputHash()));
        m.put("digest_sha256", hex.formatHex(digest));
        m.put("key_id", keyId);
        m.put("signature_ed25519", Base64.getUrlEncoder().withoutPadding().encodeToString(signature));
        return m;
    }

    @Override
    public boolean equals(Object o) {
        return o instanceof Receipt r && body.equals(r.body) && Arrays.equals(digest, r.digest) && keyId.equals(r.keyId)
                && Arrays.equals(signature, r.signature);
    }

    @Override
    public int hashCode() {
        return Arrays.hashCode(digest);
    }

    @Override
    public String toString() {
        return "Receipt[v" + body.version() + ", request=" + body.requestId() + ", tenant=" + body.tenant() + ", reads=" + body.reads().size()
                + ", key=" + keyId + ", digest=" + digestHex() + "]";
    }
}
