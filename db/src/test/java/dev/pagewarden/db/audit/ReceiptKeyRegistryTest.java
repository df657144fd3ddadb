package dev.pagewarden.db.audit;

import dev.pagewarden.core.receipt.PageEpochRead;
import dev.pagewarden.core.receipt.Receipt;
import dev.pagewarden.core.receipt.ReceiptIssuer;
import dev.pagewarden.core.receipt.ReceiptKeyStore;
import dev.pagewarden.core.receipt.ReceiptKeys;
import dev.pagewarden.core.receipt.ReceiptVerifier;
import dev.pagewarden.core.receipt.ServingIdentity;
import dev.pagewarden.db.audit.ReceiptAudit.Status;
import dev.pagewarden.db.audit.ReceiptAudit.Verdict;
import dev.pagewarden.db.schema.Migrations;
import dev.pagewarden.db.testing.TestPostgres;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import javax.sql.DataSource;
import java.nio.file.Path;
import java.security.KeyPair;
import java.security.KeyPairGenerator;
import java.security.PublicKey;
import java.sql.SQLException;
import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * Two replicas - two key folders, two registries - over one real PostgreSQL: each registers its key, and a
 * receipt signed by one verifies through the other's lookup; unknown and clashing key ids fail clearly; a
 * rotation registers its key before it signs, and a retired key verifies what it signed but cannot be a signing key.
 */
class ReceiptKeyRegistryTest {
    private static TestPostgres pg;
    private static DataSource ds;

    @TempDir
    Path tmp;

    @BeforeAll
    static void startPostgres() throws Exception {
        pg = TestPostgres.start("receipt-keys");
        ds = pg.dataSource();
        Migrations.migrate(ds);
    }

    @AfterAll
    static void stopPostgres() throws Exception {
        if (pg != null) {
            pg.close();
        }
    }

    private static Receipt signed(ReceiptKeys keys, String node, long request) {
        // a request that read no cached KV: the audit then judges the signature alone
        return new ReceiptIssuer("stories260K.bin", keys, new ServingIdentity(node, "r-0123456789abcdef"))
                .issue(request, "acme", List.<PageEpochRead>of(), new int[] {5, 17});
    }

    private static ReceiptAudit auditOf(ReceiptKeyRegistry registry) {
        return new ReceiptAudit(ds, id -> registry.find(id).orElse(null));
    }

