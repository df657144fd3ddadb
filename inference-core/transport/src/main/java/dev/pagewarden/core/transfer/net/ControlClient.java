package dev.pagewarden.core.transfer.net;

import dev.pagewarden.core.kv.KvLayout;
import io.netty.bootstrap.Bootstrap;
import io.netty.channel.Channel;
import io.netty.channel.ChannelFuture;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInitializer;
import io.netty.channel.ChannelOption;
import io.netty.channel.EventLoopGroup;
import io.netty.channel.MultiThreadIoEventLoopGroup;
import io.netty.channel.SimpleChannelInboundHandler;
import io.netty.channel.nio.NioIoHandler;
import io.netty.channel.socket.SocketChannel;
import io.netty.channel.socket.nio.NioSocketChannel;
import io.netty.handler.ssl.SslContext;
import io.netty.handler.ssl.SslHandler;
import io.netty.util.concurrent.DefaultThreadFactory;
import io.netty.util.concurrent.Future;

import javax.net.ssl.SSLPeerUnverifiedException;
import java.io.IOException;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

/**
 * Opens control connections to engine nodes: TLS (mutual, the cluster CA's), a hello that says
 * "control", the node's hello back. Every step has the one timeout given at construction.
 */
public final class ControlClient implements AutoCloseable {
    private final SslContext ssl;
    private final String nodeName;
    private final KvLayout layout;
    private final Duration timeout;
    private final EventLoopGroup group;

    /**
     * @param ssl      a client context ({@link ClusterTls#clientContext()})
     * @param nodeName who connects (the CN of the certificate in {@code ssl})
     * @param layout   the KV layout this side holds; null for a client without pages
     * @param timeout  for each of connect, handshake and hello
     */
    public ControlClient(SslContext ssl, String nodeName, KvLayout layout, Duration timeout) {
        if (!ssl.isClient()) {
            throw new IllegalArgumentException("a control client needs a client-side TLS context");
        }
        WireCodec.requireName(nodeName, "node name");
        this.ssl = ssl;
        this.nodeName = nodeName;
        this.layout = layout;
        this.timeout = timeout;
        this.group = new MultiThreadIoEventLoopGroup(1, new DefaultThreadFactory("pagewarden-control-client", true),
                NioIoHandler.newFactory());
    }

    /** A greeted connection to {@code host:port} whose messages go to {@code handler}; throws when any step fails or times out. */
    public ControlPeer connect(String host, int port, ControlHandler handler) throws IOException, InterruptedException {
        CompletableFuture<ControlConnection> greeted = new CompletableFuture<>();
        long millis = timeout.toMillis();
        Bootstrap b = new Bootstrap().group(group).channel(NioSocketChannel.class)
                .option(ChannelOption.CONNECT_TIMEOUT_MILLIS, (int) millis)
                .handler(new ChannelInitializer<SocketChannel>() {
                    @Override
                    protected void initChannel(SocketChannel ch) {
                        SslHandler tls = ssl.newHandler(ch.alloc(), host, port);
                        tls.setHandshakeTimeoutMillis(millis);
                        ch.pipeline().addLast(NetKvServer.TLS, tls);
                        ch.pipeline().addLast(NetKvServer.DECODER, new WireCodec.Decoder(WireCodec.MAX_CONTROL_MESSAGE));
                        ch.pipeline().addLast(NetKvServer.ENCODER, new WireCodec.Encoder());
                        ch.pipeline().addLast(NetKvServer.HANDLER, new Greeting(handler, greeted));
                    }
                });
        ChannelFuture cf = b.connect(host, port);
        if (!cf.await(millis + 1000) || !cf.isSuccess()) {
            cf.channel().close();
            throw new IOException("cannot connect to " + host + ":" + port + ": " + (cf.cause() == null ? "timed out" : cf.cause()));
        }
        Channel ch = cf.channel();
        Future<Channel> hs = ch.pipeline().get(SslHandler.class).handshakeFuture();
        if (!hs.await(millis + 1000) || !hs.isSuccess()) {
            ch.close();
            throw new IOException("TLS handshake with " + host + ":" + port + " failed: "
                    + (hs.cause() == null ? "timed out" : hs.cause()));
        }
        ch.writeAndFlush(new WireMessage.Hello(WireCodec.PROTOCOL_VERSION, nodeName, WireMessage.Purpose.CONTROL, layout));
        try {
            return greeted.get(millis, TimeUnit.MILLISECONDS);
        } catch (TimeoutException e) {
            ch.close();
            throw new IOException("no hello from " + host + ":" + port + " within " + millis + " ms");
        } catch (ExecutionException e) {
            ch.close();
            throw new IOException("control connection to " + host + ":" + port + " refused: " + e.getCause().getMessage(),
                    e.getCause());
        }
    }

    /** Waits for the node's hello, checks it, and hands the connection over to a {@link ControlConnection}. */
    private static final class Greeting extends SimpleChannelInboundHandler<WireMessage> {
        private final ControlHandler handler;
        private final CompletableFuture<ControlConnection> greeted;

        Greeting(ControlHandler handler, CompletableFuture<ControlConnection> greeted) {
            super(WireMessage.class);
            this.handler = handler;
            this.greeted = greeted;
        }

        @Override
        protected void channelRead0(ChannelHandlerContext ctx, WireMessage msg) {
            if (!(msg instanceof WireMessage.Hello h)) {
                refuse(ctx, "first message is " + msg.getClass().getSimpleName() + ", not a hello");
                return;
            }
            if (h.version() != WireCodec.PROTOCOL_VERSION || h.purpose() != WireMessage.Purpose.CONTROL) {
                refuse(ctx, "the node answered version " + h.version() + " " + h.purpose() + "; this side speaks version "
                        + WireCodec.PROTOCOL_VERSION + " CONTROL");
                return;
            }
            String certified;
            try {
                certified = ClusterTls.peerName(ctx.pipeline().get(SslHandler.class).engine().getSession());
            } catch (SSLPeerUnverifiedException e) {
                refuse(ctx, e.getMessage());
                return;
            }
            if (!certified.equals(h.node())) {
                refuse(ctx, "the node calls itself " + h.node() + " but its certificate is for " + certified);
                return;
            }
            ControlConnection c = new ControlConnection(ctx.channel(), certified, h.layout(), handler);
            ctx.pipeline().replace(this, NetKvServer.HANDLER, c);
            c.start();
            greeted.complete(c);
        }

        private void refuse(ChannelHandlerContext ctx, String why) {
            greeted.completeExceptionally(new IOException(why));
            ctx.close();
        }

        @Override
        public void channelInactive(ChannelHandlerContext ctx) throws Exception {
            greeted.completeExceptionally(new IOException("connection closed before the node's hello"));
            super.channelInactive(ctx);
        }

        @Override
        public void exceptionCaught(ChannelHandlerContext ctx, Throwable cause) {
            refuse(ctx, cause.toString());
        }
    }

    @Override
    public void close() {
        group.shutdownGracefully(0, 5, TimeUnit.SECONDS).awaitUninterruptibly();
    }
}
