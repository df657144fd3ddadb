package dev.pagewarden.core.transfer.net;

import dev.pagewarden.core.kv.KvLayout;
import dev.pagewarden.core.kv.PageRef;
import dev.pagewarden.core.transfer.KvReceiver;
import dev.pagewarden.core.transfer.PageFrame;
import dev.pagewarden.core.transfer.PageStaging;
import dev.pagewarden.core.transfer.TransferDone;
import dev.pagewarden.core.transfer.net.WireMessage.Ack;
import dev.pagewarden.core.transfer.net.WireMessage.Done;
import dev.pagewarden.core.transfer.net.WireMessage.DoneResult;
import dev.pagewarden.core.transfer.net.WireMessage.FrameResult;
import dev.pagewarden.core.transfer.net.WireMessage.Hello;
import dev.pagewarden.core.transfer.net.WireMessage.Page;
import io.netty.bootstrap.ServerBootstrap;
import io.netty.buffer.ByteBuf;
import io.netty.channel.Channel;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInitializer;
import io.netty.channel.ChannelPipeline;
import io.netty.channel.EventLoopGroup;
import io.netty.channel.MultiThreadIoEventLoopGroup;
import io.netty.channel.SimpleChannelInboundHandler;
import io.netty.channel.nio.NioIoHandler;
import io.netty.channel.socket.SocketChannel;
import io.netty.channel.socket.nio.NioServerSocketChannel;
import io.netty.handler.ssl.SslContext;
import io.netty.handler.ssl.SslHandler;
import io.netty.handler.ssl.SslHandshakeCompletionEvent;
import io.netty.util.concurrent.DefaultThreadFactory;

import java.lang.foreign.MemorySegment;
import java.net.InetSocketAddress;
import java.security.cert.X509Certificate;
import java.util.HashSet;
import java.util.LinkedHashSet;
import java.util.Set;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Consumer;

/**
 * The decode node's end of the wire: accepts TLS connections from prefill nodes (mutual authentication is
 * the {@link SslContext}'s), checks each page's checksum and shape, and hands it to the {@link KvReceiver}.
 *
 * <p>Messages are decoded on the network thread; the receiver is called on one worker thread per
 * connection, in arrival order (it takes the pool's lock, which the decode loop holds while it steps).
 * When a connection ends, every transfer that sent pages on it and was not acked is acked on its behalf:
 * no write of it can arrive any more, and the receiver fails an unfinished transfer and frees its pages.
 */
public final class NetKvServer implements AutoCloseable {
    private static final System.Logger LOG = System.getLogger(NetKvServer.class.getName());
    /** Pages of one connection held in memory before the intake has seen them, at most (a sender that ignores its answers waits). */
    private static final int MAX_QUEUED_PAGES = 16;
    static final String TLS = "tls", DECODER = "decoder", ENCODER = "encoder", HANDLER = "handler";
    private final String nodeName;
    private EventLoopGroup group;
    private Channel serverChannel;
    private Consumer<ChannelPipeline> pipelineHook = p -> { };
    private volatile ControlHandler control;

    public NetKvServer(String nodeName) {
        WireCodec.requireName(nodeName, "node name");
        this.nodeName = nodeName;
    }

    /** Lets tests add handlers to each accepted connection's pipeline (after the standard ones are in place). */
    void pipelineHook(Consumer<ChannelPipeline> hook) {
        this.pipelineHook = hook;
    }

    /**
     * Serves control connections too (a hello that says "control"), on the same port, with {@code handler};
     * without one they are refused. Set before {@link #start}.
     */
    public void controlHandler(ControlHandler handler) {
        this.control = handler;
    }

