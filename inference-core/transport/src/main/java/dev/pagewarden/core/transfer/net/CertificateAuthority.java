package dev.pagewarden.core.transfer.net;

import org.bouncycastle.asn1.ASN1Encodable;
import org.bouncycastle.asn1.ASN1String;
import org.bouncycastle.asn1.DERUTF8String;
import org.bouncycastle.asn1.pkcs.PrivateKeyInfo;
import org.bouncycastle.asn1.x500.RDN;
import org.bouncycastle.asn1.x500.X500Name;
import org.bouncycastle.asn1.x500.style.BCStyle;
import org.bouncycastle.asn1.x500.style.IETFUtils;
import org.bouncycastle.asn1.x509.BasicConstraints;
import org.bouncycastle.asn1.x509.ExtendedKeyUsage;
import org.bouncycastle.asn1.x509.Extension;
import org.bouncycastle.asn1.x509.GeneralName;
import org.bouncycastle.asn1.x509.GeneralNames;
import org.bouncycastle.asn1.x509.KeyPurposeId;
import org.bouncycastle.asn1.x509.KeyUsage;
import org.bouncycastle.asn1.x509.SubjectPublicKeyInfo;
import org.bouncycastle.cert.CertIOException;
import org.bouncycastle.cert.X509CertificateHolder;
import org.bouncycastle.cert.jcajce.JcaX509CertificateConverter;
import org.bouncycastle.cert.jcajce.JcaX509ExtensionUtils;
import org.bouncycastle.cert.jcajce.JcaX509v3CertificateBuilder;
import org.bouncycastle.openssl.PEMEncryptedKeyPair;
import org.bouncycastle.openssl.PEMException;
import org.bouncycastle.openssl.PEMKeyPair;
import org.bouncycastle.openssl.PEMParser;
import org.bouncycastle.openssl.jcajce.JcaMiscPEMGenerator;
import org.bouncycastle.openssl.jcajce.JcaPEMKeyConverter;
import org.bouncycastle.openssl.jcajce.JcaPEMWriter;
import org.bouncycastle.openssl.jcajce.JcaPKCS8Generator;
import org.bouncycastle.operator.ContentSigner;
import org.bouncycastle.operator.OperatorCreationException;
import org.bouncycastle.operator.jcajce.JcaContentSignerBuilder;
import org.bouncycastle.pkcs.PKCS8EncryptedPrivateKeyInfo;
import org.bouncycastle.util.io.pem.PemObjectGenerator;

import java.io.IOException;
import java.io.StringReader;
import java.math.BigInteger;
import java.nio.charset.StandardCharsets;
import java.nio.file.FileAlreadyExistsException;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.nio.file.attribute.PosixFilePermissions;
import java.security.GeneralSecurityException;
import java.security.KeyPair;
import java.security.KeyPairGenerator;
import java.security.PrivateKey;
import java.security.SecureRandom;
import java.security.Signature;
import java.security.cert.CertificateException;
import java.security.cert.X509Certificate;
import java.security.spec.ECGenParameterSpec;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Date;
import java.util.List;
import java.util.regex.Pattern;

/**
 * The cluster CA: makes the self-signed CA certificate and the node certificates that {@link ClusterTls}
 * loads, and reads and writes them as PEM ({@code .crt}: one certificate, {@code .key}: a PKCS#8 private key).
 * Keys are EC P-256 from the JDK; certificates are built and signed with BouncyCastle's JCA classes, which
 * here use the JDK's own providers, so the BouncyCastle provider is never registered (the engine jar is
 * unsigned, and a JCE provider in an unsigned jar is refused on some JDKs).
 */
public final class CertificateAuthority {

    /** Node names: lower-case DNS labels joined by dots, each starting with a letter or digit (a name is also a file name). */
    private static final Pattern NODE_NAME = Pattern.compile("[a-z0-9][a-z0-9-]*(\\.[a-z0-9][a-z0-9-]*)*");
    /** X.509 bounds a common name at 64 characters; one DNS label at 63. */
    private static final int MAX_NAME_LENGTH = 63;
    /** Not a node name: it would be the CA's own files. */
    private static final String CA_FILE_NAME = "ca";

    private static final SecureRandom RANDOM = new SecureRandom();

