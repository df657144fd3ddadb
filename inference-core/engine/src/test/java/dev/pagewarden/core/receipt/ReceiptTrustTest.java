package dev.pagewarden.core.receipt;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Files;
import java.nio.file.Path;
import java.security.GeneralSecurityException;
import java.security.KeyPair;
import java.security.KeyPairGenerator;
import java.security.PrivateKey;
import java.security.Signature;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.time.ZoneOffset;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * Trust anchored outside the database: keys chain from a pinned root through endorsements by their predecessors; a
 * key nobody in the chain endorsed is never trusted; a replaced key's signature on anything issued after its
 * replacement is refused; receipts without issue time verify only against a legacy root.
 */
class ReceiptTrustTest {
    private static final ServingIdentity SERVED = new ServingIdentity("node-a", "r-0123456789abcdef");

    @TempDir
    Path tmp;

    /** A signer holding one private key (a key that leaked, or the current one). */
    private record Fixed(String keyId, PrivateKey key) implements ReceiptSigner {
        @Override
        public String currentKeyId() {
            return keyId;
        }

        @Override
        public Signed sign(byte[] digest) {
            try {
                Signature s = Signature.getInstance("Ed25519");
                s.initSign(key);
                s.update(digest);
                return new Signed(keyId, s.sign());
            } catch (GeneralSecurityException e) {
                throw new IllegalStateException(e);
            }
        }
    }

    /** Three keys of one chain; {@code privates} gets each private key by id. */
    private static ReceiptKeys chain(Map<String, PrivateKey> privates) throws Exception {
        ReceiptKeys keys = ReceiptKeys.unkeyed("pw");
        for (int i = 0; i < 3; i++) {
            keys.rotate((id, pair) -> privates.put(id, pair.getPrivate()));
        }
        return keys;
    }

    private static String first(ReceiptKeys keys) {
        return keys.publicKeys().keySet().iterator().next();
    }

    private static ReceiptTrust rootOf(ReceiptKeys keys, boolean legacy) {
        String root = first(keys);
        return ReceiptTrust.of(List.of(new ReceiptTrust.Root(root, keys.publicKeys().get(root), legacy)));
    }

    private static Receipt issue(ReceiptSigner signer, Instant at) {
        return new ReceiptIssuer("m.bin", signer, SERVED, Clock.fixed(at, ZoneOffset.UTC))
                .issue(7, "acme", List.of(), new int[] {1, 2});
    }

    @Test
    void everyRotatedKeyChainsToThePinnedRootAndAKeyInjectedBesideItDoesNot() throws Exception {
        Map<String, PrivateKey> privates = new LinkedHashMap<>();
        ReceiptKeys keys = chain(privates);
        Map<String, TrustedKeys.Candidate> offered = new LinkedHashMap<>(keys.candidates());
        // what a database writer can add: a fresh key, unendorsed or "endorsed" with a signature of its own making
        KeyPair injected = KeyPairGenerator.getInstance("Ed25519").generateKeyPair();
        offered.put("pw-9-injected", new TrustedKeys.Candidate(injected.getPublic(), null));
        KeyEndorsement selfMade = KeyEndorsement.sign("pw-8-injected", injected.getPublic(), keys.currentKeyId(),
                injected.getPrivate(), Instant.now());
        offered.put("pw-8-injected", new TrustedKeys.Candidate(injected.getPublic(), selfMade));
        // and a root's id with another key
        offered.put(first(keys), new TrustedKeys.Candidate(injected.getPublic(), null));

        TrustedKeys trusted = TrustedKeys.resolve(rootOf(keys, false), offered);

        assertThat(trusted.trusted()).containsOnlyKeys(keys.publicKeys().keySet());
        assertThat(trusted.get(keys.currentKeyId()).supersededAt()).as("the end of the chain signs on").isNull();
        assertThat(trusted.get(first(keys)).supersededAt()).as("the root was replaced").isNotNull();
        assertThat(trusted.untrusted()).containsOnlyKeys("pw-9-injected", "pw-8-injected", first(keys));
        assertThat(trusted.untrusted().get("pw-9-injected")).contains("endorsed by no key");
        assertThat(trusted.untrusted().get("pw-8-injected")).contains("does not verify");
        assertThat(trusted.untrusted().get(first(keys))).contains("another public key");

        Receipt forged = issue(new Fixed("pw-9-injected", injected.getPrivate()), Instant.now());
        assertThat(trusted.refuse(forged)).contains("does not chain to the pinned trust");
        assertThat(trusted.refuse(issue(keys, Instant.now()))).isNull();
        // without the root, nothing chains
        KeyPair other = KeyPairGenerator.getInstance("Ed25519").generateKeyPair();
        TrustedKeys elsewhere = TrustedKeys.resolve(ReceiptTrust.of(List.of(new ReceiptTrust.Root("x-1", other.getPublic(), false))),
                keys.candidates());
        assertThat(elsewhere.refuse(issue(keys, Instant.now()))).contains("does not chain");
    }

