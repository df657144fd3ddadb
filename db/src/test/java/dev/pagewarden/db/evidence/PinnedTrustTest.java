package dev.pagewarden.db.evidence;

import dev.pagewarden.core.receipt.KeyEndorsement;
import dev.pagewarden.core.receipt.Receipt;
import dev.pagewarden.core.receipt.ReceiptIssuer;
import dev.pagewarden.core.receipt.ReceiptKeyStore;
import dev.pagewarden.core.receipt.ReceiptSigner;
import dev.pagewarden.core.receipt.ReceiptTrust;
import dev.pagewarden.core.receipt.ServingIdentity;
import dev.pagewarden.core.receipt.TrustedKeys;
import dev.pagewarden.db.audit.KeyTrust;
import dev.pagewarden.db.audit.ReceiptAudit;
import dev.pagewarden.db.audit.ReceiptKeyRegistry;
import dev.pagewarden.db.schema.Migrations;
import dev.pagewarden.db.testing.TestPostgres;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import javax.sql.DataSource;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.KeyFactory;
import java.security.spec.PKCS8EncodedKeySpec;
import java.util.Base64;
import java.security.PrivateKey;
import java.security.Signature;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.time.ZoneOffset;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.stream.Collectors;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Tamper evidence against someone who can write the database: the chains verify only by keys that chain to a root
 * pinned outside it. The forgery that used to pass (a row changed, its chain re-hashed, a key of the forger's own
 * inserted into receipt_keys, the later checkpoints re-signed with it) is named; checkpoints deleted instead are
 * named by the archive kept outside the database; a stored receipt must name its own row's request and tenant; a
 * replaced key cannot sign receipts dated after its replacement.
 */
class PinnedTrustTest {
    private static TestPostgres pg;
    private static DataSource ds;

    @TempDir
    static Path tmp;

    @BeforeAll
    static void start() throws Exception {
        pg = TestPostgres.start("pinned-trust");
        ds = pg.dataSource();
        Migrations.migrate(ds);
    }

    @AfterAll
    static void stop() throws Exception {
        pg.close();
    }

    private static long audit(RowChains chains, String actor) throws SQLException {
        return ChainedAudit.append(ds, chains, actor, "tenant.limits", "acme");
    }

    private static Set<String> broken(ChainVerifier verifier) throws SQLException {
        try (Connection c = ds.getConnection()) {
            ChainVerifier.Result r = verifier.verify(c, null, null);
            r.broken().forEach(b -> System.out.println("broken: " + b));
            assertThat(r.ok()).isEqualTo(r.broken().isEmpty());
            return r.broken().stream().map(b -> b.table() + "/" + b.id()).collect(Collectors.toSet());
        }
    }

    @Test
    void aChainRewrittenInTheDatabaseWithAnInjectedKeyIsNamedAndDeletedCheckpointsAreNamedByTheArchive() throws Exception {
        ReceiptKeyRegistry registry = new ReceiptKeyRegistry(ds, Duration.ofSeconds(5), Duration.ZERO);
        ReceiptKeyStore store = ReceiptKeyStore.open(tmp.resolve("keys"), "pw");
        String root = store.keys().currentKeyId();
        registry.registerAll(store.keys(), "node-a");
        ReceiptTrust trust = ReceiptTrust.of(List.of(new ReceiptTrust.Root(root, store.keys().publicKeys().get(root), false)));
        // the verifier as audit verify --trust runs it: pinned roots, every other key from the database only
        ChainVerifier pinned = new ChainVerifier(new KeyTrust(trust, registry, Map::of, Duration.ZERO), 30);
        ChainVerifier databaseKeys = new ChainVerifier(id -> {
            try {
                return registry.find(id).orElse(null);
            } catch (SQLException e) {
                throw new IllegalStateException(e);
            }
        }, 30);

        List<Checkpoints.Checkpoint> archive = new ArrayList<>();
        for (String node : List.of("node-a", "node-b")) {
            RowChains chains = new RowChains(node, 10);
            Checkpoints checkpoints = new Checkpoints(ds, store.keys(), node, 10, Clock.systemUTC());
            for (int i = 0; i < 6; i++) {
                audit(chains, "alice");
                if (i % 2 == 1) {
                    archive.addAll(checkpoints.checkpoint());
                }
            }
        }
        // a rotation (the new key endorsed by the root, registered with its endorsement) signs the last checkpoints
        store.rotate(registering(registry));
        for (String node : List.of("node-a", "node-b")) {
            audit(new RowChains(node, 10), "alice");
            archive.addAll(new Checkpoints(ds, store.keys(), node, 10, Clock.systemUTC()).checkpoint());
        }
        assertThat(archive).extracting(Checkpoints.Checkpoint::keyId).contains(root, store.keys().currentKeyId());
        assertThat(broken(pinned)).isEmpty();
        assertThat(broken(pinned.withArchive(archive))).isEmpty();

        long row = firstRowOf("admin_audit:node-a") + 1;
        ChainForgery.Forged forged = ChainForgery.rewriteAuditRow(ds, row, "mallory", false);
        assertThat(forged.resigned()).isNotEmpty();
        // what the database's own key table let pass
        assertThat(broken(databaseKeys)).as("trusting receipt_keys, the forgery verifies").isEmpty();
        // the pinned trust names the injected key and every checkpoint it re-signed
        Set<String> named = broken(pinned);
        assertThat(named).contains("receipt_keys/" + forged.injectedKeyId());
        forged.resigned().forEach(k -> assertThat(named).contains("chain_checkpoints/" + k));
        // and the archive names the rewritten chain itself
        Set<String> withArchive = broken(pinned.withArchive(archive));
        assertThat(withArchive).anyMatch(b -> b.startsWith("archived_checkpoints/admin_audit:node-a#"));

        // the forger deletes node-b's later checkpoints instead of re-signing them
        long rowB = firstRowOf("admin_audit:node-b") + 1;
        ChainForgery.Forged deleted = ChainForgery.rewriteAuditRow(ds, rowB, "mallory", true);
        Set<String> namedB = broken(pinned).stream().filter(b -> b.contains("node-b")).collect(Collectors.toSet());
        assertThat(namedB).as("the database alone cannot show what was deleted with it").isEmpty();
        Set<String> archivedB = broken(pinned.withArchive(archive)).stream().filter(b -> b.contains("node-b"))
                .collect(Collectors.toSet());
        assertThat(archivedB).anyMatch(b -> b.startsWith("archived_checkpoints/admin_audit:node-b#"))
                .anyMatch(b -> b.startsWith("chain_checkpoints/admin_audit:node-b#"));
        assertThat(deleted.fromSeq()).isEqualTo(2);
    }

