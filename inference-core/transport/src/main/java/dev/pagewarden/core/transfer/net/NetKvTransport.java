package dev.pagewarden.core.transfer.net;

import dev.pagewarden.core.kv.KvLayout;
import dev.pagewarden.core.transfer.KvTransport;
import dev.pagewarden.core.transfer.PageFrame;
import dev.pagewarden.core.transfer.PageStaging;
import dev.pagewarden.core.transfer.TransferJob;
import dev.pagewarden.core.transfer.net.WireMessage.Ack;
import dev.pagewarden.core.transfer.net.WireMessage.Done;
import dev.pagewarden.core.transfer.net.WireMessage.DoneResult;
import dev.pagewarden.core.transfer.net.WireMessage.FrameResult;
import dev.pagewarden.core.transfer.net.WireMessage.Hello;
import dev.pagewarden.core.transfer.net.WireMessage.Page;
import io.netty.bootstrap.Bootstrap;
import io.netty.buffer.Unpooled;
import io.netty.channel.Channel;
import io.netty.channel.ChannelFuture;
import io.netty.channel.ChannelFutureListener;
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

import java.io.IOException;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.TimeUnit;

/**
 * The prefill node's end of the wire: sends each transfer's pages to a {@link NetKvServer} over one TLS
 * connection (opened again when it is lost).
 *
 * <p>Transfers go one after the other on a sender thread. Each page is copied into a staging buffer,
 * checksummed, and written from there without a further copy; at most {@code maxInFlight} pages are
 * unanswered at a time, and none is written while the connection's outbound buffer is full. The first
 * refused page ends the transfer; after the last accepted one comes "done" and its answer. Every transfer
 * then ends with an ack, and only after the ack is flushed does the job learn its outcome. A lost or
 * silent connection, a timeout or a failed handshake make the outcome false (the server acks on the lost
 * connection's behalf); nothing is thrown at the engine.
 */
public final class NetKvTransport implements KvTransport {
    private static final System.Logger LOG = System.getLogger(NetKvTransport.class.getName());
    private static final Object CLOSED = new Object();
    private final String host;
    private final int port;
    private final SslContext ssl;
    private final String nodeName;
    private final Duration connectTimeout;
    private final Duration handshakeTimeout;
    private final long answerMillis;
    private final int maxInFlight;
    private final EventLoopGroup group = new MultiThreadIoEventLoopGroup(1,
            new DefaultThreadFactory("pagewarden-kv-client", true), NioIoHandler.newFactory());
    private final ExecutorService sender = Executors.newSingleThreadExecutor(
            Thread.ofPlatform().name("pagewarden-kv-sender" + "-", 0).daemon().factory());
    /** Staging buffers, one per page in flight; shared because the network thread reads them. Sender thread only. */
    private final Arena arena = Arena.ofShared();
    private MemorySegment[] staging;
    private long stagingBytes;
    /** Sender thread only. */
    private Connection connection;

    public NetKvTransport(String host, int port, SslContext ssl, String nodeName, Duration connectTimeout,
                          Duration handshakeTimeout, Duration answerTimeout, int maxInFlight) {
        if (!ssl.isClient()) {
            throw new IllegalArgumentException("the KV transport needs a client-side TLS context");
        }
        if (maxInFlight < 1) {
            throw new IllegalArgumentException("at least one page must be allowed in flight, got " + maxInFlight);
        }
        WireCodec.requireName(nodeName, "node name");
        this.host = host;
        this.port = port;
        this.ssl = ssl;
        this.nodeName = nodeName;
        this.connectTimeout = connectTimeout;
        this.handshakeTimeout = handshakeTimeout;
        this.answerMillis = answerTimeout.toMillis();
        this.maxInFlight = maxInFlight;
    }

    @Override
    public void send(TransferJob job) {
        try {
            sender.execute(new Transfer(job));
        } catch (RejectedExecutionException e) {
            job.onOutcome().accept(false); // closed
        }
    }

    private final class Transfer implements Runnable {
        final TransferJob job;

        Transfer(TransferJob job) {
            this.job = job;
        }

        @Override
        public void run() {
            boolean ok = false;
            Connection c = null;
            try {
                c = connect(job.source().layout());
                ok = c.send(job);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                drop("interrupted");
            } catch (Exception e) {
                LOG.log(System.Logger.Level.WARNING, "KV transfer of request " + job.requestId() + " (generation "
                        + job.generation() + ") to " + host + ":" + port + " failed: " + e);
                drop(e.toString());
            } finally {
                // still the connection the pages went on: ack there (else its end is the ack, on the server)
                if (c != null && c == connection) {
                    ok &= c.ack(job);
                }
                try {
                    job.onOutcome().accept(ok);
                } catch (RuntimeException e) {
                    LOG.log(System.Logger.Level.WARNING, "outcome callback of request " + job.requestId() + " failed", e);
                }
            }
        }
    }

