package dev.pagewarden.core.receipt;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.attribute.PosixFilePermissions;
import java.security.PrivateKey;
import java.security.PublicKey;
import java.util.Map;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/** Receipt keys kept in a directory: created once, owner-only files, rotation, survival across restarts. */
class ReceiptKeyStoreTest {
    @TempDir
    Path tmp;

    @Test
    void firstOpenCreatesAKeyWithOwnerOnlyFilesAndARestartSignsWithTheSameKey() throws Exception {
        Path dir = tmp.resolve("keys");
        ReceiptKeyStore first = ReceiptKeyStore.open(dir, "pw");
        assertThat(first.created()).isTrue();
        assertThat(first.keys().currentKeyId()).isEqualTo("pw-1");
        assertThat(PosixFilePermissions.toString(Files.getPosixFilePermissions(dir))).isEqualTo("rwx------");
        for (String f : new String[] {"pw-1.pub", "pw-1.key"}) {
            assertThat(PosixFilePermissions.toString(Files.getPosixFilePermissions(dir.resolve(f)))).isEqualTo("rw-------");
        }
        assertThat(Files.readString(dir.resolve("pw-1.key"))).startsWith("-----BEGIN PRIVATE KEY-----");
        assertThat(Files.readString(dir.resolve("pw-1.pub"))).startsWith("-----BEGIN PUBLIC KEY-----");
        Receipt before = ReceiptSignatureTest.sample(first.keys());

        // "restart": a new process would open the same directory
        ReceiptKeyStore again = ReceiptKeyStore.open(dir, "pw");
        assertThat(again.created()).isFalse();
        assertThat(again.keys().currentKeyId()).isEqualTo("pw-1");
        assertThat(again.keys().publishedKeys()).isEqualTo(first.keys().publishedKeys());
        assertThat(ReceiptVerifier.verifySignature(before, again.keys().publicKeys())).isTrue();
        // and it signs with the very same key: its receipts verify against the keys published before
        Receipt after = ReceiptSignatureTest.sample(again.keys());
        assertThat(ReceiptVerifier.verifySignature(after, ReceiptKeys.parsePublished(first.keys().publishedKeys()))).isTrue();
    }

    @Test
    void rotationKeepsOldPublicKeysAcrossRestartsAndRetireDropsThem() throws Exception {
        Path dir = tmp.resolve("keys");
        ReceiptKeyStore store = ReceiptKeyStore.open(dir, "pw");
        Receipt signedWith1 = ReceiptSignatureTest.sample(store.keys());
        assertThat(store.rotate()).isEqualTo("pw-2");
        Receipt signedWith2 = ReceiptSignatureTest.sample(store.keys());
        assertThat(signedWith2.keyId()).isEqualTo("pw-2");
        assertThat(Files.exists(dir.resolve("pw-1.key"))).as("old private key deleted").isFalse();
        assertThat(Files.exists(dir.resolve("pw-1.pub"))).as("old public key kept").isTrue();

        ReceiptKeyStore restarted = ReceiptKeyStore.open(dir, "pw");
        assertThat(restarted.keys().currentKeyId()).isEqualTo("pw-2");
        assertThat(restarted.keys().publicKeys().keySet()).containsExactly("pw-1", "pw-2");
        assertThat(ReceiptVerifier.verifySignature(signedWith1, restarted.keys().publicKeys())).isTrue();
        assertThat(ReceiptVerifier.verifySignature(signedWith2, restarted.keys().publicKeys())).isTrue();
        assertThat(restarted.rotate()).as("numbering continues after a restart").isEqualTo("pw-3");

        restarted.retire("pw-1");
        assertThatThrownBy(() -> restarted.retire("pw-3")).isInstanceOf(IllegalArgumentException.class);
        ReceiptKeyStore last = ReceiptKeyStore.open(dir, "pw");
        assertThat(last.keys().publicKeys().keySet()).containsExactly("pw-2", "pw-3");
        assertThat(ReceiptVerifier.verifySignature(signedWith1, last.keys().publicKeys())).isFalse();
        assertThat(ReceiptVerifier.verifySignature(signedWith2, last.keys().publicKeys())).isTrue();
    }

