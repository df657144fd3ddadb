package dev.pagewarden.platform.evidence;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.SerializationFeature;
import dev.pagewarden.core.receipt.ReceiptSigner;
import dev.pagewarden.db.evidence.Canonical;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Base64;
import java.util.HexFormat;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.zip.ZipEntry;
import java.util.zip.ZipOutputStream;

/**
 * The evidence bundle: a zip of JSON files, {@code manifest.json} listing every other file with its
 * SHA-256 and size, and {@code manifest.sig}, the base64 Ed25519 signature of the manifest's exact bytes
 * with the receipt key named in the manifest ({@code key_id}); {@code keys.json} carries that public key.
 */
final class BundleFormat {
    static final String FORMAT = "pagewarden-evidence-v1";
    static final String MANIFEST = "manifest.json";
    static final String SIGNATURE = "manifest.sig";
    static final String KEYS = "keys.json";
    static final ObjectMapper JSON = new ObjectMapper().enable(SerializationFeature.INDENT_OUTPUT);

    private BundleFormat() {
    }

    static String json(Object value) {
        try {
            return JSON.writeValueAsString(value);
        } catch (JsonProcessingException e) {
            throw new IllegalStateException("not JSON: " + e.getMessage(), e);
        }
    }

    static byte[] jsonBytes(Object value) {
        return json(value).getBytes(StandardCharsets.UTF_8);
    }

    /**
     * Zips {@code files} (name -> content) with {@code keys.json} (the public keys as published, with their chain), the manifest
     * ({@code about} first, then the file list) and its signature by {@code signer}.
     */
    static byte[] write(Map<String, byte[]> files, Map<String, Object> about, ReceiptSigner signer, List<Map<String, Object>> keys) {
        Map<String, byte[]> all = new LinkedHashMap<>(files);
        all.put(KEYS, jsonBytes(Map.of("keys", keys)));
        Map<String, Object> manifest = new LinkedHashMap<>();
        manifest.put("format", FORMAT);
        manifest.putAll(about);
        manifest.put("key_id", signer.currentKeyId());
        List<Map<String, Object>> list = new ArrayList<>();
        all.forEach((name, bytes) -> {
            Map<String, Object> f = new LinkedHashMap<>();
            f.put("name", name);
            f.put("sha256", HexFormat.of().formatHex(Canonical.sha256(bytes)));
            f.put("bytes", bytes.length);
            list.add(f);
        });
        manifest.put("files", list);
        byte[] manifestBytes = jsonBytes(manifest);
        ReceiptSigner.Signed signed = signer.sign(manifestBytes);
        if (!signed.keyId().equals(signer.currentKeyId())) {
            throw new IllegalStateException("the receipt key rotated while the bundle was signed; export again");
        }
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        try (ZipOutputStream zip = new ZipOutputStream(out)) {
            put(zip, MANIFEST, manifestBytes);
            put(zip, SIGNATURE, Base64.getEncoder().encode(signed.signature()));
            for (var e : all.entrySet()) {
                put(zip, e.getKey(), e.getValue());
            }
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        return out.toByteArray();
    }

    private static void put(ZipOutputStream zip, String name, byte[] bytes) throws IOException {
        zip.putNextEntry(new ZipEntry(name));
        zip.write(bytes);
        zip.closeEntry();
    }
}
