package dev.pagewarden.platform.http;

import io.netty.channel.ChannelHandler;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandlerAdapter;
import io.netty.util.AttributeKey;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.util.concurrent.ConcurrentHashMap;

/**
 * Caps the connections one TCP peer address holds open at once: a connection over the cap is closed
 * as soon as it opens, before any byte is read. The peer is the socket's remote address (a proxy in
 * front counts as one client: size the cap for it).
 */
@ChannelHandler.Sharable
final class ConnectionCap extends ChannelInboundHandlerAdapter {
    private static final Logger LOG = LoggerFactory.getLogger(ConnectionCap.class);
    private static final AttributeKey<InetAddress> COUNTED = AttributeKey.valueOf(ConnectionCap.class, "counted");

    private final int max;
    private final ConcurrentHashMap<InetAddress, Integer> open = new ConcurrentHashMap<>();

    ConnectionCap(int max) {
        this.max = max;
    }

    @Override
    public void channelActive(ChannelHandlerContext ctx) {
        if (!(ctx.channel().remoteAddress() instanceof InetSocketAddress remote)) {
            ctx.fireChannelActive();
            return;
        }
        InetAddress address = remote.getAddress();
        boolean[] admitted = {false};
        open.compute(address, (a, n) -> {
            int now = n == null ? 0 : n;
            if (now >= max) {
                return n;
            }
            admitted[0] = true;
            return now + 1;
        });
        if (!admitted[0]) {
            LOG.warn("refused a connection from {}: already {} open (pagewarden.http.max-connections-per-address)",
                    address.getHostAddress(), max);
            ctx.close();
            return;
        }
        ctx.channel().attr(COUNTED).set(address);
        ctx.fireChannelActive();
    }

    @Override
    public void channelInactive(ChannelHandlerContext ctx) {
        InetAddress address = ctx.channel().attr(COUNTED).getAndSet(null);
        if (address != null) {
            open.computeIfPresent(address, (a, n) -> n <= 1 ? null : n - 1);
        }
        ctx.fireChannelInactive();
    }

    /** Open connections of one address (for tests and diagnostics). */
    int openFrom(InetAddress address) {
        return open.getOrDefault(address, 0);
    }
}