    @Test
    void aReceiptSignedOnOneReplicaVerifiesOnTheOther() throws Exception {
        ReceiptKeyStore a = ReceiptKeyStore.open(tmp.resolve("a"), "pw");
        ReceiptKeyStore b = ReceiptKeyStore.open(tmp.resolve("b"), "pw");
        ReceiptKeyRegistry onA = new ReceiptKeyRegistry(ds, Duration.ofSeconds(5), Duration.ofMinutes(1));
        ReceiptKeyRegistry onB = new ReceiptKeyRegistry(ds, Duration.ofSeconds(5), Duration.ZERO);
        assertThat(onA.registerAll(a.keys(), "replica-a")).isEmpty();
        assertThat(onB.registerAll(b.keys(), "replica-b")).isEmpty();
        // a restart of A registers again: nothing changes
        assertThat(onA.register(a.keys().currentKeyId(), a.keys().publicKeys().get(a.keys().currentKeyId()), "replica-a")).isFalse();

        Receipt fromA = signed(a.keys(), "replica-a", 11);
        Receipt fromB = signed(b.keys(), "replica-b", 12);
        assertThat(fromA.keyId()).isNotEqualTo(fromB.keyId());
        // B knows only its own key locally: A's receipt fails there without the registry...
        assertThat(ReceiptVerifier.verifySignature(fromA, b.keys().publicKeys())).isFalse();
        // ...and verifies through B's registry, both ways
        assertThat(auditOf(onB).verify(fromA).status()).isEqualTo(Status.OK);
        assertThat(auditOf(onA).verify(fromB).status()).isEqualTo(Status.OK);

        // what either replica serves lists both keys, with the node that registered each
        Map<String, String> nodes = new LinkedHashMap<>();
        Map<String, PublicKey> served = new LinkedHashMap<>();
        for (ReceiptKeyRegistry.RegisteredKey k : onB.all()) {
            nodes.put(k.keyId(), k.node());
            served.put(k.keyId(), k.publicKey());
            assertThat(k.algorithm()).isEqualTo("Ed25519");
            assertThat(k.retiredAt()).isNull();
            if (k.keyId().equals(a.keys().currentKeyId()) || k.keyId().equals(b.keys().currentKeyId())) {
                assertThat(k.supersededAt()).as("both still sign").isNull();
            }
        }
        assertThat(nodes).containsEntry(a.keys().currentKeyId(), "replica-a").containsEntry(b.keys().currentKeyId(), "replica-b");
        assertThat(ReceiptVerifier.verifySignature(fromA, served)).as("offline, with the served keys").isTrue();
        assertThat(ReceiptVerifier.verifySignature(fromB, served)).isTrue();

        // a tampered signature is still caught with the registered key
        byte[] sig = fromA.signature();
        sig[0] ^= 1;
        assertThat(auditOf(onB).verify(new Receipt(fromA.body(), fromA.digest(), fromA.keyId(), sig)).detail())
                .isEqualTo("signature or digest invalid for key " + fromA.keyId());

        // B's signing key cannot be retired while it signs
        String bFirst = b.keys().currentKeyId();
        assertThatThrownBy(() -> onA.retire(bFirst)).isInstanceOf(ReceiptKeyRegistry.StillSigning.class)
                .hasMessage("receipt key " + bFirst + " is the signing key of node replica-b; rotate that replica's key "
                        + "first (POST /admin/api/receipt-keys/rotate on it), then retire this one");

        // B rotates: the new key is registered before it is stored or signs; a registration that fails rotates nothing
        assertThatThrownBy(() -> b.rotate((id, pair) -> {
            throw new java.io.IOException("PostgreSQL away");
        })).hasMessage("PostgreSQL away");
        assertThat(b.keys().currentKeyId()).isEqualTo(bFirst);
        List<String> registeredFirst = new java.util.ArrayList<>();
        String bSecond = b.rotate((id, pair) -> {
            try {
                onB.register(id, pair.getPublic(), "replica-b");
                registeredFirst.add(id);
            } catch (SQLException e) {
                throw new java.io.IOException(e);
            }
        });
        assertThat(registeredFirst).containsExactly(bSecond);
        assertThat(onA.lookup(bSecond)).isPresent();
        onB.supersede(bFirst);
        Receipt afterRotation = signed(b.keys(), "replica-b", 14);
        assertThat(afterRotation.keyId()).isEqualTo(bSecond);
        assertThat(auditOf(onA).verify(afterRotation).status()).as("the new key verifies on A at once").isEqualTo(Status.OK);

        // retired once superseded: nothing signs with it, and what it signed before still verifies, on both, and offline
        ReceiptKeyRegistry.RegisteredKey retired = onA.retire(bFirst).orElseThrow();
        assertThat(retired.retiredAt()).isNotNull();
        assertThat(retired.supersededAt()).isBeforeOrEqualTo(retired.retiredAt());
        assertThat(onA.retire(bFirst).orElseThrow().retiredAt()).as("retiring again changes nothing").isEqualTo(retired.retiredAt());
        assertThat(onA.retire("pw-9-0123456789abcdef")).as("an id nobody registered").isEmpty();
        assertThat(auditOf(onB).verify(fromB).status()).isEqualTo(Status.OK);
        assertThat(auditOf(new ReceiptKeyRegistry(ds, Duration.ofSeconds(5), Duration.ZERO)).verify(fromB).status())
                .isEqualTo(Status.OK);
        Map<String, PublicKey> servedNow = new LinkedHashMap<>();
        onB.all().forEach(k -> servedNow.put(k.keyId(), k.publicKey()));
        assertThat(onB.all()).filteredOn(k -> k.keyId().equals(bFirst)).singleElement()
                .extracting(ReceiptKeyRegistry.RegisteredKey::retiredAt).isEqualTo(retired.retiredAt());
        assertThat(ReceiptVerifier.verifySignature(fromB, servedNow)).as("still served, for offline checks").isTrue();

        // a replica whose folder comes back with a registered key set marks its older keys superseded at start
        ReceiptKeyStore a2 = ReceiptKeyStore.open(tmp.resolve("a"), "pw");
        String aFirst = a2.keys().currentKeyId();
        a2.rotate();
        onA.registerAll(a2.keys(), "replica-a");
        assertThat(onA.lookup(aFirst).orElseThrow().supersededAt()).isNotNull();
        assertThat(onA.lookup(a2.keys().currentKeyId()).orElseThrow().supersededAt()).isNull();
    }

