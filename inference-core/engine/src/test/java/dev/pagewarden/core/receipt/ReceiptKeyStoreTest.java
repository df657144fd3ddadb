package dev.pagewarden.core.receipt;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.attribute.PosixFilePermissions;
import java.security.MessageDigest;
import java.security.PrivateKey;
import java.security.PublicKey;
import java.util.HexFormat;
import java.util.Map;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/** Receipt keys kept in a directory: created once, owner-only files, rotation, survival across restarts. */
class ReceiptKeyStoreTest {
    @TempDir
    Path tmp;

    /** The id a key set made for its N-th key: {@code prefix-N-} and the key's fingerprint. */
    private static String idOf(ReceiptKeys keys, int n) {
        return keys.publicKeys().keySet().stream().filter(id -> ReceiptKeys.serialOf(keys.prefix(), id) == n)
                .findFirst().orElseThrow();
    }

    @Test
    void firstOpenCreatesAKeyWithOwnerOnlyFilesAndARestartSignsWithTheSameKey() throws Exception {
        Path dir = tmp.resolve("keys");
        ReceiptKeyStore first = ReceiptKeyStore.open(dir, "pw");
        assertThat(first.created()).isTrue();
        String id = first.keys().currentKeyId();
        // pw-1-<first 8 bytes of SHA-256 over the X.509 public key, hex>, computed here independently
        byte[] spki = first.keys().publicKeys().get(id).getEncoded();
        String expected = "pw-1-" + HexFormat.of().formatHex(MessageDigest.getInstance("SHA-256").digest(spki), 0, 8);
        assertThat(id).isEqualTo(expected);
        assertThat(PosixFilePermissions.toString(Files.getPosixFilePermissions(dir))).isEqualTo("rwx------");
        for (String f : new String[] {id + ".pub", id + ".key"}) {
            assertThat(PosixFilePermissions.toString(Files.getPosixFilePermissions(dir.resolve(f)))).isEqualTo("rw-------");
        }
        assertThat(Files.readString(dir.resolve(id + ".key"))).startsWith("-----BEGIN PRIVATE KEY-----");
        assertThat(Files.readString(dir.resolve(id + ".pub"))).startsWith("-----BEGIN PUBLIC KEY-----");
        Receipt before = ReceiptSignatureTest.sample(first.keys());

        // "restart": a new process would open the same directory
        ReceiptKeyStore again = ReceiptKeyStore.open(dir, "pw");
        assertThat(again.created()).isFalse();
        assertThat(again.keys().currentKeyId()).isEqualTo(id);
        assertThat(again.keys().publishedKeys()).isEqualTo(first.keys().publishedKeys());
        assertThat(ReceiptVerifier.verifySignature(before, again.keys().publicKeys())).isTrue();
        // and it signs with the very same key: its receipts verify against the keys published before
        Receipt after = ReceiptSignatureTest.sample(again.keys());
        assertThat(ReceiptVerifier.verifySignature(after, ReceiptKeys.parsePublished(first.keys().publishedKeys()))).isTrue();

        // another key folder (another replica) never makes the same id
        ReceiptKeyStore other = ReceiptKeyStore.open(tmp.resolve("other"), "pw");
        assertThat(other.keys().currentKeyId()).startsWith("pw-1-").isNotEqualTo(id);
        assertThat(ReceiptVerifier.verifySignature(before, other.keys().publicKeys())).isFalse();
    }

    @Test
    void aFolderWithAKeyOfTheOlderIdFormSignsOnWithAFingerprintedKeyAndKeepsTheOldOne() throws Exception {
        Path dir = tmp.resolve("keys");
        ReceiptKeyStore made = ReceiptKeyStore.open(dir, "pw");
        String id = made.keys().currentKeyId();
        Receipt signed = ReceiptSignatureTest.sample(made.keys());
        // what a release before fingerprinted ids left: pw-1.pub and pw-1.key
        Files.move(dir.resolve(id + ".pub"), dir.resolve("pw-1.pub"));
        Files.move(dir.resolve(id + ".key"), dir.resolve("pw-1.key"));
        Receipt legacy = new Receipt(signed.body(), signed.digest(), "pw-1", signed.signature());

        ReceiptKeyStore upgraded = ReceiptKeyStore.open(dir, "pw");
        String now = upgraded.keys().currentKeyId();
        assertThat(now).startsWith("pw-2-").isEqualTo("pw-2-" + ReceiptKeys.fingerprint(upgraded.keys().publicKeys().get(now)));
        assertThat(upgraded.keys().publicKeys().keySet()).containsExactly("pw-1", now);
        assertThat(Files.exists(dir.resolve("pw-1.key"))).isFalse();
        assertThat(ReceiptVerifier.verifySignature(legacy, upgraded.keys().publicKeys())).isTrue();
        assertThat(ReceiptKeyStore.open(dir, "pw").keys().currentKeyId()).as("stable from then on").isEqualTo(now);
    }

