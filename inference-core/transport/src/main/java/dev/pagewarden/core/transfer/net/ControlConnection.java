package dev.pagewarden.core.transfer.net;

import dev.pagewarden.core.kv.KvLayout;
import io.netty.channel.Channel;
import io.netty.channel.ChannelFutureListener;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.SimpleChannelInboundHandler;

import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.RejectedExecutionException;

/** A greeted control connection: hands each control message to its handler on a thread of its own, in order. */
final class ControlConnection extends SimpleChannelInboundHandler<WireMessage> implements ControlPeer {
    private static final System.Logger LOG = System.getLogger(ControlConnection.class.getName());
    private final Channel channel;
    private final String name;
    private final KvLayout layout;
    private final ControlHandler handler;
    private final ExecutorService worker;

    ControlConnection(Channel channel, String name, KvLayout layout, ControlHandler handler) {
        super(WireMessage.class);
        this.channel = channel;
        this.name = name;
        this.layout = layout;
        this.handler = handler;
        this.worker = Executors.newSingleThreadExecutor(Thread.ofPlatform().name("pagewarden-control-" + name + "-", 0).daemon().factory());
    }

    /** Tells the handler, first of all, that the connection is open. */
    void start() {
        worker.execute(() -> handler.opened(this));
    }

    @Override
    public String name() {
        return name;
    }

    @Override
    public KvLayout layout() {
        return layout;
    }

    @Override
    public String address() {
        return String.valueOf(channel.remoteAddress());
    }

    @Override
    public boolean send(ControlMessage message) {
        if (!channel.isActive()) {
            return false;
        }
        channel.writeAndFlush(new WireMessage.Control(message)).addListener(ChannelFutureListener.CLOSE_ON_FAILURE);
        return true;
    }

    @Override
    public boolean isOpen() {
        return channel.isActive();
    }

    @Override
    public void close() {
        channel.close();
    }

    @Override
    protected void channelRead0(ChannelHandlerContext ctx, WireMessage msg) {
        if (!(msg instanceof WireMessage.Control c)) {
            LOG.log(System.Logger.Level.WARNING, "closing control connection with " + name + " at " + address()
                    + ": unexpected " + msg.getClass().getSimpleName());
            if (msg instanceof WireMessage.Page p) {
                p.bytes().release();
            }
            ctx.close();
            return;
        }
        try {
            worker.execute(() -> {
                try {
                    handler.received(this, c.body());
                } catch (RuntimeException e) {
                    LOG.log(System.Logger.Level.WARNING, "control message from " + name + " failed: " + e, e);
                }
            });
        } catch (RejectedExecutionException e) {
            // closed meanwhile
        }
    }

    @Override
    public void channelInactive(ChannelHandlerContext ctx) throws Exception {
        try {
            worker.execute(() -> handler.closed(this));
        } catch (RejectedExecutionException e) {
            // already closed
        }
        worker.shutdown();
        super.channelInactive(ctx);
    }

    @Override
    public void exceptionCaught(ChannelHandlerContext ctx, Throwable cause) {
        LOG.log(System.Logger.Level.WARNING, "closing control connection with " + name + " at " + address() + ": " + cause);
        ctx.close();
    }

    @Override
    public String toString() {
        return name + " (" + address() + ")";
    }
}
