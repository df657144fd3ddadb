package dev.pagewarden.core.transfer.net;

import io.netty.handler.ssl.ClientAuth;
import io.netty.handler.ssl.SslContext;
import io.netty.handler.ssl.SslContextBuilder;
import io.netty.handler.ssl.SslProvider;
import org.bouncycastle.asn1.x500.X500Name;
import org.bouncycastle.asn1.x509.BasicConstraints;
import org.bouncycastle.asn1.x509.ExtendedKeyUsage;
import org.bouncycastle.asn1.x509.Extension;
import org.bouncycastle.asn1.x509.GeneralName;
import org.bouncycastle.asn1.x509.GeneralNames;
import org.bouncycastle.asn1.x509.KeyPurposeId;
import org.bouncycastle.asn1.x509.KeyUsage;
import org.bouncycastle.cert.jcajce.JcaX509CertificateConverter;
import org.bouncycastle.cert.jcajce.JcaX509v3CertificateBuilder;
import org.bouncycastle.operator.jcajce.JcaContentSignerBuilder;

import java.math.BigInteger;
import java.security.KeyPair;
import java.security.KeyPairGenerator;
import java.security.PrivateKey;
import java.security.cert.X509Certificate;
import java.security.spec.ECGenParameterSpec;
import java.time.Duration;
import java.time.Instant;
import java.util.Date;
import java.util.concurrent.atomic.AtomicLong;

/** A throw-away certificate authority (EC P-256) and the TLS 1.3 mutual-authentication contexts of its nodes. */
final class TestPki {
    private static final AtomicLong SERIAL = new AtomicLong(1);
    private final KeyPair caKeys;
    final X509Certificate ca;

    /** A node's key and the certificate the CA issued for it (valid for localhost and 127.0.0.1). */
    record Node(PrivateKey key, X509Certificate cert) {
    }

    TestPki(String caName) {
        try {
            caKeys = keys();
            X500Name name = new X500Name("CN=" + caName);
            JcaX509v3CertificateBuilder b = builder(name, name, caKeys);
            b.addExtension(Extension.basicConstraints, true, new BasicConstraints(true));
            b.addExtension(Extension.keyUsage, true, new KeyUsage(KeyUsage.keyCertSign | KeyUsage.cRLSign));
            ca = sign(b);
        } catch (Exception e) {
            throw new IllegalStateException(e);
        }
    }

    Node node(String cn) {
        try {
            KeyPair keys = keys();
            JcaX509v3CertificateBuilder b = builder(new X500Name(ca.getSubjectX500Principal().getName()),
                    new X500Name("CN=" + cn), keys);
            b.addExtension(Extension.basicConstraints, true, new BasicConstraints(false));
            b.addExtension(Extension.keyUsage, true, new KeyUsage(KeyUsage.digitalSignature));
            b.addExtension(Extension.extendedKeyUsage, false,
                    new ExtendedKeyUsage(new KeyPurposeId[] {KeyPurposeId.id_kp_serverAuth, KeyPurposeId.id_kp_clientAuth}));
            b.addExtension(Extension.subjectAlternativeName, false, new GeneralNames(new GeneralName[] {
                    new GeneralName(GeneralName.dNSName, "localhost"), new GeneralName(GeneralName.iPAddress, "127.0.0.1")}));
            return new Node(keys.getPrivate(), sign(b));
        } catch (Exception e) {
            throw new IllegalStateException(e);
        }
    }

    /** Server side: TLS 1.3 only, a client certificate required and trusted only if this CA issued it. */
    SslContext server(Node node) throws Exception {
        return SslContextBuilder.forServer(node.key(), node.cert()).trustManager(ca).clientAuth(ClientAuth.REQUIRE)
                .protocols("TLSv1.3").sslProvider(SslProvider.JDK).build();
    }

    /** Client side presenting {@code node}'s certificate, trusting only servers that {@code trusted} issued. */
    static SslContext client(Node node, TestPki trusted) throws Exception {
        return SslContextBuilder.forClient().keyManager(node.key(), node.cert()).trustManager(trusted.ca)
                .protocols("TLSv1.3").sslProvider(SslProvider.JDK).build();
    }

    private static KeyPair keys() throws Exception {
        KeyPairGenerator g = KeyPairGenerator.getInstance("EC");
        g.initialize(new ECGenParameterSpec("secp256r1"));
        return g.generateKeyPair();
    }

    private static JcaX509v3CertificateBuilder builder(X500Name issuer, X500Name subject, KeyPair keys) {
        Instant now = Instant.now();
        return new JcaX509v3CertificateBuilder(issuer, BigInteger.valueOf(SERIAL.getAndIncrement()),
                Date.from(now.minus(Duration.ofHours(1))), Date.from(now.plus(Duration.ofDays(1))), subject, keys.getPublic());
    }

    private X509Certificate sign(JcaX509v3CertificateBuilder b) throws Exception {
        return new JcaX509CertificateConverter().getCertificate(b.build(new JcaContentSignerBuilder("SHA256withECDSA")
                .build(caKeys.getPrivate())));
    }
}