    @Test
    void aReplacedKeyThatLeakedCannotIssueReceiptsAfterItsReplacement() throws Exception {
        Map<String, PrivateKey> privates = new LinkedHashMap<>();
        ReceiptKeys keys = chain(privates);
        TrustedKeys trusted = TrustedKeys.resolve(rootOf(keys, false), keys.candidates());
        String root = first(keys);
        Instant replaced = trusted.get(root).supersededAt();
        ReceiptSigner leaked = new Fixed(root, privates.get(root));

        Receipt late = issue(leaked, replaced.plus(TrustedKeys.GRACE).plus(Duration.ofSeconds(1)));
        assertThat(trusted.refuse(late)).contains("was replaced at " + replaced);
        assertThat(trusted.refuse(issue(leaked, replaced.minusSeconds(5)))).as("issued while it signed").isNull();
        // a checkpoint (any signed message) signed after the replacement: refused the same way
        byte[] message = {1, 2, 3};
        byte[] sig = leaked.sign(message).signature();
        assertThat(trusted.refuse(root, message, sig, replaced.plus(Duration.ofHours(1)))).contains("was replaced");
        assertThat(trusted.refuse(root, message, sig, replaced)).isNull();
        assertThat(trusted.refuse(root, message, sig, null)).as("undated, by a replaced key").contains("no stated time");
    }

    @Test
    void aReceiptWithoutIssueTimeVerifiesOnlyAgainstALegacyRoot() throws Exception {
        Map<String, PrivateKey> privates = new LinkedHashMap<>();
        ReceiptKeys keys = chain(privates);
        String root = first(keys);
        ReceiptBody v2 = ReceiptBody.v2(7, "acme", "m.bin", SERVED, List.of(), ReceiptCodec.outputHash(new int[] {1}));
        Receipt byRoot = new ReceiptIssuer("m.bin", new Fixed(root, privates.get(root))).sign(v2);
        Receipt byLater = new ReceiptIssuer("m.bin", keys).sign(v2);

        assertThat(TrustedKeys.resolve(rootOf(keys, false), keys.candidates()).refuse(byRoot))
                .contains("carries no issue time").contains("not pinned as legacy");
        TrustedKeys legacy = TrustedKeys.resolve(rootOf(keys, true), keys.candidates());
        assertThat(legacy.refuse(byRoot)).isNull();
        assertThat(legacy.refuse(byLater)).as("a key made after issue times never signed one without").contains("no issue time");
    }

    @Test
    void theTrustFileIsReadBackAsWrittenAndALineThatIsNotARootIsNamed() throws Exception {
        ReceiptKeys keys = chain(new LinkedHashMap<>());
        Path file = tmp.resolve("trust");
        ReceiptTrust.append(file, List.of(new ReceiptTrust.Root(first(keys), keys.publicKeys().get(first(keys)), true)));
        KeyPair other = KeyPairGenerator.getInstance("Ed25519").generateKeyPair();
        ReceiptTrust.append(file, List.of(new ReceiptTrust.Root("other-1", other.getPublic(), false)));

        ReceiptTrust read = ReceiptTrust.read(file);
        assertThat(read.roots()).containsOnlyKeys(first(keys), "other-1");
        assertThat(read.roots().get(first(keys)).legacy()).isTrue();
        assertThat(read.roots().get("other-1").legacy()).isFalse();
        assertThat(read.roots().get("other-1").key()).isEqualTo(other.getPublic());
        assertThat(Files.readString(file)).startsWith("# Pagewarden receipt trust roots");

        Files.writeString(file, "root ok-1 notbase64!\n");
        assertThatThrownBy(() -> ReceiptTrust.read(file)).isInstanceOf(IllegalArgumentException.class).hasMessageContaining("line 1");
        Files.writeString(file, "# nothing pinned\n");
        assertThatThrownBy(() -> ReceiptTrust.read(file)).isInstanceOf(IllegalArgumentException.class).hasMessageContaining("pins no");
    }

    @Test
    void aKeyDirectoryKeepsEachRotatedKeysEndorsementAcrossARestart() throws Exception {
        Path dir = tmp.resolve("keys");
        ReceiptKeyStore store = ReceiptKeyStore.open(dir, "pw");
        String root = store.keys().currentKeyId();
        String second = store.rotate();
        String third = store.rotate();

        ReceiptKeys reopened = ReceiptKeyStore.open(dir, "pw").keys();
        assertThat(reopened.endorsement(root)).isNull();
        assertThat(reopened.endorsement(second).previousId()).isEqualTo(root);
        assertThat(reopened.endorsement(third).previousId()).isEqualTo(second);
        ReceiptTrust trust = ReceiptTrust.of(List.of(new ReceiptTrust.Root(root, reopened.publicKeys().get(root), false)));
        TrustedKeys trusted = TrustedKeys.resolve(trust, reopened.candidates());
        assertThat(trusted.untrusted()).isEmpty();
        assertThat(trusted.refuse(issue(reopened, Instant.now()))).isNull();
    }
}