    /** The open connection, or a new one (connected, handshaken and greeted) for pages of {@code layout}. */
    private Connection connect(KvLayout layout) throws IOException, InterruptedException {
        if (connection != null && connection.channel.isActive() && connection.layout.equals(layout)) {
            return connection;
        }
        drop("reconnecting");
        if (staging == null || stagingBytes != layout.pageBytes()) {
            staging = new MemorySegment[maxInFlight];
            for (int i = 0; i < maxInFlight; i++) {
                staging[i] = arena.allocate(layout.pageBytes(), 64);
            }
            stagingBytes = layout.pageBytes();
        }
        Replies replies = new Replies();
        Bootstrap b = new Bootstrap().group(group).channel(NioSocketChannel.class)
                .option(ChannelOption.CONNECT_TIMEOUT_MILLIS, (int) connectTimeout.toMillis())
                .handler(new ChannelInitializer<SocketChannel>() {
                    @Override
                    protected void initChannel(SocketChannel ch) {
                        SslHandler tls = ssl.newHandler(ch.alloc(), host, port);
                        tls.setHandshakeTimeoutMillis(handshakeTimeout.toMillis());
                        ch.pipeline().addLast(NetKvServer.TLS, tls);
                        ch.pipeline().addLast(NetKvServer.DECODER, new WireCodec.Decoder(WireCodec.MAX_CONTROL_FRAME));
                        ch.pipeline().addLast(NetKvServer.ENCODER, new WireCodec.Encoder());
                        ch.pipeline().addLast(NetKvServer.HANDLER, replies);
                    }
                });
        ChannelFuture cf = b.connect(host, port);
        if (!cf.await(connectTimeout.toMillis() + 1000) || !cf.isSuccess()) {
            cf.channel().close();
            throw new IOException("cannot connect to " + host + ":" + port + ": "
                    + (cf.cause() == null ? "timed out" : cf.cause()));
        }
        Connection c = new Connection(cf.channel(), replies, layout);
        Future<Channel> hs = cf.channel().pipeline().get(SslHandler.class).handshakeFuture();
        if (!hs.await(handshakeTimeout.toMillis() + 1000) || !hs.isSuccess()) {
            c.close();
            throw new IOException("TLS handshake with " + host + ":" + port + " failed: "
                    + (hs.cause() == null ? "timed out" : hs.cause()));
        }
        connection = c;
        c.channel.writeAndFlush(new Hello(WireCodec.PROTOCOL_VERSION, nodeName, layout));
        Hello h = c.next(Hello.class);
        if (h.version() != WireCodec.PROTOCOL_VERSION || !h.layout().equals(layout)) {
            throw new IOException("node " + h.node() + " at " + host + ":" + port + " speaks version " + h.version()
                    + " with pages of " + h.layout() + "; ours are version " + WireCodec.PROTOCOL_VERSION + ", " + layout);
        }
        LOG.log(System.Logger.Level.INFO, "KV connection to " + h.node() + " at " + host + ":" + port);
        return c;
    }

    /** Closes the connection (waiting until its pending writes are gone, as they point into the staging buffers). */
    private void drop(String why) {
        if (connection != null) {
            LOG.log(System.Logger.Level.DEBUG, "closing KV connection to " + host + ":" + port + ": " + why);
            connection.close();
            connection = null;
        }
    }

    private final class Connection {
        final Channel channel;
        final Replies replies;
        final KvLayout layout;

        Connection(Channel channel, Replies replies, KvLayout layout) {
            this.channel = channel;
            this.replies = replies;
            this.layout = layout;
        }

        /** Sends the pages and "done" of {@code job}; true when the receiver reports it ready. */
        boolean send(TransferJob job) throws IOException, InterruptedException {
            int frames = layout.pagesFor(job.tokens());
            int sent = 0;
            int answered = 0;
            boolean refused = false;
            while (sent < frames && !refused) {
                while (!refused && sent > answered && (sent - answered >= maxInFlight || !channel.isWritable())) {
                    refused = !next(job, answered++);
                }
                if (refused) {
                    break;
                }
                if (!channel.isWritable()) {
                    replies.awaitWritable(channel, answerMillis);
                }
                // the slot's previous page is answered, so its write is done
                PageFrame f = PageStaging.stage(job, sent, staging[sent % maxInFlight]);
                PageStaging.recordSent(job, f);
                channel.writeAndFlush(new Page(job.requestId(), job.tenant(), f.sourcePool(), f.source().page(),
                        f.source().epoch(), job.generation(), f.pageIndex(), 0, f.tokens(), f.crc32c(), f.writers(),
                        Unpooled.wrappedBuffer(f.bytes().asByteBuffer()))).addListener(ChannelFutureListener.CLOSE_ON_FAILURE);
                sent++;
            }
            while (answered < sent) {
                refused |= !next(job, answered++); // every page answered before the ack
            }
            if (refused) {
                return false;
            }
            channel.writeAndFlush(new Done(job.requestId(), job.generation(), job.tokens(), frames))
                    .addListener(ChannelFutureListener.CLOSE_ON_FAILURE);
            DoneResult d = next(DoneResult.class);
            if (d.requestId() != job.requestId() || d.generation() != job.generation()) {
                throw new IOException("answer to done names request " + d.requestId() + " generation " + d.generation());
            }
            return d.ready();
        }