    @Test
    void anUnknownKeyIdIsAClearMismatch() throws Exception {
        ReceiptKeys unregistered = ReceiptKeys.generate("pw");
        Receipt r = signed(unregistered, "replica-c", 13);
        Verdict v = auditOf(new ReceiptKeyRegistry(ds, Duration.ofSeconds(5), Duration.ofMinutes(1))).verify(r);
        assertThat(v.status()).isEqualTo(Status.MISMATCH);
        assertThat(v.detail()).isEqualTo("unknown receipt key id '" + r.keyId()
                + "': no replica registered it (receipt_keys)");
    }

    @Test
    void anIdRegisteredWithAnotherKeyIsRefusedForTheSigningKeyAndReportedForOldOnes() throws Exception {
        ReceiptKeyRegistry registry = new ReceiptKeyRegistry(ds, Duration.ofSeconds(5), Duration.ofMinutes(1));
        KeyPair firstPair = KeyPairGenerator.getInstance("Ed25519").generateKeyPair();
        KeyPair secondPair = KeyPairGenerator.getInstance("Ed25519").generateKeyPair();
        PublicKey firstKey = firstPair.getPublic();
        PublicKey secondKey = secondPair.getPublic();
        // two replicas from before fingerprinted ids, both with a key "legacy-1"
        assertThat(registry.register("legacy-1", firstKey, "replica-a")).isTrue();
        assertThatThrownBy(() -> registry.register("legacy-1", secondKey, "replica-b"))
                .isInstanceOf(IllegalStateException.class)
                .hasMessage("receipt key id legacy-1 is registered in PostgreSQL (receipt_keys) with another public key, by node replica-a");

        // the clash on an old key is reported, the signing key still registers
        ReceiptKeys upgraded = ReceiptKeys.restore("legacy", Map.of("legacy-1", secondKey), "legacy-1", secondPair.getPrivate());
        String signing = upgraded.rotate();
        assertThat(registry.registerAll(upgraded, "replica-b")).containsExactly("legacy-1");
        assertThat(registry.find(signing)).isPresent();
        // a signing key whose id clashes is refused: its receipts would verify nowhere else
        ReceiptKeys stuck = ReceiptKeys.restore("legacy", Map.of("legacy-1", secondKey), "legacy-1", secondPair.getPrivate());
        assertThatThrownBy(() -> registry.registerAll(stuck, "replica-b")).isInstanceOf(IllegalStateException.class);
    }

    @Test
    void anUnreachableDatabaseFailsTheCallInsteadOfHanging() throws Exception {
        ReceiptKeyRegistry registry = new ReceiptKeyRegistry(ds, Duration.ofSeconds(2), Duration.ofMinutes(1));
        ReceiptKeys keys = ReceiptKeys.generate("pw");
        pg.stop();
        try {
            assertThatThrownBy(() -> registry.registerAll(keys, "replica-d")).isInstanceOf(SQLException.class);
            assertThatThrownBy(() -> registry.find(keys.currentKeyId())).isInstanceOf(SQLException.class);
        } finally {
            pg.restart();
        }
        assertThat(registry.registerAll(keys, "replica-d")).isEmpty();
    }
}