    /** A certificate and its private key. */
    public record CertifiedKey(X509Certificate certificate, PrivateKey key) {
        /** Writes {@code certFile} and {@code keyFile} (owner-only where the file system has POSIX permissions); never overwrites either. */
        public void write(Path certFile, Path keyFile) throws IOException {
            writePem(certFile, new JcaMiscPEMGenerator(certificate), false);
            writePem(keyFile, new JcaPKCS8Generator(key, null), true);
        }
    }

    private final CertifiedKey ca;

    private CertificateAuthority(CertifiedKey ca) {
        this.ca = ca;
    }

    /** A new CA: self-signed, {@code CN=commonName}, may sign end-entity certificates only (path length 0). */
    public static CertificateAuthority create(String commonName, Instant notBefore, Instant notAfter) {
        KeyPair pair = newKeyPair();
        X500Name subject = cn(commonName);
        try {
            JcaX509ExtensionUtils ext = new JcaX509ExtensionUtils();
            JcaX509v3CertificateBuilder b = new JcaX509v3CertificateBuilder(subject, serial(), Date.from(notBefore),
                    Date.from(notAfter), subject, pair.getPublic());
            b.addExtension(Extension.basicConstraints, true, new BasicConstraints(0));
            b.addExtension(Extension.keyUsage, true, new KeyUsage(KeyUsage.keyCertSign | KeyUsage.cRLSign));
            b.addExtension(Extension.subjectKeyIdentifier, false, ext.createSubjectKeyIdentifier(pair.getPublic()));
            return new CertificateAuthority(new CertifiedKey(sign(b.build(signer(pair.getPrivate()))), pair.getPrivate()));
        } catch (GeneralSecurityException | CertIOException | OperatorCreationException e) {
            throw new IllegalStateException("cannot make the CA certificate: " + e.getMessage(), e);
        }
    }

    /** The CA in {@code certFile} and {@code keyFile}: the certificate must be a CA's and the key must be its key. */
    public static CertificateAuthority load(Path certFile, Path keyFile) throws IOException {
        X509Certificate cert = readCertificate(certFile);
        if (cert.getBasicConstraints() < 0) {
            throw new IllegalArgumentException(certFile + ": not a CA certificate (no basicConstraints CA:TRUE)");
        }
        boolean[] usage = cert.getKeyUsage();
        if (usage != null && !usage[5]) {
            throw new IllegalArgumentException(certFile + ": the CA certificate's key usage does not allow signing certificates");
        }
        PrivateKey key = readPrivateKey(keyFile);
        checkKeyMatches(key, cert, keyFile, certFile);
        return new CertificateAuthority(new CertifiedKey(cert, key));
    }

    public X509Certificate certificate() {
        return ca.certificate();
    }

    /** Writes the CA's certificate and key; never overwrites either. */
    public void write(Path certFile, Path keyFile) throws IOException {
        ca.write(certFile, keyFile);
    }

    /**
     * A node certificate for {@code name} with a new EC P-256 key: {@code CN=name}, {@code DNS:name}, digital
     * signature, usable for both TLS server and client authentication, valid from {@code notBefore} to {@code notAfter}.
     */
    public CertifiedKey issue(String name, Instant notBefore, Instant notAfter) {
        checkNodeName(name);
        if (!notAfter.isAfter(notBefore)) {
            throw new IllegalArgumentException("certificate for " + name + ": notAfter " + notAfter + " is not after notBefore " + notBefore);
        }
        KeyPair pair = newKeyPair();
        X500Name subject = cn(name);
        try {
            JcaX509ExtensionUtils ext = new JcaX509ExtensionUtils();
            X500Name issuer = X500Name.getInstance(ca.certificate().getSubjectX500Principal().getEncoded());
            JcaX509v3CertificateBuilder b = new JcaX509v3CertificateBuilder(issuer, serial(), Date.from(notBefore),
                    Date.from(notAfter), subject, pair.getPublic());
            b.addExtension(Extension.basicConstraints, true, new BasicConstraints(false));
            b.addExtension(Extension.keyUsage, true, new KeyUsage(KeyUsage.digitalSignature));
            b.addExtension(Extension.extendedKeyUsage, false,
                    new ExtendedKeyUsage(new KeyPurposeId[]{KeyPurposeId.id_kp_serverAuth, KeyPurposeId.id_kp_clientAuth}));
            b.addExtension(Extension.subjectAlternativeName, false, new GeneralNames(new GeneralName(GeneralName.dNSName, name)));
            b.addExtension(Extension.subjectKeyIdentifier, false, ext.createSubjectKeyIdentifier(pair.getPublic()));
            b.addExtension(Extension.authorityKeyIdentifier, false, ext.createAuthorityKeyIdentifier(ca.certificate().getPublicKey()));
            return new CertifiedKey(sign(b.build(signer(ca.key()))), pair.getPrivate());
        } catch (GeneralSecurityException | CertIOException | OperatorCreationException e) {
            throw new IllegalStateException("cannot make the certificate for " + name + ": " + e.getMessage(), e);
        }
    }

