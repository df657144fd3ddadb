package dev.pagewarden.cli.tools;

import dev.pagewarden.cli.testing.CliRun;
import dev.pagewarden.oracle.Openssl;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.security.GeneralSecurityException;
import java.security.KeyFactory;
import java.security.PrivateKey;
import java.security.SecureRandom;
import java.security.Signature;
import java.security.cert.CertPathValidator;
import java.security.cert.CertPathValidatorException;
import java.security.cert.CertificateFactory;
import java.security.cert.PKIXParameters;
import java.security.cert.TrustAnchor;
import java.security.cert.X509Certificate;
import java.security.spec.PKCS8EncodedKeySpec;
import java.time.Duration;
import java.time.Instant;
import java.util.Base64;
import java.util.List;
import java.util.Set;

import static dev.pagewarden.cli.testing.CliRun.run;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * {@code pki} as a user runs it. What it writes is checked with the JDK's own PKIX validator, the JDK's own
 * key parsing and, where installed, the {@code openssl} binary: none of them goes through the code under test.
 */
class PkiCommandTest {
    private static final List<String> NODES = List.of("platform", "prefill-a", "decode-a");

    @TempDir
    Path dir;

    @Test
    void writesACaAndNodeCertificatesThatThePkixValidatorAccepts() throws Exception {
        Instant before = Instant.now();
        CliRun r = run("pki", "--out", dir.toString(), "--names", String.join(",", NODES));
        assertThat(r.code()).as(r.err()).isZero();
        assertThat(r.out()).contains("wrote " + dir.resolve("ca.crt")).contains("wrote " + dir.resolve("decode-a.crt"));

        X509Certificate ca = certificate(dir.resolve("ca.crt"));
        assertThat(ca.getBasicConstraints()).isGreaterThanOrEqualTo(0);
        assertThat(ca.getKeyUsage()[5]).as("keyCertSign").isTrue();
        assertThat(ca.getIssuerX500Principal()).isEqualTo(ca.getSubjectX500Principal());
        ca.verify(ca.getPublicKey());
        assertThat(matches(privateKey(dir.resolve("ca.key")), ca)).isTrue();

        for (String name : NODES) {
            X509Certificate cert = certificate(dir.resolve(name + ".crt"));
            validate(cert, ca);
            assertThat(cert.getSubjectX500Principal().getName()).isEqualTo("CN=" + name);
            assertThat(cert.getSubjectAlternativeNames()).containsExactly(List.of(2, name));
            assertThat(cert.getExtendedKeyUsage()).containsExactlyInAnyOrder("1.3.6.1.5.5.7.3.1", "1.3.6.1.5.5.7.3.2");
            assertThat(cert.getBasicConstraints()).isEqualTo(-1);
            assertThat(cert.getKeyUsage()[0]).as("digitalSignature").isTrue();
            assertThat(cert.getSigAlgName()).isEqualTo("SHA256withECDSA");
            assertThat(cert.getPublicKey().getAlgorithm()).isEqualTo("EC");
            assertThat(cert.getNotAfter().toInstant())
                    .isBetween(before.plus(Duration.ofDays(365)).minusSeconds(1), Instant.now().plus(Duration.ofDays(365)));
            assertThat(cert.getNotBefore().toInstant()).isBefore(before);
            assertThat(matches(privateKey(dir.resolve(name + ".key")), cert)).isTrue();
        }
        // the oracle tells keys apart
        assertThat(matches(privateKey(dir.resolve("platform.key")), certificate(dir.resolve("decode-a.crt")))).isFalse();

        if (Files.getFileStore(dir).supportsFileAttributeView("posix")) {
            for (String key : List.of("ca", "platform", "prefill-a", "decode-a")) {
                assertThat(PosixFilePermissions.toString(Files.getPosixFilePermissions(dir.resolve(key + ".key"))))
                        .as(key + ".key").isEqualTo("rw-------");
            }
        }
    }

    @Test
    void daysSetsTheValidity() throws Exception {
        Instant before = Instant.now();
        assertThat(run("pki", "--out", dir.toString(), "--names", "n1", "--days", "2").code()).isZero();
        assertThat(certificate(dir.resolve("n1.crt")).getNotAfter().toInstant())
                .isBetween(before.plus(Duration.ofDays(2)).minusSeconds(1), Instant.now().plus(Duration.ofDays(2)));
    }

