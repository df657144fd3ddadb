package dev.pagewarden.platform;

import dev.pagewarden.core.receipt.ReceiptKeyStore;
import dev.pagewarden.db.audit.ReceiptKeyRegistry;
import dev.pagewarden.db.embedded.EmbeddedPostgresServer;
import dev.pagewarden.platform.testing.StandalonePlatform;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.springframework.context.ConfigurableApplicationContext;

import javax.sql.DataSource;
import java.nio.file.Path;
import java.security.KeyPairGenerator;
import java.time.Duration;

import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * What a second replica must never share with the first: the journal folder (refused at start, naming the
 * folder and its holder), and a receipt key id that PostgreSQL holds for another key (fail closed).
 */
class ReplicaStartupTest {
    @Test
    void aSecondPlatformOnTheSameJournalFolderIsRefusedNamingTheFolderAndItsHolder(@TempDir Path dir) {
        Path journal = dir.resolve("journal");
        try (ConfigurableApplicationContext first = StandalonePlatform.start("pagewarden.home=" + dir.resolve("a"),
                "pagewarden.audit.journal-dir=" + journal)) {
            assertThatThrownBy(() -> StandalonePlatform.start("pagewarden.home=" + dir.resolve("b"),
                    "pagewarden.audit.journal-dir=" + journal).close())
                    .hasStackTraceContaining("lineage journal folder " + journal.toAbsolutePath()
                            + " is in use by another journal (held by pid " + ProcessHandle.current().pid() + " on host ");
        }
    }

    @Test
    void aReplicaWhoseSigningKeyIdIsTakenInPostgresDoesNotStart(@TempDir Path dir) throws Exception {
        try (ConfigurableApplicationContext first = StandalonePlatform.start("pagewarden.home=" + dir.resolve("a"))) {
            EmbeddedPostgresServer db = first.getBean(EmbeddedPostgresServer.class);
            // the second replica's key folder, and its key id already registered with another key
            String id = ReceiptKeyStore.open(dir.resolve("b").resolve("keys"), "pw").keys().currentKeyId();
            new ReceiptKeyRegistry(first.getBean(DataSource.class), Duration.ofSeconds(5), Duration.ZERO)
                    .register(id, KeyPairGenerator.getInstance("Ed25519").generateKeyPair().getPublic(), "elsewhere");
            assertThatThrownBy(() -> StandalonePlatform.start("pagewarden.home=" + dir.resolve("b"),
                    "spring.datasource.url=" + db.jdbcUrl(), "spring.datasource.username=" + db.user(),
                    "spring.datasource.password=" + db.password()).close())
                    .hasStackTraceContaining("receipt signing key " + id + " (" + dir.resolve("b").resolve("keys")
                            + ") could not be registered in PostgreSQL (receipt_keys): receipt key id " + id
                            + " is registered in PostgreSQL (receipt_keys) with another public key, by node elsewhere");
        }
    }
}