    @Test
    void aRotationInterruptedBeforeDeletingTheOldPrivateKeyResumesWithTheNewKey() throws Exception {
        Path dir = tmp.resolve("keys");
        ReceiptKeyStore store = ReceiptKeyStore.open(dir, "pw");
        Path savedOld = tmp.resolve("pw-1.key.saved");
        Files.copy(dir.resolve("pw-1.key"), savedOld, StandardCopyOption.COPY_ATTRIBUTES);
        store.rotate();
        // the crash: pw-2 written, pw-1's private key not yet deleted
        Files.copy(savedOld, dir.resolve("pw-1.key"), StandardCopyOption.COPY_ATTRIBUTES);

        ReceiptKeyStore reopened = ReceiptKeyStore.open(dir, "pw");
        assertThat(reopened.keys().currentKeyId()).isEqualTo("pw-2");
        assertThat(Files.exists(dir.resolve("pw-1.key"))).isFalse();
        assertThat(reopened.keys().publicKeys().keySet()).containsExactly("pw-1", "pw-2");
    }

    @Test
    void unsafeOrInconsistentDirectoriesAreRefusedWithTheReason() throws Exception {
        Path dir = tmp.resolve("keys");
        ReceiptKeyStore.open(dir, "pw");
        Files.setPosixFilePermissions(dir.resolve("pw-1.key"), PosixFilePermissions.fromString("rw-r--r--"));
        assertThatThrownBy(() -> ReceiptKeyStore.open(dir, "pw"))
                .isInstanceOf(IllegalStateException.class).hasMessageContaining("chmod 600");
        Files.setPosixFilePermissions(dir.resolve("pw-1.key"), PosixFilePermissions.fromString("rw-------"));

        // a private key paired with someone else's public key
        Path other = tmp.resolve("other");
        ReceiptKeyStore.open(other, "pw");
        Files.copy(other.resolve("pw-1.pub"), dir.resolve("pw-1.pub"), StandardCopyOption.REPLACE_EXISTING);
        assertThatThrownBy(() -> ReceiptKeyStore.open(dir, "pw"))
                .isInstanceOf(IllegalStateException.class).hasMessageContaining("does not match");

        // publics but the private key gone: no silent new key set
        Files.delete(dir.resolve("pw-1.key"));
        assertThatThrownBy(() -> ReceiptKeyStore.open(dir, "pw"))
                .isInstanceOf(IllegalStateException.class).hasMessageContaining("no private key");

        Files.writeString(other.resolve("pw-1.pub"), "garbage");
        assertThatThrownBy(() -> ReceiptKeyStore.open(other, "pw"))
                .isInstanceOf(IllegalStateException.class).hasMessageContaining("not an Ed25519 public key");
        assertThatThrownBy(() -> ReceiptKeyStore.open(tmp.resolve("x"), "a.b")).isInstanceOf(IllegalArgumentException.class);
    }

    @Test
    void restoreRefusesAMismatchedPairAndContinuesNumbering() {
        ReceiptKeys a = ReceiptKeys.generate("k");
        a.rotate();
        a.rotate();
        ReceiptKeys b = ReceiptKeys.generate("k");
        Map<String, PublicKey> pubs = a.publicKeys();
        assertThat(ReceiptKeys.serialOf("k", "k-3")).isEqualTo(3);
        assertThat(ReceiptKeys.serialOf("k", "other-9")).isZero();
        assertThatThrownBy(() -> ReceiptKeys.restore("k", pubs, "k-9", null))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("no public key");
        // b's private key is not k-3's
        PrivateKey foreign = privateKeyOf(b);
        assertThatThrownBy(() -> ReceiptKeys.restore("k", pubs, "k-3", foreign)).isInstanceOf(IllegalArgumentException.class).hasMessageContaining("does not match");
    }

    private static PrivateKey privateKeyOf(ReceiptKeys keys) {
        PrivateKey[] out = new PrivateKey[1];
        try {
            keys.rotate((id, pair) -> out[0] = pair.getPrivate());
        } catch (IOException e) {
            throw new AssertionError(e);
        }
        return out[0];
    }
}