        /** The answer to page {@code index}: whether it was accepted. */
        private boolean next(TransferJob job, int index) throws IOException, InterruptedException {
            FrameResult r = next(FrameResult.class);
            if (r.requestId() != job.requestId() || r.generation() != job.generation() || r.pageIndex() != index) {
                throw new IOException("answer names request " + r.requestId() + " generation " + r.generation() + " page "
                        + r.pageIndex() + ", expected " + job.requestId() + "/" + job.generation() + " page " + index);
            }
            return r.accepted();
        }

        <T extends WireMessage> T next(Class<T> type) throws IOException, InterruptedException {
            Object m = replies.queue.poll(answerMillis, TimeUnit.MILLISECONDS);
            if (m == null) {
                throw new IOException("no answer from " + host + ":" + port + " within " + answerMillis + " ms");
            }
            if (m == CLOSED) {
                throw new IOException("connection to " + host + ":" + port + " closed");
            }
            if (!type.isInstance(m)) {
                throw new IOException("expected " + type.getSimpleName() + ", got " + m);
            }
            return type.cast(m);
        }

        /** The ack; true once it is flushed. A failed ack drops the connection (whose end the server takes as the ack). */
        boolean ack(TransferJob job) {
            ChannelFuture f = channel.writeAndFlush(new Ack(job.requestId(), job.generation()));
            try {
                if (f.await(answerMillis) && f.isSuccess()) {
                    return true;
                }
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
            LOG.log(System.Logger.Level.WARNING, "ack of request " + job.requestId() + " (generation " + job.generation()
                    + ") to " + host + ":" + port + " not written: " + (f.cause() == null ? "timed out" : f.cause()));
            drop("ack not written");
            return false;
        }

        void close() {
            channel.close().awaitUninterruptibly(answerMillis);
        }
    }

    /** Receives the server's messages into a queue; the connection's end is a {@link #CLOSED} marker. */
    private static final class Replies extends SimpleChannelInboundHandler<WireMessage> {
        final LinkedBlockingQueue<Object> queue = new LinkedBlockingQueue<>();

        Replies() {
            super(WireMessage.class);
        }

        @Override
        protected void channelRead0(ChannelHandlerContext ctx, WireMessage msg) {
            queue.add(msg);
        }

        @Override
        public void channelInactive(ChannelHandlerContext ctx) throws Exception {
            queue.add(CLOSED);
            super.channelInactive(ctx);
        }

        @Override
        public synchronized void channelWritabilityChanged(ChannelHandlerContext ctx) throws Exception {
            notifyAll();
            super.channelWritabilityChanged(ctx);
        }

        synchronized void awaitWritable(Channel channel, long millis) throws IOException, InterruptedException {
            long deadline = System.nanoTime() + millis * 1_000_000L;
            while (!channel.isWritable() && channel.isActive()) {
                long left = (deadline - System.nanoTime()) / 1_000_000L;
                if (left <= 0) {
                    throw new IOException("connection stayed full for " + millis + " ms");
                }
                wait(left);
            }
        }

        @Override
        public void exceptionCaught(ChannelHandlerContext ctx, Throwable cause) {
            LOG.log(System.Logger.Level.WARNING, "closing KV connection to " + ctx.channel().remoteAddress() + ": " + cause);
            ctx.close();
        }
    }

    @Override
    public void close() {
        List<Runnable> waiting = sender.shutdownNow();
        for (Runnable r : waiting) {
            ((Transfer) r).job.onOutcome().accept(false);
        }
        boolean stopped = false;
        try {
            stopped = sender.awaitTermination(answerMillis + 5000, TimeUnit.MILLISECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        if (connection != null) {
            connection.close();
            connection = null;
        }
        group.shutdownGracefully(0, 5, TimeUnit.SECONDS).awaitUninterruptibly();
        if (stopped) {
            arena.close(); // else a transfer still runs on them; the memory goes with the process
        }
    }
}