    @Test
    void aStoredReceiptMustNameItsRowAndAReplacedKeyCannotSignAfterItsReplacement() throws Exception {
        ReceiptKeyRegistry registry = new ReceiptKeyRegistry(ds, Duration.ofSeconds(5), Duration.ZERO);
        ReceiptKeyStore store = ReceiptKeyStore.open(tmp.resolve("receipt-keys"), "pw");
        String root = store.keys().currentKeyId();
        registry.registerAll(store.keys(), "node-a");
        ReceiptTrust trust = ReceiptTrust.of(List.of(new ReceiptTrust.Root(root, store.keys().publicKeys().get(root), false)));
        ReceiptAudit audit = ReceiptAudit.trusting(ds, new KeyTrust(trust, registry, Map::of, Duration.ZERO),
                model -> model.equals("tiny") ? Set.of("tiny.bin") : Set.of());
        ServingIdentity served = new ServingIdentity("node-a", "r-1");
        Receipt receipt = new ReceiptIssuer("tiny.bin", store.keys(), served).issue(501, "acme", List.of(), new int[] {1});

        assertThat(audit.verify(receipt, new ReceiptAudit.Row(501, "acme", "tiny")).status()).isEqualTo(ReceiptAudit.Status.OK);
        ReceiptAudit.Verdict moved = audit.verify(receipt, new ReceiptAudit.Row(502, "acme", "tiny"));
        assertThat(moved.status()).isEqualTo(ReceiptAudit.Status.MISMATCH);
        assertThat(moved.detail()).contains("request 501").contains("request 502");
        ReceiptAudit.Verdict otherTenant = audit.verify(receipt, new ReceiptAudit.Row(501, "globex", "tiny"));
        assertThat(otherTenant.status()).isEqualTo(ReceiptAudit.Status.MISMATCH);
        assertThat(otherTenant.detail()).contains("another tenant");
        assertThat(audit.verify(receipt, new ReceiptAudit.Row(501, "acme", "other")).status()).isEqualTo(ReceiptAudit.Status.MISMATCH);

        // a copy of the root's private key file, taken before the key is replaced (a leak)
        String pem = Files.readString(tmp.resolve("receipt-keys").resolve(root + ".key"));
        PrivateKey stolen = KeyFactory.getInstance("Ed25519").generatePrivate(new PKCS8EncodedKeySpec(
                Base64.getMimeDecoder().decode(pem.replaceAll("-----[A-Z ]+-----", ""))));
        store.rotate(registering(registry));
        KeyEndorsement replacement = store.keys().endorsement(store.keys().currentKeyId());
        assertThat(replacement.previousId()).isEqualTo(root);
        ReceiptSigner leaked = new ReceiptSigner() {
            @Override
            public String currentKeyId() {
                return root;
            }

            @Override
            public Signed sign(byte[] digest) {
                try {
                    Signature s = Signature.getInstance("Ed25519");
                    s.initSign(stolen);
                    s.update(digest);
                    return new Signed(root, s.sign());
                } catch (java.security.GeneralSecurityException e) {
                    throw new IllegalStateException(e);
                }
            }
        };
        Instant late = replacement.at().plus(TrustedKeys.GRACE).plusSeconds(5);
        Receipt afterRetirement = new ReceiptIssuer("tiny.bin", leaked, served, Clock.fixed(late, ZoneOffset.UTC))
                .issue(503, "acme", List.of(), new int[] {1});
        ReceiptAudit.Verdict refused = audit.verify(afterRetirement, new ReceiptAudit.Row(503, "acme", "tiny"));
        assertThat(refused.status()).isEqualTo(ReceiptAudit.Status.MISMATCH);
        assertThat(refused.detail()).contains("was replaced at " + replacement.at());
        // the key's own receipts from before its replacement still verify
        assertThat(audit.verify(receipt, new ReceiptAudit.Row(501, "acme", "tiny")).status()).isEqualTo(ReceiptAudit.Status.OK);
    }

    /** Registers each new key, with its endorsement, before it signs (as the platform's rotation does). */
    private static dev.pagewarden.core.receipt.ReceiptKeys.EndorsedPersister registering(ReceiptKeyRegistry registry) {
        return (keyId, pair, endorsement) -> {
            try {
                registry.register(keyId, pair.getPublic(), "node-a", endorsement);
            } catch (SQLException e) {
                throw new java.io.IOException(e);
            }
        };
    }

    private static long firstRowOf(String chain) throws SQLException {
        try (Connection c = ds.getConnection();
             PreparedStatement st = c.prepareStatement("SELECT row_id FROM chain_links WHERE chain = ? AND seq = 1")) {
            st.setString(1, chain);
            try (ResultSet rs = st.executeQuery()) {
                rs.next();
                return rs.getLong(1);
            }
        }
    }
}
