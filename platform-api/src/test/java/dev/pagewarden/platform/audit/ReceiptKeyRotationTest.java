package dev.pagewarden.platform.audit;

import dev.pagewarden.core.receipt.ReceiptKeyStore;
import dev.pagewarden.db.audit.ReceiptKeyRegistry;
import dev.pagewarden.db.embedded.EmbeddedPostgresServer;
import dev.pagewarden.db.schema.Migrations;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.sql.SQLException;
import java.time.Duration;
import java.util.stream.Stream;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * A replica's key rotation against a real PostgreSQL: the new key is registered before it signs and the old one
 * marked superseded; with the database gone nothing rotates; this replica's own signing key cannot be retired;
 * and a key folder restored from before a rotation, whose signing key was retired since, rotates before signing.
 */
class ReceiptKeyRotationTest {
    @TempDir
    Path tmp;

    @Test
    void rotationRegistersFirstAndARetiredSigningKeyNeverSignsAgain() throws Exception {
        EmbeddedPostgresServer pg = EmbeddedPostgresServer.start(
                EmbeddedPostgresServer.Config.defaults().withDataDirectory(tmp.resolve("pg")));
        Path keys = tmp.resolve("keys");
        Path backup = tmp.resolve("backup");
        try (pg) {
            Migrations.migrate(pg.dataSource());
            ReceiptKeyRegistry registry = new ReceiptKeyRegistry(pg.dataSource(), Duration.ofSeconds(5), Duration.ZERO);
            ReceiptKeyStore store = ReceiptKeyStore.open(keys, "pw");
            registry.registerAll(store.keys(), "node-a");
            String first = store.keys().currentKeyId();
            copy(keys, backup);

            ReceiptKeyRotation.Rotated r = ReceiptKeyRotation.rotate(store, registry, "node-a");
            assertThat(r.previous()).isEqualTo(first);
            assertThat(store.keys().currentKeyId()).isEqualTo(r.current()).isNotEqualTo(first);
            assertThat(registry.lookup(r.current()).orElseThrow().node()).isEqualTo("node-a");
            assertThat(registry.lookup(first).orElseThrow().supersededAt()).isNotNull();

            ReceiptKeyRotation rotation = new ReceiptKeyRotation(store, registry, "node-a", null);
            assertThatThrownBy(() -> rotation.retire("someone", r.current()))
                    .isInstanceOf(ReceiptKeyRegistry.StillSigning.class)
                    .hasMessage("receipt key " + r.current() + " is this replica's signing key (node node-a); rotate first "
                            + "(POST /admin/api/receipt-keys/rotate), then retire it");
            assertThat(registry.retire(first).orElseThrow().retiredAt()).isNotNull();

            // the folder as it was before the rotation: its signing key is retired, so it rotates before signing
            ReceiptKeyStore restored = ReceiptKeyStore.open(backup, "pw");
            assertThat(restored.keys().currentKeyId()).isEqualTo(first);
            registry.registerAll(restored.keys(), "node-a");
            String signing = ReceiptKeyRotation.neverRetired(restored, registry, "node-a");
            assertThat(signing).isNotEqualTo(first).isEqualTo(restored.keys().currentKeyId());
            assertThat(registry.lookup(signing)).isPresent();
            assertThat(ReceiptKeyRotation.neverRetired(store, registry, "node-a")).as("a live key stays")
                    .isEqualTo(r.current());

            // PostgreSQL gone: the rotation fails and the key that signs stays
            pg.close();
            String before = store.keys().currentKeyId();
            assertThatThrownBy(() -> ReceiptKeyRotation.rotate(store, registry, "node-a")).isInstanceOf(SQLException.class);
            assertThat(store.keys().currentKeyId()).isEqualTo(before);
            try (Stream<Path> files = Files.list(keys)) {
                assertThat(files.map(p -> p.getFileName().toString()).filter(n -> n.endsWith(".key")))
                        .as("one private key, the one signing").containsExactly(before + ".key");
            }
        }
    }

    private static void copy(Path from, Path to) throws Exception {
        Files.createDirectories(to);
        try (Stream<Path> files = Files.list(from)) {
            for (Path f : files.toList()) {
                Files.copy(f, to.resolve(f.getFileName()), StandardCopyOption.COPY_ATTRIBUTES);
            }
        }
    }
}