    /** Throws {@link IllegalArgumentException} unless {@code name} is a node name: lower-case DNS labels joined by dots, not {@code ca}. */
    public static void checkNodeName(String name) {
        if (name.length() > MAX_NAME_LENGTH || !NODE_NAME.matcher(name).matches() || name.equals(CA_FILE_NAME)) {
            throw new IllegalArgumentException("bad node name '" + name + "': use lower-case letters, digits, '-' and '.' "
                    + "(starting with a letter or digit, no empty part between dots, at most " + MAX_NAME_LENGTH
                    + " characters, not 'ca')");
        }
    }

    /** The common name (CN) of a certificate's subject, or null when it has none. */
    static String commonName(X509Certificate cert) {
        RDN[] cns = X500Name.getInstance(cert.getSubjectX500Principal().getEncoded()).getRDNs(BCStyle.CN);
        if (cns.length == 0) {
            return null;
        }
        ASN1Encodable value = cns[0].getFirst().getValue();
        return value instanceof ASN1String text ? text.getString() : IETFUtils.valueToString(value);
    }

    /** The single certificate in a PEM file. */
    static X509Certificate readCertificate(Path file) throws IOException {
        Object o = readSinglePem(file, "certificate");
        if (!(o instanceof X509CertificateHolder holder)) {
            throw new IllegalArgumentException(file + ": expected a PEM certificate (BEGIN CERTIFICATE), found " + describe(o));
        }
        try {
            return new JcaX509CertificateConverter().getCertificate(holder);
        } catch (CertificateException e) {
            throw new IllegalArgumentException(file + ": unreadable certificate: " + e.getMessage(), e);
        }
    }

    /** The private key in a PEM file: PKCS#8 ({@code BEGIN PRIVATE KEY}), or the older EC/RSA forms OpenSSL writes. */
    static PrivateKey readPrivateKey(Path file) throws IOException {
        Object o = readSinglePem(file, "private key");
        JcaPEMKeyConverter converter = new JcaPEMKeyConverter();
        try {
            return switch (o) {
                case PrivateKeyInfo info -> converter.getPrivateKey(info);
                case PEMKeyPair pair -> converter.getKeyPair(pair).getPrivate();
                default -> throw new IllegalArgumentException(file + ": expected an unencrypted PEM private key (BEGIN PRIVATE KEY), found "
                        + describe(o));
            };
        } catch (PEMException e) {
            throw new IllegalArgumentException(file + ": unreadable private key: " + e.getMessage(), e);
        }
    }

    /** Throws unless {@code key} is the private half of {@code cert}'s public key: signs a random nonce and checks it. */
    static void checkKeyMatches(PrivateKey key, X509Certificate cert, Path keyFile, Path certFile) {
        String algorithm = signatureAlgorithm(key, keyFile);
        byte[] nonce = new byte[32];
        RANDOM.nextBytes(nonce);
        boolean ok;
        try {
            Signature s = Signature.getInstance(algorithm);
            s.initSign(key);
            s.update(nonce);
            byte[] sig = s.sign();
            Signature v = Signature.getInstance(algorithm);
            v.initVerify(cert.getPublicKey());
            v.update(nonce);
            ok = v.verify(sig);
        } catch (GeneralSecurityException e) {
            ok = false; // an EC key against an RSA certificate, say
        }
        if (!ok) {
            throw new IllegalArgumentException(keyFile + ": the key does not match the certificate in " + certFile);
        }
    }