    @Test
    void opensslVerifiesTheCertificatesAndKeys() throws Exception {
        Openssl.assumeAvailable();
        assertThat(run("pki", "--out", dir.toString(), "--names", "prefill-a,decode-a").code()).isZero();
        Path other = dir.resolve("other");
        assertThat(run("pki", "--out", other.toString(), "--names", "prefill-a").code()).isZero();

        for (String name : List.of("prefill-a", "decode-a")) {
            Openssl.Result verify = Openssl.run("verify", "-CAfile", dir.resolve("ca.crt").toString(), dir.resolve(name + ".crt").toString());
            assertThat(verify.code()).as(verify.output()).isZero();
            assertThat(verify.output()).contains(name + ".crt: OK");
            Openssl.Result certKey = Openssl.run("x509", "-in", dir.resolve(name + ".crt").toString(), "-noout", "-pubkey");
            Openssl.Result keyKey = Openssl.run("pkey", "-in", dir.resolve(name + ".key").toString(), "-pubout");
            assertThat(keyKey.code()).as(keyKey.output()).isZero();
            assertThat(keyKey.output()).startsWith("-----BEGIN PUBLIC KEY-----").isEqualTo(certKey.output());
        }
        assertThat(Files.readString(dir.resolve("decode-a.key"))).startsWith("-----BEGIN PRIVATE KEY-----");
        // a certificate from another CA does not verify
        Openssl.Result foreign = Openssl.run("verify", "-CAfile", dir.resolve("ca.crt").toString(), other.resolve("prefill-a.crt").toString());
        assertThat(foreign.code()).isNotZero();
    }

    @Test
    void aSecondRunSignsNewNamesWithTheSameCa() throws Exception {
        assertThat(run("pki", "--out", dir.toString(), "--names", "prefill-a").code()).isZero();
        byte[] caCert = Files.readAllBytes(dir.resolve("ca.crt"));
        byte[] caKey = Files.readAllBytes(dir.resolve("ca.key"));

        CliRun second = run("pki", "--out", dir.toString(), "--names", "decode-b,decode-c");
        assertThat(second.code()).as(second.err()).isZero();
        assertThat(second.out()).contains("signing with the cluster CA in " + dir.resolve("ca.crt"))
                .doesNotContain("wrote " + dir.resolve("ca.crt"));
        assertThat(Files.readAllBytes(dir.resolve("ca.crt"))).isEqualTo(caCert);
        assertThat(Files.readAllBytes(dir.resolve("ca.key"))).isEqualTo(caKey);
        X509Certificate ca = certificate(dir.resolve("ca.crt"));
        for (String name : List.of("prefill-a", "decode-b", "decode-c")) {
            validate(certificate(dir.resolve(name + ".crt")), ca);
        }
    }

    @Test
    void existingNodeFilesAreNeverOverwritten() throws Exception {
        assertThat(run("pki", "--out", dir.toString(), "--names", "prefill-a,decode-a").code()).isZero();
        byte[] cert = Files.readAllBytes(dir.resolve("decode-a.crt"));
        byte[] key = Files.readAllBytes(dir.resolve("decode-a.key"));

        CliRun again = run("pki", "--out", dir.toString(), "--names", "decode-b,decode-a");
        assertThat(again.code()).isEqualTo(1);
        assertThat(again.err()).contains(dir.resolve("decode-a.crt") + " already exists; not overwritten");
        assertThat(Files.readAllBytes(dir.resolve("decode-a.crt"))).isEqualTo(cert);
        assertThat(Files.readAllBytes(dir.resolve("decode-a.key"))).isEqualTo(key);
        assertThat(dir.resolve("decode-b.crt")).as("a refused run writes nothing").doesNotExist();

        Files.delete(dir.resolve("decode-a.crt"));
        CliRun keyOnly = run("pki", "--out", dir.toString(), "--names", "decode-a");
        assertThat(keyOnly.code()).isEqualTo(1);
        assertThat(keyOnly.err()).contains(dir.resolve("decode-a.key") + " already exists");
    }

