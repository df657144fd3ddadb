package dev.pagewarden.platform.audit;

import dev.pagewarden.core.receipt.ReceiptKeyStore;
import dev.pagewarden.core.receipt.ReceiptTrust;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Files;
import java.nio.file.Path;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * The trust file at start: written with the replica's root at first start (not legacy for a new key directory,
 * legacy for one that existed before), kept when the key chains, appended to by a replica whose root is missing,
 * and a read-only file without it stops the start naming the line to pin; later rotations chain without a change.
 */
class ReceiptTrustFileTest {
    @TempDir
    Path tmp;

    @Test
    void firstStartPinsTheRootAndRotationsChainToIt() throws Exception {
        Path file = tmp.resolve("receipt-trust");
        ReceiptKeyStore store = ReceiptKeyStore.open(tmp.resolve("a"), "pw");
        String root = store.keys().currentKeyId();
        ReceiptTrust trust = ReceiptTrustFile.ensure(file, store);
        assertThat(trust.roots()).containsOnlyKeys(root);
        assertThat(trust.roots().get(root).legacy()).as("a new key directory signed no receipt without issue time").isFalse();

        store.rotate();
        String before = Files.readString(file);
        assertThat(ReceiptTrustFile.ensure(file, store).roots()).containsOnlyKeys(root);
        assertThat(Files.readString(file)).as("the rotated key chains: nothing appended").isEqualTo(before);

        // a second replica sharing the file appends its root; an existing key directory is pinned as legacy
        ReceiptKeyStore.open(tmp.resolve("b"), "pw");
        ReceiptKeyStore b = ReceiptKeyStore.open(tmp.resolve("b"), "pw");
        String bRoot = b.keys().currentKeyId();
        ReceiptTrust shared = ReceiptTrustFile.ensure(file, b);
        assertThat(shared.roots()).containsOnlyKeys(root, bRoot);
        assertThat(shared.roots().get(bRoot).legacy()).isTrue();
    }

    @Test
    void aTrustFileThatCannotBeWrittenStopsTheStartNamingTheLineToPin() throws Exception {
        // a path that cannot be written whoever runs this (its folder is a file), like a read-only mount
        Path blocked = Files.writeString(tmp.resolve("not-a-folder"), "");
        Path file = blocked.resolve("receipt-trust");
        ReceiptKeyStore store = ReceiptKeyStore.open(tmp.resolve("c"), "pw");
        assertThatThrownBy(() -> ReceiptTrustFile.ensure(file, store)).isInstanceOf(IllegalStateException.class)
                .hasMessageContaining("cannot be written").hasMessageContaining("root " + store.keys().currentKeyId() + " ");
    }
}
