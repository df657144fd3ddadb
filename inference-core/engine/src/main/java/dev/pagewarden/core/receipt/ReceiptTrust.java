package dev.pagewarden.core.receipt;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.security.GeneralSecurityException;
import java.security.KeyFactory;
import java.security.PublicKey;
import java.security.spec.X509EncodedKeySpec;
import java.util.ArrayList;
import java.util.Base64;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.regex.Pattern;

/**
 * The receipt keys an operator pins outside the database: the root of each replica's key chain. Every later
 * key is trusted only through {@link KeyEndorsement}s walked from a root ({@link TrustedKeys#resolve}), so a key
 * row written into the database by someone without a root's private key chain is never trusted.
 *
 * <p>The file is text, one root per line, so a replica can append its root and an operator can read, diff and
 * archive it:
 * <pre>
 * # comment
 * root KEY_ID SPKI_BASE64 [legacy]
 * </pre>
 * {@code SPKI_BASE64} is the key's X.509 SubjectPublicKeyInfo in base64 (as served at
 * {@code /.well-known/pagewarden-receipt-keys}). {@code legacy} marks a key that existed before receipts carried an
 * issue time: receipts without one (versions 1 and 2) verify only against such a key.
 */
public record ReceiptTrust(Map<String, Root> roots) {
    private static final Pattern ID = Pattern.compile("[A-Za-z0-9_-]+");
    static final String HEADER = """
            # Pagewarden receipt trust roots: the first receipt key of each replica's key chain.
            # Every later key is trusted only when its predecessor signed it. Keep a copy of this file away from
            # the database and the platform host; audit verify --trust FILE and evidence verify --trust FILE read it.
            # root KEY_ID SPKI_BASE64 [legacy]
            """;

    /** A pinned key; {@code legacy}: receipts without issue time (versions 1 and 2) verify against it. */
    public record Root(String keyId, PublicKey key, boolean legacy) {
        String toLine() {
            return "root " + keyId + " " + Base64.getEncoder().encodeToString(key.getEncoded()) + (legacy ? " legacy" : "");
        }
    }

    public ReceiptTrust {
        roots = Map.copyOf(roots);
    }

    public static ReceiptTrust of(List<Root> roots) {
        Map<String, Root> m = new LinkedHashMap<>();
        roots.forEach(r -> m.put(r.keyId(), r));
        return new ReceiptTrust(m);
    }

    /**
     * Reads a trust file.
     *
     * @throws IOException              it cannot be read
     * @throws IllegalArgumentException a line is not a root (named with its number), or it pins no key
     */
    public static ReceiptTrust read(Path file) throws IOException {
        List<Root> roots = new ArrayList<>();
        List<String> lines = Files.readAllLines(file, StandardCharsets.UTF_8);
        for (int i = 0; i < lines.size(); i++) {
            String line = lines.get(i).strip();
            if (line.isEmpty() || line.startsWith("#")) {
                continue;
            }
            String[] p = line.split("\\s+");
            if (p.length < 3 || p.length > 4 || !p[0].equals("root") || !ID.matcher(p[1]).matches()
                    || (p.length == 4 && !p[3].equals("legacy"))) {
                throw new IllegalArgumentException(file + " line " + (i + 1) + ": expected 'root KEY_ID SPKI_BASE64 [legacy]'");
            }
            try {
                PublicKey key = KeyFactory.getInstance("Ed25519").generatePublic(new X509EncodedKeySpec(Base64.getDecoder().decode(p[2])));
                roots.add(new Root(p[1], key, p.length == 4));
            } catch (GeneralSecurityException | IllegalArgumentException e) {
                throw new IllegalArgumentException(file + " line " + (i + 1) + ": not an Ed25519 public key (base64 X.509)", e);
            }
        }
        if (roots.isEmpty()) {
            throw new IllegalArgumentException(file + " pins no receipt key (no 'root' line)");
        }
        return of(roots);
    }

    /** Appends {@code roots} to {@code file}, creating it with its header when absent; fsynced. */
    public static void append(Path file, List<Root> roots) throws IOException {
        StringBuilder text = new StringBuilder(Files.exists(file) ? "" : HEADER);
        roots.forEach(r -> text.append(r.toLine()).append('\n'));
        Path parent = file.toAbsolutePath().getParent();
        if (parent != null) {
            Files.createDirectories(parent);
        }
        try (var ch = java.nio.channels.FileChannel.open(file, StandardOpenOption.CREATE, StandardOpenOption.WRITE,
                StandardOpenOption.APPEND)) {
            ch.write(StandardCharsets.UTF_8.encode(text.toString()));
            ch.force(true);
        }
    }

    /** The whole file's text for {@code roots} (what {@link #append} writes to a new file). */
    public static String text(List<Root> roots) {
        StringBuilder text = new StringBuilder(HEADER);
        roots.forEach(r -> text.append(r.toLine()).append('\n'));
        return text.toString();
    }
}