    @Test
    void aCaWithoutItsKeyIsRefused() throws Exception {
        assertThat(run("pki", "--out", dir.toString(), "--names", "prefill-a").code()).isZero();
        Files.delete(dir.resolve("ca.key"));
        CliRun r = run("pki", "--out", dir.toString(), "--names", "decode-a");
        assertThat(r.code()).isEqualTo(1);
        assertThat(r.err()).contains(dir.resolve("ca.key") + " is missing");
        assertThat(dir.resolve("decode-a.crt")).doesNotExist();
    }

    @Test
    void badCommandLinesAreRefusedWithUsage() {
        Path out = dir.resolve("pki");
        for (String names : List.of("Prefill", "-a", "a..b", "a.", "a/b", "../x", "a b", "ca", "a,,b", "a,", "prefill-a,prefill-a",
                "x".repeat(64))) {
            CliRun r = run("pki", "--out", out.toString(), "--names", names);
            assertThat(r.code()).as(names).isEqualTo(2);
            assertThat(r.err()).as(names).contains("--names").contains("usage: pki --out DIR --names");
        }
        assertThat(run("pki", "--out", out.toString(), "--names", "a", "--days", "0").err()).contains("--days must be between 1");
        assertThat(run("pki", "--out", out.toString(), "--names", "a", "--days", "x").code()).isEqualTo(2);
        assertThat(run("pki", "--out", out.toString()).err()).contains("missing --names");
        assertThat(run("pki", "--names", "a").err()).contains("missing --out");
        assertThat(run("pki", "--out", out.toString(), "--names", "a", "--force", "yes").err()).contains("unknown option --force");
        assertThat(out).as("nothing written").doesNotExist();
        assertThat(run("help").out()).contains("pki --out DIR --names");
    }

    @Test
    void theValidatorRefusesACertificateOfAnotherCa() throws Exception {
        assertThat(run("pki", "--out", dir.resolve("a").toString(), "--names", "n").code()).isZero();
        assertThat(run("pki", "--out", dir.resolve("b").toString(), "--names", "n").code()).isZero();
        assertThatThrownBy(() -> validate(certificate(dir.resolve("b/n.crt")), certificate(dir.resolve("a/ca.crt"))))
                .isInstanceOf(CertPathValidatorException.class);
    }

    private static void validate(X509Certificate cert, X509Certificate ca) throws GeneralSecurityException {
        CertificateFactory cf = CertificateFactory.getInstance("X.509");
        PKIXParameters params = new PKIXParameters(Set.of(new TrustAnchor(ca, null)));
        params.setRevocationEnabled(false);
        CertPathValidator.getInstance("PKIX").validate(cf.generateCertPath(List.of(cert)), params);
    }

    private static X509Certificate certificate(Path file) throws IOException, GeneralSecurityException {
        try (InputStream in = Files.newInputStream(file)) {
            return (X509Certificate) CertificateFactory.getInstance("X.509").generateCertificate(in);
        }
    }

    /** A PKCS#8 PEM key read with the JDK alone. */
    private static PrivateKey privateKey(Path file) throws IOException, GeneralSecurityException {
        String pem = Files.readString(file, StandardCharsets.US_ASCII);
        assertThat(pem).startsWith("-----BEGIN PRIVATE KEY-----");
        String base64 = pem.replace("-----BEGIN PRIVATE KEY-----", "").replace("-----END PRIVATE KEY-----", "").replaceAll("\\s", "");
        return KeyFactory.getInstance("EC").generatePrivate(new PKCS8EncodedKeySpec(Base64.getDecoder().decode(base64)));
    }

    /** Whether a signature made with {@code key} over a fresh nonce verifies with the certificate's public key. */
    private static boolean matches(PrivateKey key, X509Certificate cert) throws GeneralSecurityException {
        byte[] nonce = new byte[32];
        new SecureRandom().nextBytes(nonce);
        Signature s = Signature.getInstance("SHA256withECDSA");
        s.initSign(key);
        s.update(nonce);
        byte[] sig = s.sign();
        Signature v = Signature.getInstance("SHA256withECDSA");
        v.initVerify(cert.getPublicKey());
        v.update(nonce);
        return v.verify(sig);
    }
}
