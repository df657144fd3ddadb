package dev.pagewarden.platform.evidence;

import dev.pagewarden.core.receipt.ReceiptKeys;
import dev.pagewarden.core.receipt.ReceiptTrust;
import dev.pagewarden.platform.audit.PublishedKeys;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.ByteArrayOutputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.KeyPairGenerator;
import java.security.PublicKey;
import java.time.Instant;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.zip.ZipEntry;
import java.util.zip.ZipOutputStream;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * An evidence bundle is intact only as one unambiguous zip: a local entry prepended before the archive (which the
 * central directory does not list) or a second entry of a file's name ahead of the real one would make readers
 * disagree on the contents, so either is refused; and keys count only when they chain to the pinned trust.
 */
class BundleStructureTest {
    @TempDir
    Path tmp;

    private final ReceiptKeys keys = ReceiptKeys.generate("pw");

    private byte[] bundle() {
        Map<String, byte[]> files = new LinkedHashMap<>();
        files.put("incident.json", BundleFormat.jsonBytes(Map.of("id", 1, "title", "reads of foreign pages")));
        files.put("lineage.json", BundleFormat.jsonBytes(Map.of("rows", List.of())));
        String kid = keys.currentKeyId();
        return BundleFormat.write(files, Map.of("incident", 1, "created_at", Instant.now().toString()), keys,
                List.of(PublishedKeys.jwk(kid, keys.publicKeys().get(kid), true, null)));
    }

    private ReceiptTrust trust() {
        String kid = keys.currentKeyId();
        return ReceiptTrust.of(List.of(new ReceiptTrust.Root(kid, keys.publicKeys().get(kid), false)));
    }

    private BundleVerifier.Report verify(byte[] zip, ReceiptTrust trust) throws Exception {
        Path file = Files.write(tmp.resolve("bundle-" + System.nanoTime() + ".zip"), zip);
        BundleVerifier.Report r = BundleVerifier.verify(file, trust, null);
        r.problems().forEach(p -> System.out.println("broken: " + p));
        return r;
    }

    private static byte[] zip(Map<String, byte[]> entries) throws Exception {
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        try (ZipOutputStream zip = new ZipOutputStream(out)) {
            for (var e : entries.entrySet()) {
                zip.putNextEntry(new ZipEntry(e.getKey()));
                zip.write(e.getValue());
                zip.closeEntry();
            }
        }
        return out.toByteArray();
    }

    @Test
    void anIntactBundleVerifiesAgainstThePinnedRootAndOnlyAgainstIt() throws Exception {
        byte[] zip = bundle();
        BundleVerifier.Report ok = verify(zip, trust());
        assertThat(ok.problems()).isEmpty();
        assertThat(ok.notes()).isEmpty();

        PublicKey other = KeyPairGenerator.getInstance("Ed25519").generateKeyPair().getPublic();
        BundleVerifier.Report elsewhere = verify(zip, ReceiptTrust.of(List.of(new ReceiptTrust.Root("pw-1-other", other, false))));
        assertThat(elsewhere.problems()).anyMatch(p -> p.startsWith("manifest.json: key " + keys.currentKeyId()
                + " does not chain to the pinned trust"));

        BundleVerifier.Report unanchored = verify(zip, null);
        assertThat(unanchored.problems()).isEmpty();
        assertThat(unanchored.notes()).anyMatch(n -> n.contains("no --trust"));
    }

    @Test
    void aLocalEntryPrependedBeforeTheArchiveIsRefused() throws Exception {
        byte[] real = bundle();
        // a forged lineage.json as a local entry only: the bytes before its own central directory
        byte[] extra = zip(Map.of("lineage.json", "{\"rows\":[\"forged\"]}".getBytes(StandardCharsets.UTF_8)));
        int localEnd = indexOf(extra, new byte[] {'P', 'K', 1, 2}, 0); // where its central directory starts
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        out.write(extra, 0, localEnd);
        out.write(real);

        BundleVerifier.Report r = verify(out.toByteArray(), trust());
        assertThat(r.intact()).isFalse();
        assertThat(r.problems()).anyMatch(p -> p.contains("not its central directory") && p.contains("lineage.json"));
    }

    @Test
    void aSecondEntryOfAFilesNameAheadOfTheRealOneIsRefused() throws Exception {
        // the real files after a forged one named like the real lineage.json (written under a placeholder of the same
        // length, then renamed in place: a zip writer refuses duplicate names, a forger's tool does not)
        Map<String, byte[]> entries = new LinkedHashMap<>();
        entries.put("lineage.jsoX", "{\"rows\":[\"forged\"]}".getBytes(StandardCharsets.UTF_8));
        try (var in = new java.util.zip.ZipInputStream(new java.io.ByteArrayInputStream(bundle()))) {
            for (ZipEntry e; (e = in.getNextEntry()) != null; ) {
                entries.put(e.getName(), in.readAllBytes());
            }
        }
        byte[] zip = zip(entries);
        byte[] placeholder = "lineage.jsoX".getBytes(StandardCharsets.US_ASCII);
        for (int i = indexOf(zip, placeholder, 0); i >= 0; i = indexOf(zip, placeholder, i + 1)) {
            zip[i + placeholder.length - 1] = 'n';
        }

        BundleVerifier.Report r = verify(zip, trust());
        assertThat(r.intact()).isFalse();
        assertThat(r.problems()).anyMatch(p -> p.equals("lineage.json: the zip holds more than one entry of this name"));
    }

    private static int indexOf(byte[] hay, byte[] needle, int from) {
        outer:
        for (int i = from; i <= hay.length - needle.length; i++) {
            for (int j = 0; j < needle.length; j++) {
                if (hay[i + j] != needle[j]) {
                    continue outer;
                }
            }
            return i;
        }
        return -1;
    }
}