    /**
     * Listens on {@code bindHost:port} (0: any free port) and returns the port bound. {@code receiver} null:
     * this node takes no pages (a prefill node), and a KV data hello is refused; {@code expected} is still the
     * layout its hello names.
     */
    public synchronized int start(String bindHost, int port, SslContext ssl, KvReceiver receiver, KvLayout expected)
            throws InterruptedException {
        if (!ssl.isServer()) {
            throw new IllegalArgumentException("the KV server needs a server-side TLS context");
        }
        if (receiver == null && control == null) {
            throw new IllegalArgumentException("a server that takes no pages needs a control handler");
        }
        if (serverChannel != null) {
            throw new IllegalStateException("already listening on " + serverChannel.localAddress());
        }
        int maxFrame = WireCodec.maxFrameLength(expected);
        group = new MultiThreadIoEventLoopGroup(2, new DefaultThreadFactory("pagewarden-kv-server", true),
                NioIoHandler.newFactory());
        ServerBootstrap b = new ServerBootstrap().group(group).channel(NioServerSocketChannel.class)
                .childHandler(new ChannelInitializer<SocketChannel>() {
                    @Override
                    protected void initChannel(SocketChannel ch) {
                        ChannelPipeline p = ch.pipeline();
                        p.addLast(TLS, ssl.newHandler(ch.alloc()));
                        p.addLast(DECODER, new WireCodec.Decoder(maxFrame));
                        p.addLast(ENCODER, new WireCodec.Encoder());
                        p.addLast(HANDLER, new Connection(receiver, expected));
                        pipelineHook.accept(p);
                    }
                });
        try {
            serverChannel = b.bind(bindHost, port).sync().channel();
        } catch (RuntimeException e) {
            group.shutdownGracefully();
            throw e;
        }
        int bound = ((InetSocketAddress) serverChannel.localAddress()).getPort();
        LOG.log(System.Logger.Level.INFO, "KV server " + nodeName + " listening on " + bindHost + ":" + bound);
        return bound;
    }

    @Override
    public synchronized void close() {
        if (serverChannel != null) {
            serverChannel.close().awaitUninterruptibly();
            group.shutdownGracefully(0, 5, java.util.concurrent.TimeUnit.SECONDS).awaitUninterruptibly();
            serverChannel = null;
        }
    }

    /** One prefill node's connection. */
    private final class Connection extends SimpleChannelInboundHandler<WireMessage> {
        private final KvReceiver receiver;
        private final KvLayout expected;
        private final ExecutorService worker = Executors.newSingleThreadExecutor(
                Thread.ofPlatform().name("pagewarden-kv-intake" + "-", 0).daemon().factory());
        /** (request, generation) pairs with pages on this connection and no ack yet; worker thread only. */
        private final Set<Key> open = new LinkedHashSet<>();
        /** Transfers with a refused page: the refusal ended them, so their later pages are refused unseen. Worker only. */
        private final Set<Key> refused = new HashSet<>();
        /** Who is at the other end, for the log (written on the network thread, read on the worker). */
        private volatile String peer;
        private boolean greeted;
        /** Set on a refusal: nothing more read on this connection is handled. Network thread only. */
        private boolean closing;
        /** Pages read and not yet handled: past {@link #MAX_QUEUED_PAGES} the connection stops reading. */
        private final AtomicInteger queued = new AtomicInteger();

        Connection(KvReceiver receiver, KvLayout expected) {
            super(WireMessage.class, false);
            this.receiver = receiver;
            this.expected = expected;
        }

        @Override
        public void channelActive(ChannelHandlerContext ctx) throws Exception {
            peer = String.valueOf(ctx.channel().remoteAddress());
            super.channelActive(ctx);
        }

        @Override
        public void userEventTriggered(ChannelHandlerContext ctx, Object evt) throws Exception {
            if (evt instanceof SslHandshakeCompletionEvent hs) {
                if (hs.isSuccess()) {
                    SslHandler ssl = ctx.pipeline().get(SslHandler.class);
                    X509Certificate cert = (X509Certificate) ssl.engine().getSession().getPeerCertificates()[0];
                    peer = cert.getSubjectX500Principal().getName() + " at " + ctx.channel().remoteAddress();
                    LOG.log(System.Logger.Level.INFO, "connection from " + peer);
                } else {
                    LOG.log(System.Logger.Level.WARNING, "TLS handshake with " + ctx.channel().remoteAddress()
                            + " failed: " + hs.cause());
                }
            }
            super.userEventTriggered(ctx, evt);
        }

