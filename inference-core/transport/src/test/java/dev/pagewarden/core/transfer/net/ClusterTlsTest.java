package dev.pagewarden.core.transfer.net;

import dev.pagewarden.core.transfer.net.CertificateAuthority.CertifiedKey;
import dev.pagewarden.oracle.Openssl;
import io.netty.bootstrap.Bootstrap;
import io.netty.bootstrap.ServerBootstrap;
import io.netty.channel.Channel;
import io.netty.channel.ChannelHandler;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandlerAdapter;
import io.netty.channel.ChannelInitializer;
import io.netty.channel.EventLoopGroup;
import io.netty.channel.MultiThreadIoEventLoopGroup;
import io.netty.channel.nio.NioIoHandler;
import io.netty.channel.socket.SocketChannel;
import io.netty.channel.socket.nio.NioServerSocketChannel;
import io.netty.channel.socket.nio.NioSocketChannel;
import io.netty.handler.ssl.ClientAuth;
import io.netty.handler.ssl.SslContext;
import io.netty.handler.ssl.SslContextBuilder;
import io.netty.handler.ssl.SslHandler;
import io.netty.handler.ssl.SslProvider;
import io.netty.util.concurrent.Future;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import javax.net.ssl.SSLException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.security.cert.X509Certificate;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * Real TLS handshakes over loopback between a Netty server and client: the JDK's TLS stack decides who is
 * let in. A peer that does not follow the cluster's rules is built with plain Netty contexts, not with
 * {@link ClusterTls}, since {@link ClusterTls#load} already refuses its files.
 */
class ClusterTlsTest {
    private static final long TIMEOUT_S = 10;

    /** A refused handshake is read from the handshake futures; this keeps it out of the log as an unhandled exception. */
    private static final ChannelHandler CLOSE_ON_ERROR = new CloseOnError();

    @TempDir
    Path dir;

    private final EventLoopGroup group = new MultiThreadIoEventLoopGroup(2, NioIoHandler.newFactory());
    private final List<Channel> channels = new ArrayList<>();
    private final Instant now = Instant.now();
    private final Instant dayAgo = now.minus(Duration.ofDays(1));
    private final Instant inAYear = now.plus(Duration.ofDays(365));

    @AfterEach
    void shutDown() {
        channels.forEach(Channel::close);
        group.shutdownGracefully(0, TIMEOUT_S, TimeUnit.SECONDS).syncUninterruptibly();
    }

    /** The server's and the client's handshake, each done (success or failure) or timed out. */
    private record Handshake(SslHandler server, SslHandler client, Channel clientChannel) {
        boolean serverOk() {
            return server.handshakeFuture().isSuccess();
        }

        boolean clientOk() {
            return client.handshakeFuture().isSuccess();
        }
    }

    @Test
    void nodesOfOneClusterConnectWithTls13AndSeeEachOthersNames() throws Exception {
        CertificateAuthority ca = cluster(dir, "prefill-a", "decode-a");
        ClusterTls decode = ClusterTls.load(dir, "decode-a");
        ClusterTls prefill = ClusterTls.load(dir, "prefill-a");
        assertThat(decode.name()).isEqualTo("decode-a");
        assertThat(prefill.name()).isEqualTo("prefill-a");

        // the client dials an IP address its peer's certificate does not name: no host name verification
        Handshake h = handshake(decode.serverContext(), prefill.clientContext());
        assertThat(h.serverOk()).as(String.valueOf(h.server().handshakeFuture().cause())).isTrue();
        assertThat(h.clientOk()).as(String.valueOf(h.client().handshakeFuture().cause())).isTrue();
        assertThat(h.server().engine().getSession().getProtocol()).isEqualTo("TLSv1.3");
        assertThat(h.client().engine().getSession().getProtocol()).isEqualTo("TLSv1.3");
        assertThat(ClusterTls.peerName(h.server().engine().getSession())).isEqualTo("prefill-a");
        assertThat(ClusterTls.peerName(h.client().engine().getSession())).isEqualTo("decode-a");
        assertThat(h.client().engine().getSession().getPeerCertificates()[0]).isEqualTo(
                CertificateAuthority.readCertificate(dir.resolve("decode-a.crt")));
        assertThat(ca.certificate()).isEqualTo(CertificateAuthority.readCertificate(dir.resolve("ca.crt")));
    }

    @Test
    void anRsaNodeCertifiedByOpensslJoinsTheCluster() throws Exception {
        Openssl.assumeAvailable();
        cluster(dir, "decode-a");
        Path ext = Files.writeString(dir.resolve("rsa-node.ext"), """
                basicConstraints = critical, CA:FALSE
                keyUsage = critical, digitalSignature, keyEncipherment
                extendedKeyUsage = serverAuth, clientAuth
                subjectAltName = DNS:rsa-node
                """);
        openssl("req", "-new", "-newkey", "rsa:2048", "-nodes", "-subj", "/CN=rsa-node",
                "-keyout", dir.resolve("rsa-node.key").toString(), "-out", dir.resolve("rsa-node.csr").toString());
        openssl("x509", "-req", "-in", dir.resolve("rsa-node.csr").toString(), "-CA", dir.resolve("ca.crt").toString(),
                "-CAkey", dir.resolve("ca.key").toString(), "-set_serial", "7", "-days", "30", "-sha256",
                "-extfile", ext.toString(), "-out", dir.resolve("rsa-node.crt").toString());

        ClusterTls rsa = ClusterTls.load(dir, "rsa-node");
        ClusterTls decode = ClusterTls.load(dir, "decode-a");
        Handshake h = handshake(decode.serverContext(), rsa.clientContext());
        assertThat(h.serverOk() && h.clientOk()).as(String.valueOf(h.server().handshakeFuture().cause())).isTrue();
        assertThat(ClusterTls.peerName(h.server().engine().getSession())).isEqualTo("rsa-node");
        Handshake back = handshake(rsa.serverContext(), decode.clientContext());
        assertThat(back.serverOk() && back.clientOk()).as(String.valueOf(back.client().handshakeFuture().cause())).isTrue();
        assertThat(ClusterTls.peerName(back.client().engine().getSession())).isEqualTo("rsa-node");
    }

    @Test
    void aClientCertificateFromAnotherCaIsRefused() throws Exception {
        cluster(dir, "decode-a");
        X509Certificate clusterCa = CertificateAuthority.readCertificate(dir.resolve("ca.crt"));
        // same node name, but signed by a CA the cluster does not know
        CertifiedKey rogue = CertificateAuthority.create("Pagewarden cluster CA", dayAgo, inAYear).issue("prefill-a", dayAgo, inAYear);

        Handshake h = handshake(ClusterTls.load(dir, "decode-a").serverContext(), client(rogue, clusterCa, "TLSv1.3"));
        assertRefusedByServer(h);
    }

    @Test
    void aClientWithoutCertificateIsRefused() throws Exception {
        cluster(dir, "decode-a");
        X509Certificate clusterCa = CertificateAuthority.readCertificate(dir.resolve("ca.crt"));
        Handshake h = handshake(ClusterTls.load(dir, "decode-a").serverContext(), client(null, clusterCa, "TLSv1.3"));
        assertRefusedByServer(h);
    }

    @Test
    void anExpiredNodeCertificateIsRefusedAtLoadAndInTheHandshake() throws Exception {
        CertificateAuthority ca = cluster(dir, "decode-a");
        CertifiedKey expired = ca.issue("prefill-old", now.minus(Duration.ofDays(30)), dayAgo);
        expired.write(dir.resolve("prefill-old.crt"), dir.resolve("prefill-old.key"));
        assertThatThrownBy(() -> ClusterTls.load(dir, "prefill-old")).isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining(dir.resolve("prefill-old.crt").toString()).hasMessageContaining("expired");

        // a peer that presents it anyway: as client, then as server
        Handshake asClient = handshake(ClusterTls.load(dir, "decode-a").serverContext(), client(expired, ca.certificate(), "TLSv1.3"));
        assertRefusedByServer(asClient);
        Handshake asServer = handshake(server(expired, ca.certificate()), ClusterTls.load(dir, "decode-a").clientContext());
        assertRefusedByClient(asServer);
    }

    @Test
    void aServerCertificateFromAnotherCaIsRefusedByTheClient() throws Exception {
        cluster(dir, "prefill-a");
        X509Certificate clusterCa = CertificateAuthority.readCertificate(dir.resolve("ca.crt"));
        CertifiedKey rogue = CertificateAuthority.create("Pagewarden cluster CA", dayAgo, inAYear).issue("decode-a", dayAgo, inAYear);

        Handshake h = handshake(server(rogue, clusterCa), ClusterTls.load(dir, "prefill-a").clientContext());
        assertRefusedByClient(h);
    }

    @Test
    void aTls12ClientIsRefused() throws Exception {
        CertificateAuthority ca = cluster(dir, "decode-a");
        CertifiedKey node = ca.issue("prefill-a", dayAgo, inAYear);
        Handshake h = handshake(ClusterTls.load(dir, "decode-a").serverContext(), client(node, ca.certificate(), "TLSv1.2"));
        assertThat(h.server().handshakeFuture().cause()).isInstanceOf(SSLException.class);
        assertThat(h.client().handshakeFuture().cause()).isInstanceOf(SSLException.class);
    }

    @Test
    void loadNamesTheFileThatIsWrong() throws Exception {
        CertificateAuthority ca = cluster(dir, "prefill-a", "decode-a");

        assertThatThrownBy(() -> ClusterTls.load(dir, "decode-b")).isInstanceOf(NoSuchFileException.class)
                .hasMessageContaining(dir.resolve("decode-b.crt").toString());
        assertThatThrownBy(() -> ClusterTls.load(dir.resolve("nowhere"), "decode-a")).isInstanceOf(NoSuchFileException.class)
                .hasMessageContaining(dir.resolve("nowhere").resolve("ca.crt").toString());
        assertThatThrownBy(() -> ClusterTls.load(dir, "../decode-a")).isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("bad node name");

        // a key from another node
        Path swapped = Files.createDirectory(dir.resolve("swapped"));
        copy(dir, swapped, "ca.crt", "decode-a.crt");
        Files.copy(dir.resolve("prefill-a.key"), swapped.resolve("decode-a.key"));
        assertThatThrownBy(() -> ClusterTls.load(swapped, "decode-a")).isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining(swapped.resolve("decode-a.key") + ": the key does not match the certificate in "
                        + swapped.resolve("decode-a.crt"));

        // a certificate renamed to another node's name
        Path renamed = Files.createDirectory(dir.resolve("renamed"));
        copy(dir, renamed, "ca.crt");
        Files.copy(dir.resolve("decode-a.crt"), renamed.resolve("decode-b.crt"));
        Files.copy(dir.resolve("decode-a.key"), renamed.resolve("decode-b.key"));
        assertThatThrownBy(() -> ClusterTls.load(renamed, "decode-b")).isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining(renamed.resolve("decode-b.crt") + ": the certificate is for CN=decode-a");

        // signed by another CA
        Path foreign = Files.createDirectory(dir.resolve("foreign"));
        copy(dir, foreign, "ca.crt");
        CertificateAuthority.create("Pagewarden cluster CA", dayAgo, inAYear).issue("decode-a", dayAgo, inAYear)
                .write(foreign.resolve("decode-a.crt"), foreign.resolve("decode-a.key"));
        assertThatThrownBy(() -> ClusterTls.load(foreign, "decode-a")).isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining(foreign.resolve("decode-a.crt") + ": not signed by the cluster CA in " + foreign.resolve("ca.crt"));

        // not yet valid
        ca.issue("decode-later", now.plus(Duration.ofDays(1)), inAYear).write(dir.resolve("decode-later.crt"), dir.resolve("decode-later.key"));
        assertThatThrownBy(() -> ClusterTls.load(dir, "decode-later")).isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining(dir.resolve("decode-later.crt") + ": the certificate is not valid before");

        // not PEM, and the wrong kind of PEM
        Path junk = Files.createDirectory(dir.resolve("junk"));
        copy(dir, junk, "ca.crt", "decode-a.key");
        Files.writeString(junk.resolve("decode-a.crt"), "hello\n");
        assertThatThrownBy(() -> ClusterTls.load(junk, "decode-a")).isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining(junk.resolve("decode-a.crt") + ": no PEM certificate");
        Files.writeString(junk.resolve("decode-a.crt"), "-----BEGIN CERTIFICATE-----\n!!!!\n-----END CERTIFICATE-----\n");
        assertThatThrownBy(() -> ClusterTls.load(junk, "decode-a")).isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining(junk.resolve("decode-a.crt") + ": unreadable PEM certificate");
        Files.delete(junk.resolve("decode-a.crt"));
        Files.copy(dir.resolve("decode-a.key"), junk.resolve("decode-a.crt"));
        assertThatThrownBy(() -> ClusterTls.load(junk, "decode-a")).isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining(junk.resolve("decode-a.crt") + ": expected a PEM certificate");

        Files.copy(dir.resolve("decode-a.crt"), junk.resolve("decode-a.crt"), StandardCopyOption.REPLACE_EXISTING);
        Files.copy(dir.resolve("decode-a.crt"), junk.resolve("decode-a.key"), StandardCopyOption.REPLACE_EXISTING);
        assertThatThrownBy(() -> ClusterTls.load(junk, "decode-a")).isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining(junk.resolve("decode-a.key") + ": expected an unencrypted PEM private key (BEGIN PRIVATE KEY), found a certificate");

        // a node certificate where the CA belongs
        Path noCa = Files.createDirectory(dir.resolve("no-ca"));
        copy(dir, noCa, "decode-a.crt", "decode-a.key");
        Files.copy(dir.resolve("prefill-a.crt"), noCa.resolve("ca.crt"));
        assertThatThrownBy(() -> ClusterTls.load(noCa, "decode-a")).isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining(noCa.resolve("ca.crt") + ": not a CA certificate");
    }

    @ChannelHandler.Sharable
    private static final class CloseOnError extends ChannelInboundHandlerAdapter {
        @Override
        public void exceptionCaught(ChannelHandlerContext ctx, Throwable cause) {
            ctx.close();
        }
    }

    /** A CA and the named nodes' files in {@code folder}, as the {@code pki} command lays them out. */
    private CertificateAuthority cluster(Path folder, String... names) throws Exception {
        CertificateAuthority ca = CertificateAuthority.create("Pagewarden cluster CA", dayAgo, inAYear);
        ca.write(folder.resolve("ca.crt"), folder.resolve("ca.key"));
        for (String name : names) {
            ca.issue(name, dayAgo, inAYear).write(folder.resolve(name + ".crt"), folder.resolve(name + ".key"));
        }
        return ca;
    }

    private static void openssl(String... args) {
        Openssl.Result r = Openssl.run(args);
        assertThat(r.code()).as(r.output()).isZero();
    }

    private static void copy(Path from, Path to, String... files) throws Exception {
        for (String f : files) {
            Files.copy(from.resolve(f), to.resolve(f));
        }
    }

    /** A TLS client outside the cluster's rules: any identity (or none), any protocol. */
    private static SslContext client(CertifiedKey identity, X509Certificate trusted, String protocol) throws SSLException {
        SslContextBuilder b = SslContextBuilder.forClient().sslProvider(SslProvider.JDK).protocols(protocol)
                .trustManager(trusted).endpointIdentificationAlgorithm(null);
        if (identity != null) {
            b.keyManager(identity.key(), identity.certificate());
        }
        return b.build();
    }

    /** A TLS server outside the cluster's rules, with any identity. */
    private static SslContext server(CertifiedKey identity, X509Certificate trusted) throws SSLException {
        return SslContextBuilder.forServer(identity.key(), identity.certificate()).sslProvider(SslProvider.JDK)
                .protocols("TLSv1.3").trustManager(trusted).clientAuth(ClientAuth.REQUIRE).build();
    }

    /** Connects over loopback and waits for both ends' handshakes to finish, one way or the other. */
    private Handshake handshake(SslContext serverContext, SslContext clientContext) throws Exception {
        CompletableFuture<SslHandler> serverSide = new CompletableFuture<>();
        Channel server = new ServerBootstrap().group(group).channel(NioServerSocketChannel.class)
                .childHandler(new ChannelInitializer<SocketChannel>() {
                    @Override
                    protected void initChannel(SocketChannel ch) {
                        SslHandler ssl = serverContext.newHandler(ch.alloc());
                        ch.pipeline().addLast(ssl, CLOSE_ON_ERROR);
                        serverSide.complete(ssl);
                    }
                })
                .bind(InetAddress.getLoopbackAddress(), 0).sync().channel();
        channels.add(server);
        InetSocketAddress address = (InetSocketAddress) server.localAddress();
        CompletableFuture<SslHandler> clientSide = new CompletableFuture<>();
        Channel client = new Bootstrap().group(group).channel(NioSocketChannel.class)
                .handler(new ChannelInitializer<SocketChannel>() {
                    @Override
                    protected void initChannel(SocketChannel ch) {
                        SslHandler ssl = clientContext.newHandler(ch.alloc(), address.getHostString(), address.getPort());
                        ch.pipeline().addLast(ssl, CLOSE_ON_ERROR);
                        clientSide.complete(ssl);
                    }
                })
                .connect(address).sync().channel();
        channels.add(client);
        SslHandler serverSsl = serverSide.get(TIMEOUT_S, TimeUnit.SECONDS);
        SslHandler clientSsl = clientSide.get(TIMEOUT_S, TimeUnit.SECONDS);
        awaitDone(serverSsl.handshakeFuture());
        awaitDone(clientSsl.handshakeFuture());
        return new Handshake(serverSsl, clientSsl, client);
    }

    private static void awaitDone(Future<?> f) throws InterruptedException {
        assertThat(f.await(TIMEOUT_S, TimeUnit.SECONDS)).as("handshake finished within " + TIMEOUT_S + " s").isTrue();
    }

    /**
     * The server refused the client. In TLS 1.3 the client's handshake can finish before the server has checked
     * its certificate, so the client's side is judged by its connection: the server's alert closes it.
     */
    private static void assertRefusedByServer(Handshake h) throws InterruptedException {
        assertThat(h.serverOk()).as("server accepted the client").isFalse();
        assertThat(h.server().handshakeFuture().cause()).isInstanceOf(SSLException.class);
        assertThat(h.clientChannel().closeFuture().await(TIMEOUT_S, TimeUnit.SECONDS)).as("client connection closed").isTrue();
    }

    private static void assertRefusedByClient(Handshake h) {
        assertThat(h.clientOk()).as("client accepted the server").isFalse();
        assertThat(h.client().handshakeFuture().cause()).isInstanceOf(SSLException.class)
                .hasStackTraceContaining("PKIX");
        assertThat(h.serverOk()).isFalse();
    }
}
