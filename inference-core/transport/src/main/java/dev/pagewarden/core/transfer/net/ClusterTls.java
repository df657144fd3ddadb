package dev.pagewarden.core.transfer.net;

import io.netty.handler.ssl.ClientAuth;
import io.netty.handler.ssl.SslContext;
import io.netty.handler.ssl.SslContextBuilder;
import io.netty.handler.ssl.SslProvider;

import javax.net.ssl.SSLPeerUnverifiedException;
import javax.net.ssl.SSLSession;
import java.io.IOException;
import java.nio.file.Path;
import java.security.GeneralSecurityException;
import java.security.PrivateKey;
import java.security.cert.Certificate;
import java.security.cert.CertificateExpiredException;
import java.security.cert.CertificateNotYetValidException;
import java.security.cert.CertificateParsingException;
import java.security.cert.X509Certificate;
import java.time.Instant;
import java.util.Date;
import java.util.List;

/**
 * The TLS identity of one engine node in a cluster: TLS 1.3 only, mutual authentication, and trust in
 * the cluster CA alone (never the JDK's default trust store). Read from a folder made by the {@code pki}
 * command: {@code ca.crt} (the cluster CA), {@code NAME.crt} (this node's certificate, signed directly by
 * that CA) and {@code NAME.key} (its PKCS#8 key, EC P-256 or RSA).
 *
 * <p>There is no host name verification: nodes are reached by host:port, and a peer's identity is that its
 * certificate chains to the cluster CA plus the node name in it ({@link #peerName}), which a server can log
 * or check against the nodes it expects.
 */
public final class ClusterTls {

    private static final String TLS_1_3 = "TLSv1.3";
    private static final String SERVER_AUTH = "1.3.6.1.5.5.7.3.1";
    private static final String CLIENT_AUTH = "1.3.6.1.5.5.7.3.2";

    private final String name;
    private final SslContext server;
    private final SslContext client;

    private ClusterTls(String name, SslContext server, SslContext client) {
        this.name = name;
        this.server = server;
        this.client = client;
    }

    /**
     * Reads {@code dir/ca.crt}, {@code dir/NAME.crt} and {@code dir/NAME.key} and checks, now, that the node
     * certificate is signed by the CA, is for {@code name}, may serve as both TLS server and client, that both
     * certificates are within their validity, and that the key is the certificate's.
     *
     * @throws java.nio.file.NoSuchFileException a file is missing (the message names it)
     * @throws IllegalArgumentException a file holds something else or fails a check (the message names the file)
     */
    public static ClusterTls load(Path dir, String name) throws IOException {
        CertificateAuthority.checkNodeName(name);
        Path caFile = dir.resolve("ca.crt");
        Path certFile = dir.resolve(name + ".crt");
        Path keyFile = dir.resolve(name + ".key");
        Instant now = Instant.now();

        X509Certificate ca = CertificateAuthority.readCertificate(caFile);
        if (ca.getBasicConstraints() < 0) {
            throw new IllegalArgumentException(caFile + ": not a CA certificate (no basicConstraints CA:TRUE)");
        }
        checkValidity(ca, caFile, now);
        X509Certificate cert = CertificateAuthority.readCertificate(certFile);
        checkSignedBy(cert, certFile, ca, caFile);
        checkValidity(cert, certFile, now);
        String cn = CertificateAuthority.commonName(cert);
        if (!name.equals(cn)) {
            throw new IllegalArgumentException(certFile + ": the certificate is for CN=" + cn + ", not for node " + name);
        }
        checkTlsUsage(cert, certFile);
        PrivateKey key = CertificateAuthority.readPrivateKey(keyFile);
        CertificateAuthority.checkKeyMatches(key, cert, keyFile, certFile);

        SslContext server = SslContextBuilder.forServer(key, cert)
                .sslProvider(SslProvider.JDK)
                .protocols(TLS_1_3)
                .trustManager(ca)
                .clientAuth(ClientAuth.REQUIRE)
                .build();
        SslContext client = SslContextBuilder.forClient()
                .sslProvider(SslProvider.JDK)
                .protocols(TLS_1_3)
                .keyManager(key, cert)
                .trustManager(ca)
                .endpointIdentificationAlgorithm(null) // identity is the CA plus the node name, not DNS (see above)
                .build();
        return new ClusterTls(name, server, client);
    }

    /** This node's name, the CN of its certificate. */
    public String name() {
        return name;
    }

    /** For accepting connections: asks every client for its certificate and refuses one without a certificate from the cluster CA. */
    public SslContext serverContext() {
        return server;
    }

    /** For connecting to another node: presents this node's certificate and accepts only a server certificate from the cluster CA. */
    public SslContext clientContext() {
        return client;
    }

    /** The node name (CN of the leaf certificate) of the peer of a completed handshake. */
    public static String peerName(SSLSession session) throws SSLPeerUnverifiedException {
        Certificate[] chain = session.getPeerCertificates();
        if (chain.length == 0 || !(chain[0] instanceof X509Certificate leaf)) {
            throw new SSLPeerUnverifiedException("the peer sent no X.509 certificate");
        }
        String cn = CertificateAuthority.commonName(leaf);
        if (cn == null) {
            throw new SSLPeerUnverifiedException("the peer's certificate has no CN: " + leaf.getSubjectX500Principal());
        }
        return cn;
    }

    @Override
    public String toString() {
        return "ClusterTls[" + name + "]";
    }

    private static void checkSignedBy(X509Certificate cert, Path certFile, X509Certificate ca, Path caFile) {
        boolean signed = cert.getIssuerX500Principal().equals(ca.getSubjectX500Principal());
        if (signed) {
            try {
                cert.verify(ca.getPublicKey());
            } catch (GeneralSecurityException e) {
                signed = false;
            }
        }
        if (!signed) {
            throw new IllegalArgumentException(certFile + ": not signed by the cluster CA in " + caFile + " (issuer "
                    + cert.getIssuerX500Principal() + ", CA " + ca.getSubjectX500Principal() + ")");
        }
    }

    private static void checkValidity(X509Certificate cert, Path file, Instant now) {
        try {
            cert.checkValidity(Date.from(now));
        } catch (CertificateExpiredException e) {
            throw new IllegalArgumentException(file + ": the certificate expired at " + cert.getNotAfter().toInstant(), e);
        } catch (CertificateNotYetValidException e) {
            throw new IllegalArgumentException(file + ": the certificate is not valid before " + cert.getNotBefore().toInstant()
                    + " (now " + now + ")", e);
        }
    }

    /** The JDK's TLS checks the extended key usage when there is one; saying so at start-up beats a failed handshake later. */
    private static void checkTlsUsage(X509Certificate cert, Path file) {
        List<String> eku;
        try {
            eku = cert.getExtendedKeyUsage();
        } catch (CertificateParsingException e) {
            throw new IllegalArgumentException(file + ": unreadable extended key usage: " + e.getMessage(), e);
        }
        if (eku != null && !(eku.contains(SERVER_AUTH) && eku.contains(CLIENT_AUTH))) {
            throw new IllegalArgumentException(file + ": the certificate's extended key usage " + eku
                    + " lacks TLS server or client authentication (a node is both)");
        }
    }
}