        @Override
        protected void channelRead0(ChannelHandlerContext ctx, WireMessage msg) {
            if (closing) { // the rest of a read that ended in a refusal
                if (msg instanceof Page p) {
                    p.bytes().release();
                }
                return;
            }
            if (!greeted) {
                if (!(msg instanceof Hello h)) {
                    refuse(ctx, msg, "first message is " + msg.getClass().getSimpleName() + ", not a hello");
                } else if (h.version() == WireCodec.PROTOCOL_VERSION && h.purpose() == WireMessage.Purpose.CONTROL) {
                    control(ctx, h);
                } else if (receiver == null && h.version() == WireCodec.PROTOCOL_VERSION) {
                    refuse(ctx, msg, "node " + h.node() + " sends pages, and node " + nodeName + " takes none");
                } else if (h.version() != WireCodec.PROTOCOL_VERSION) {
                    refuse(ctx, msg, "protocol version " + h.version() + ", this node speaks " + WireCodec.PROTOCOL_VERSION);
                } else if (!expected.equals(h.layout())) {
                    refuse(ctx, msg, "node " + h.node() + " sends pages of " + h.layout() + ", this pool holds " + expected);
                } else {
                    greeted = true;
                    peer = h.node() + " (" + peer + ")";
                    ctx.writeAndFlush(new Hello(WireCodec.PROTOCOL_VERSION, nodeName, expected));
                }
                return;
            }
            switch (msg) {
                case Page p -> {
                    String bad = shape(p);
                    if (bad != null) {
                        // the transfer ends with this connection: count it among the open ones first
                        worker.execute(() -> open.add(new Key(p.requestId(), p.generation())));
                        refuse(ctx, msg, bad);
                        return;
                    }
                    if (queued.incrementAndGet() >= MAX_QUEUED_PAGES) {
                        ctx.channel().config().setAutoRead(false); // the worker resumes reading when it catches up
                    }
                    worker.execute(() -> {
                        page(ctx, p);
                        if (queued.decrementAndGet() == MAX_QUEUED_PAGES / 2) {
                            ctx.channel().config().setAutoRead(true);
                        }
                    });
                }
                case Done d -> worker.execute(() -> {
                    boolean ready = call(() -> receiver.onDone(new TransferDone(d.requestId(), d.generation(),
                            d.totalTokens(), d.frames())));
                    ctx.writeAndFlush(new DoneResult(d.requestId(), d.generation(), ready));
                });
                case Ack a -> worker.execute(() -> {
                    open.remove(new Key(a.requestId(), a.generation()));
                    refused.remove(new Key(a.requestId(), a.generation()));
                    call(() -> {
                        receiver.onAck(a.requestId(), a.generation());
                        return true;
                    });
                });
                default -> refuse(ctx, msg, "unexpected " + msg.getClass().getSimpleName() + " from a sender");
            }
        }

        /** The connection is a control connection: the rest of it belongs to a {@link ControlConnection}. */
        private void control(ChannelHandlerContext ctx, Hello h) {
            ControlHandler handler = control;
            if (handler == null) {
                refuse(ctx, h, "node " + nodeName + " serves no control connections");
                return;
            }
            String certified;
            try {
                certified = ClusterTls.peerName(ctx.pipeline().get(SslHandler.class).engine().getSession());
            } catch (javax.net.ssl.SSLPeerUnverifiedException e) {
                refuse(ctx, h, e.getMessage());
                return;
            }
            if (!certified.equals(h.node())) {
                refuse(ctx, h, "the peer calls itself " + h.node() + " but its certificate is for " + certified);
                return;
            }
            greeted = true;
            worker.shutdown();
            ((WireCodec.Decoder) ctx.pipeline().get(DECODER)).maxFrame(WireCodec.MAX_CONTROL_MESSAGE);
            ctx.writeAndFlush(new Hello(WireCodec.PROTOCOL_VERSION, nodeName, WireMessage.Purpose.CONTROL, expected));
            ControlConnection c = new ControlConnection(ctx.channel(), certified, h.layout(), handler);
            ctx.pipeline().replace(this, HANDLER, c);
            c.start();
        }

