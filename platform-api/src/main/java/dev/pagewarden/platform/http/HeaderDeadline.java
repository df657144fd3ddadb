package dev.pagewarden.platform.http;

import io.netty.buffer.ByteBuf;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandlerAdapter;
import io.netty.handler.codec.http.HttpRequest;
import io.netty.handler.codec.http.LastHttpContent;
import io.netty.util.concurrent.ScheduledFuture;

import java.time.Duration;
import java.util.concurrent.TimeUnit;

/**
 * Closes a connection whose request headers are not complete within the header timeout of the
 * request's first byte (a client trickling headers to hold the connection). Two handlers around the
 * HTTP decoder share one state: {@link #bytes()} sees the raw bytes before the decoder, {@link #requests()}
 * the decoded request after it. The body has its own timeout (Reactor Netty's request timeout), and
 * waiting between requests the idle timeout.
 */
final class HeaderDeadline {
    private final long timeoutNanos;
    /** true between a request's last content and the next request's first byte. */
    private boolean betweenRequests = true;
    private ScheduledFuture<?> timer;

    HeaderDeadline(Duration timeout) {
        this.timeoutNanos = timeout.toNanos();
    }

    /** Before the HTTP decoder: the first byte of a request starts the clock. */
    ChannelInboundHandlerAdapter bytes() {
        return new ChannelInboundHandlerAdapter() {
            @Override
            public void channelRead(ChannelHandlerContext ctx, Object msg) {
                if (betweenRequests && msg instanceof ByteBuf b && b.isReadable()) {
                    betweenRequests = false;
                    timer = ctx.executor().schedule(() -> {
                        timer = null;
                        ctx.close();
                    }, timeoutNanos, TimeUnit.NANOSECONDS);
                }
                ctx.fireChannelRead(msg);
            }

            @Override
            public void channelInactive(ChannelHandlerContext ctx) {
                cancel();
                ctx.fireChannelInactive();
            }
        };
    }

    /** After the HTTP decoder: complete headers stop the clock; the request's end re-arms it for the next one. */
    ChannelInboundHandlerAdapter requests() {
        return new ChannelInboundHandlerAdapter() {
            @Override
            public void channelRead(ChannelHandlerContext ctx, Object msg) {
                if (msg instanceof HttpRequest) {
                    cancel();
                }
                if (msg instanceof LastHttpContent) {
                    betweenRequests = true;
                }
                ctx.fireChannelRead(msg);
            }
        };
    }

    private void cancel() {
        if (timer != null) {
            timer.cancel(false);
            timer = null;
        }
    }
}