    private static Object readSinglePem(Path file, String what) throws IOException {
        if (!Files.exists(file)) {
            throw new NoSuchFileException(file.toString(), null, "no such file (the " + what + ")");
        }
        // Latin-1 never fails to decode, so stray bytes reach the PEM parser and get its message
        String text = Files.readString(file, StandardCharsets.ISO_8859_1);
        List<Object> objects = new ArrayList<>();
        try (PEMParser p = new PEMParser(new StringReader(text))) {
            for (Object o; (o = p.readObject()) != null; ) {
                objects.add(o);
            }
        } catch (IOException | RuntimeException e) {
            throw new IllegalArgumentException(file + ": unreadable PEM " + what + ": " + e.getMessage(), e);
        }
        if (objects.isEmpty()) {
            throw new IllegalArgumentException(file + ": no PEM " + what + " in the file (no -----BEGIN ...----- block)");
        }
        if (objects.size() > 1) {
            throw new IllegalArgumentException(file + ": holds " + objects.size() + " PEM blocks; expected exactly one " + what);
        }
        return objects.getFirst();
    }

    private static String describe(Object o) {
        return switch (o) {
            case X509CertificateHolder c -> "a certificate";
            case PrivateKeyInfo k -> "a private key";
            case PEMKeyPair k -> "a private key";
            case SubjectPublicKeyInfo k -> "a public key";
            case PKCS8EncryptedPrivateKeyInfo k -> "an encrypted private key (decrypt it with: openssl pkey -in FILE -out FILE)";
            case PEMEncryptedKeyPair k -> "an encrypted private key (decrypt it with: openssl pkey -in FILE -out FILE)";
            default -> o.getClass().getSimpleName();
        };
    }

    private static void writePem(Path file, PemObjectGenerator pem, boolean secret) throws IOException {
        if (Files.exists(file, LinkOption.NOFOLLOW_LINKS)) {
            throw new FileAlreadyExistsException(file.toString(), null, "exists; not overwritten");
        }
        Path parent = file.toAbsolutePath().getParent();
        if (secret && Files.getFileStore(parent).supportsFileAttributeView("posix")) {
            // created owner-only, so the key is never readable by others, not even between create and chmod
            Files.createFile(file, PosixFilePermissions.asFileAttribute(PosixFilePermissions.fromString("rw-------")));
        } else {
            Files.createFile(file);
        }
        try (JcaPEMWriter w = new JcaPEMWriter(Files.newBufferedWriter(file, StandardCharsets.US_ASCII, StandardOpenOption.WRITE))) {
            w.writeObject(pem);
        }
    }

    private static KeyPair newKeyPair() {
        try {
            KeyPairGenerator g = KeyPairGenerator.getInstance("EC");
            g.initialize(new ECGenParameterSpec("secp256r1"), RANDOM);
            return g.generateKeyPair();
        } catch (GeneralSecurityException e) {
            throw new IllegalStateException("this JDK cannot make EC P-256 keys: " + e.getMessage(), e);
        }
    }

    /** A random positive 127-bit serial: unique without a counter, inside X.509's 20 octets. */
    private static BigInteger serial() {
        return new BigInteger(127, RANDOM).setBit(126);
    }

    private static ContentSigner signer(PrivateKey key) throws OperatorCreationException {
        // no setProvider: the JDK's Signature does the work
        return new JcaContentSignerBuilder(signatureAlgorithm(key, null)).build(key);
    }

    private static String signatureAlgorithm(PrivateKey key, Path keyFile) {
        return switch (key.getAlgorithm()) {
            case "EC" -> "SHA256withECDSA";
            case "RSA" -> "SHA256withRSA";
            default -> throw new IllegalArgumentException((keyFile == null ? "" : keyFile + ": ") + "unsupported key algorithm "
                    + key.getAlgorithm() + " (EC or RSA)");
        };
    }

    private static X500Name cn(String commonName) {
        return new X500Name(new RDN[]{new RDN(BCStyle.CN, new DERUTF8String(commonName))});
    }

    private static X509Certificate sign(X509CertificateHolder holder) throws CertificateException {
        return new JcaX509CertificateConverter().getCertificate(holder);
    }
}