        /** Why a page cannot be one of this pool's, or null. */
        private String shape(Page p) {
            if (p.bytes().readableBytes() != expected.pageBytes()) {
                return "page of " + p.bytes().readableBytes() + " bytes, expected " + expected.pageBytes();
            }
            if (p.writers().length != expected.pageTokens()) {
                return "writer shadow of " + p.writers().length + " slots, expected " + expected.pageTokens();
            }
            if (p.firstSlot() != 0 || p.slotCount() < 1 || p.slotCount() > expected.pageTokens()) {
                return "page claims slots [" + p.firstSlot() + ", " + (p.firstSlot() + p.slotCount()) + ") of "
                        + expected.pageTokens();
            }
            return null;
        }

        private void page(ChannelHandlerContext ctx, Page p) {
            boolean accepted = false;
            Key key = new Key(p.requestId(), p.generation());
            try {
                open.add(key);
                MemorySegment bytes = view(p.bytes());
                int crc;
                if (refused.contains(key)) {
                    LOG.log(System.Logger.Level.DEBUG, "page " + p.pageIndex() + " of request " + p.requestId()
                            + " follows a refused page; refused");
                } else if ((crc = PageStaging.crc32c(bytes)) != p.crc32c()) {
                    LOG.log(System.Logger.Level.WARNING, "refused page " + p.pageIndex() + " of request " + p.requestId()
                            + " (generation " + p.generation() + ") from " + peer + ": checksum "
                            + Integer.toHexString(crc) + " where the sender computed " + Integer.toHexString(p.crc32c()));
                } else {
                    PageFrame frame = new PageFrame(p.requestId(), p.generation(), p.pageIndex(), p.slotCount(),
                            p.crc32c(), bytes, p.writers(), new PageRef(p.sourcePage(), p.sourceEpoch()), p.sourcePool());
                    accepted = call(() -> receiver.onFrame(frame));
                }
            } finally {
                p.bytes().release();
            }
            if (!accepted) {
                refused.add(key);
            }
            ctx.writeAndFlush(new FrameResult(p.requestId(), p.generation(), p.pageIndex(), accepted));
        }

        /** The page as a segment: a view of the received buffer when it is direct memory, a copy otherwise. */
        private static MemorySegment view(ByteBuf b) {
            if (b.isDirect() && b.nioBufferCount() == 1) {
                return MemorySegment.ofBuffer(b.nioBuffer());
            }
            byte[] copy = new byte[b.readableBytes()];
            b.getBytes(b.readerIndex(), copy);
            return MemorySegment.ofArray(copy);
        }

        private boolean call(java.util.function.BooleanSupplier step) {
            try {
                return step.getAsBoolean();
            } catch (RuntimeException e) {
                LOG.log(System.Logger.Level.WARNING, "KV receiver failed on a message from " + peer + ": " + e, e);
                return false;
            }
        }

        private void refuse(ChannelHandlerContext ctx, WireMessage msg, String why) {
            if (msg instanceof Page p) {
                p.bytes().release();
            }
            LOG.log(System.Logger.Level.WARNING, "closing KV connection from " + peer + ": " + why);
            closing = true;
            ctx.close();
        }

        @Override
        public void exceptionCaught(ChannelHandlerContext ctx, Throwable cause) {
            LOG.log(System.Logger.Level.WARNING, "closing KV connection from " + peer + ": " + cause);
            ctx.close();
        }

        @Override
        public void channelInactive(ChannelHandlerContext ctx) throws Exception {
            // after every message already read: their frames are handled first, then nothing more can land
            worker.execute(() -> {
                for (Key k : open) {
                    LOG.log(System.Logger.Level.WARNING, "KV connection from " + peer + " ended during transfer of request "
                            + k.requestId() + " (generation " + k.generation() + "); it is over");
                    call(() -> {
                        receiver.onAck(k.requestId(), k.generation());
                        return true;
                    });
                }
                open.clear();
            });
            worker.shutdown();
            super.channelInactive(ctx);
        }
    }

    private record Key(long requestId, int generation) {
    }
}