    @Test
    void rotationKeepsOldPublicKeysAcrossRestartsAndRetireDropsThem() throws Exception {
        Path dir = tmp.resolve("keys");
        ReceiptKeyStore store = ReceiptKeyStore.open(dir, "pw");
        String id1 = store.keys().currentKeyId();
        Receipt signedWith1 = ReceiptSignatureTest.sample(store.keys());
        String id2 = store.rotate();
        assertThat(id2).startsWith("pw-2-");
        Receipt signedWith2 = ReceiptSignatureTest.sample(store.keys());
        assertThat(signedWith2.keyId()).isEqualTo(id2);
        assertThat(Files.exists(dir.resolve(id1 + ".key"))).as("old private key deleted").isFalse();
        assertThat(Files.exists(dir.resolve(id1 + ".pub"))).as("old public key kept").isTrue();

        ReceiptKeyStore restarted = ReceiptKeyStore.open(dir, "pw");
        assertThat(restarted.keys().currentKeyId()).isEqualTo(id2);
        assertThat(restarted.keys().publicKeys().keySet()).containsExactly(id1, id2);
        assertThat(ReceiptVerifier.verifySignature(signedWith1, restarted.keys().publicKeys())).isTrue();
        assertThat(ReceiptVerifier.verifySignature(signedWith2, restarted.keys().publicKeys())).isTrue();
        String id3 = restarted.rotate();
        assertThat(id3).as("numbering continues after a restart").startsWith("pw-3-");

        restarted.retire(id1);
        assertThatThrownBy(() -> restarted.retire(id3)).isInstanceOf(IllegalArgumentException.class);
        ReceiptKeyStore last = ReceiptKeyStore.open(dir, "pw");
        assertThat(last.keys().publicKeys().keySet()).containsExactly(id2, id3);
        assertThat(ReceiptVerifier.verifySignature(signedWith1, last.keys().publicKeys())).isFalse();
        assertThat(ReceiptVerifier.verifySignature(signedWith2, last.keys().publicKeys())).isTrue();
    }

    @Test
    void aRotationInterruptedBeforeDeletingTheOldPrivateKeyResumesWithTheNewKey() throws Exception {
        Path dir = tmp.resolve("keys");
        ReceiptKeyStore store = ReceiptKeyStore.open(dir, "pw");
        String id1 = store.keys().currentKeyId();
        Path savedOld = tmp.resolve("old.key.saved");
        Files.copy(dir.resolve(id1 + ".key"), savedOld, StandardCopyOption.COPY_ATTRIBUTES);
        String id2 = store.rotate();
        // the crash: the second key written, the first one's private key not yet deleted
        Files.copy(savedOld, dir.resolve(id1 + ".key"), StandardCopyOption.COPY_ATTRIBUTES);

        ReceiptKeyStore reopened = ReceiptKeyStore.open(dir, "pw");
        assertThat(reopened.keys().currentKeyId()).isEqualTo(id2);
        assertThat(Files.exists(dir.resolve(id1 + ".key"))).isFalse();
        assertThat(reopened.keys().publicKeys().keySet()).containsExactly(id1, id2);
    }

    @Test
    void unsafeOrInconsistentDirectoriesAreRefusedWithTheReason() throws Exception {
        Path dir = tmp.resolve("keys");
        String id = ReceiptKeyStore.open(dir, "pw").keys().currentKeyId();
        Files.setPosixFilePermissions(dir.resolve(id + ".key"), PosixFilePermissions.fromString("rw-r--r--"));
        assertThatThrownBy(() -> ReceiptKeyStore.open(dir, "pw"))
                .isInstanceOf(IllegalStateException.class).hasMessageContaining("chmod 600");
        Files.setPosixFilePermissions(dir.resolve(id + ".key"), PosixFilePermissions.fromString("rw-------"));

        // a private key paired with someone else's public key
        Path other = tmp.resolve("other");
        String otherId = ReceiptKeyStore.open(other, "pw").keys().currentKeyId();
        Files.copy(other.resolve(otherId + ".pub"), dir.resolve(id + ".pub"), StandardCopyOption.REPLACE_EXISTING);
        assertThatThrownBy(() -> ReceiptKeyStore.open(dir, "pw"))
                .isInstanceOf(IllegalStateException.class).hasMessageContaining("does not match");

        // publics but the private key gone: no silent new key set
        Files.delete(dir.resolve(id + ".key"));
        assertThatThrownBy(() -> ReceiptKeyStore.open(dir, "pw"))
                .isInstanceOf(IllegalStateException.class).hasMessageContaining("no private key");

        Files.writeString(other.resolve(otherId + ".pub"), "garbage");
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
        String third = idOf(a, 3);
        assertThat(ReceiptKeys.serialOf("k", "k-3")).isEqualTo(3);
        assertThat(ReceiptKeys.serialOf("k", "k-12-0123456789abcdef")).isEqualTo(12);
        assertThat(ReceiptKeys.serialOf("k", "k-12-xyz")).isZero();
        assertThat(ReceiptKeys.serialOf("k", "other-9")).isZero();
        assertThatThrownBy(() -> ReceiptKeys.restore("k", pubs, "k-9", null))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("no public key");
        // b's private key is not the third key's
        PrivateKey foreign = privateKeyOf(b);
        assertThatThrownBy(() -> ReceiptKeys.restore("k", pubs, third, foreign)).isInstanceOf(IllegalArgumentException.class).hasMessageContaining("does not match");
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
