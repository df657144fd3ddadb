package dev.pagewarden.core.receipt;

import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.io.DataInputStream;
import java.io.DataOutputStream;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;

/**
 * The canonical byte form of a receipt body - the bytes that are hashed and signed. Every integer is
 * big-endian, every string is a u32 byte length followed by its UTF-8 bytes. Version 3 (issued):
 *
 * <pre>
 * str   "pagewarden.receipt.v3"           domain separation and version
 * u64   request id
 * str   tenant
 * str   model id
 * str   node id
 * str   replica id
 * u64   issued at, milliseconds since 1970-01-01T00:00:00Z
 * u32   n reads, then n times (every page epoch the decode read, in page-table order):
 *         str worker, u32 page, u64 epoch, u32 slots (final range [0, slots)), u64 writer request,
 *         u64 lineage event id (the page epoch's BIND_READ)
 * 32    SHA-256 of the output: over u32 token count, then each token id as u32
 * </pre>
 *
 * Version 4 (issued for a request that reused cached prefix pages): domain "pagewarden.receipt.v4", the version 3
 * layout with, between the reads and the output hash:
 *
 * <pre>
 * u32   n reused, then n times (each cached prefix page the prefill reused, in prompt order):
 *         str worker, u32 page, u64 epoch, u32 first prompt position, u32 end position, u64 writer request,
 *         u64 lineage event id (the REUSE)
 * </pre>
 *
 * Version 2 (older engines; decoded, never issued): domain "pagewarden.receipt.v2", no issue time. Version 1
 * (older still): domain "pagewarden.receipt.v1", no node id and replica id either, and each read's slots are
 * those cached at the page epoch's first read.
 *
 * <p>digest = SHA-256(canonical bytes); signature = Ed25519(digest) with the key named by the key id.
 * Decoding is strict: the same bytes back, or an exception (no trailing bytes, no other version).
 */
public final class ReceiptCodec {
    public static final String DOMAIN_V1 = "pagewarden.receipt.v1";
    public static final String DOMAIN_V2 = "pagewarden.receipt.v2";
    public static final String DOMAIN_V3 = "pagewarden.receipt.v3";
    public static final String DOMAIN_V4 = "pagewarden.receipt.v4";
    private static final int MAX_STRING = 1 << 16;

    private ReceiptCodec() {
    }

    public static byte[] encodeBody(ReceiptBody body) {
        ByteArrayOutputStream bytes = new ByteArrayOutputStream(160 + 48 * body.reads().size());
        try (DataOutputStream out = new DataOutputStream(bytes)) {
            string(out, switch (body.version()) {
                case 1 -> DOMAIN_V1;
                case 2 -> DOMAIN_V2;
                case 3 -> DOMAIN_V3;
                default -> DOMAIN_V4;
            });
            out.writeLong(body.requestId());
            string(out, body.tenant());
            string(out, body.modelId());
            if (body.version() >= 2) {
                string(out, body.nodeId());
                string(out, body.replicaId());
            }
            if (body.version() >= 3) {
                out.writeLong(body.issuedAt().toEpochMilli());
            }
            out.writeInt(body.reads().size());
            for (PageEpochRead r : body.reads()) {
                string(out, r.worker());
                out.writeInt(r.page());
                out.writeLong(r.epoch());
                out.writeInt(r.slots());
                out.writeLong(r.writerRequest());
                out.writeLong(r.lineageEventId());
            }
            if (body.version() == 4) {
                out.writeInt(body.reused().size());
                for (ReusedPage r : body.reused()) {
                    string(out, r.worker());
                    out.writeInt(r.page());
                    out.writeLong(r.epoch());
                    out.writeInt(r.positionFrom());
                    out.writeInt(r.positionTo());
                    out.writeLong(r.writerRequest());
                    out.writeLong(r.lineageEventId());
                }
            }
            out.write(body.outputHash());
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        return bytes.toByteArray();
    }

    public static ReceiptBody decodeBody(byte[] canonical) {
        try (DataInputStream in = new DataInputStream(new ByteArrayInputStream(canonical))) {
            String domain = string(in);
            int version = DOMAIN_V4.equals(domain) ? 4 : DOMAIN_V3.equals(domain) ? 3 : DOMAIN_V2.equals(domain) ? 2
                    : DOMAIN_V1.equals(domain) ? 1 : 0;
            if (version == 0) {
                throw new IllegalArgumentException("not a " + DOMAIN_V4 + ", " + DOMAIN_V3 + ", " + DOMAIN_V2 + " or "
                        + DOMAIN_V1 + " body: " + domain);
            }
            long requestId = in.readLong();
            String tenant = string(in);
            String model = string(in);
            String node = version >= 2 ? string(in) : null;
            String replica = version >= 2 ? string(in) : null;
            Instant issuedAt = version >= 3 ? Instant.ofEpochMilli(in.readLong()) : null;
            int n = in.readInt();
            if (n < 0 || n > canonical.length / 40) {
                throw new IllegalArgumentException("bad read count " + n);
            }
            List<PageEpochRead> reads = new ArrayList<>(n);
            for (int i = 0; i < n; i++) {
                reads.add(new PageEpochRead(string(in), in.readInt(), in.readLong(), in.readInt(), in.readLong(),
                        in.readLong()));
            }
            List<ReusedPage> reused = new ArrayList<>();
            if (version == 4) {
                int m = in.readInt();
                if (m < 0 || m > canonical.length / 40) {
                    throw new IllegalArgumentException("bad reused page count " + m);
                }
                for (int i = 0; i < m; i++) {
                    reused.add(new ReusedPage(string(in), in.readInt(), in.readLong(), in.readInt(), in.readInt(),
                            in.readLong(), in.readLong()));
                }
            }
            byte[] hash = in.readNBytes(32);
            if (hash.length != 32 || in.read() != -1) {
                throw new IllegalArgumentException("receipt body has a bad length");
            }
            return new ReceiptBody(version, requestId, tenant, model, node, replica, reads, hash, issuedAt, reused);
        } catch (IOException e) {
            throw new IllegalArgumentException("truncated receipt body", e);
        }
    }

    /** SHA-256 over u32 token count and each token id as u32, big-endian. */
    public static byte[] outputHash(int[] tokens) {
        MessageDigest md = sha256();
        byte[] b = new byte[4];
        putInt(md, b, tokens.length);
        for (int t : tokens) {
            putInt(md, b, t);
        }
        return md.digest();
    }

    public static byte[] digest(byte[] canonical) {
        return sha256().digest(canonical);
    }

    static MessageDigest sha256() {
        try {
            return MessageDigest.getInstance("SHA-256");
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException(e);
        }
    }

    private static void putInt(MessageDigest md, byte[] b, int v) {
        b[0] = (byte) (v >>> 24);
        b[1] = (byte) (v >>> 16);
        b[2] = (byte) (v >>> 8);
        b[3] = (byte) v;
        md.update(b);
    }

    private static void string(DataOutputStream out, String s) throws IOException {
        byte[] b = s.getBytes(StandardCharsets.UTF_8);
        out.writeInt(b.length);
        out.write(b);
    }

    private static String string(DataInputStream in) throws IOException {
        int n = in.readInt();
        if (n < 0 || n > MAX_STRING) {
            throw new IllegalArgumentException("bad string length " + n);
        }
        byte[] b = in.readNBytes(n);
        if (b.length != n) {
            throw new IOException("truncated string");
        }
        return new String(b, StandardCharsets.UTF_8);
    }
}
