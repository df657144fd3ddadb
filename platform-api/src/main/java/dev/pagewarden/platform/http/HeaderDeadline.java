package dev.pagewarden.platform.http;

import io.netty.buffer.ByteBuf;
import io.netty.channel.ChannelDuplexHandler;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandlerAdapter;
import io.netty.channel.ChannelPromise;
import io.netty.handler.codec.http.HttpRequest;
import io.netty.handler.codec.http.LastHttpContent;
import io.netty.util.concurrent.ScheduledFuture;

import java.time.Duration;
import java.util.concurrent.TimeUnit;

/**
 * Closes a connection whose request headers are not complete within the header timeout of the
 * request's first byte (a client trickling headers to hold the connection). Two handlers around the
 * HTTP codec share one state, touched only on the channel's event loop: {@link #bytes()} sees raw bytes
 * before the decoder, {@link #messages()} decoded requests and the responses written. The clock never
 * runs while a response is still being written: a client that pipelines its next request behind a long
 * generation is not cut off, its clock starts when the response ends. The body has its own timeout
 * (Reactor Netty's request timeout), and waiting between requests the idle timeout.
 */
final class HeaderDeadline {
    private final long timeoutNanos;
    /** true from a request's last byte (or the connection's start) until the next request's headers are complete. */
    private boolean betweenRequests = true;
    /** bytes of the next request arrived (its headers are not complete yet). */
    private boolean nextStarted;
    /** requests whose response has not been written completely. */
    private int responding;
    private ScheduledFuture<?> timer;

    HeaderDeadline(Duration timeout) {
        this.timeoutNanos = timeout.toNanos();
    }

    /** Before the HTTP decoder: the first byte of a request starts the clock (once no response is running). */
    ChannelInboundHandlerAdapter bytes() {
        return new ChannelInboundHandlerAdapter() {
            @Override
            public void channelRead(ChannelHandlerContext ctx, Object msg) {
                if (betweenRequests && !nextStarted && msg instanceof ByteBuf b && b.isReadable()) {
                    nextStarted = true;
                    if (responding == 0) {
                        start(ctx);
                    }
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

    /** After the HTTP codec: complete headers stop the clock; a response's end lets a waiting one start. */
    ChannelDuplexHandler messages() {
        return new ChannelDuplexHandler() {
            @Override
            public void channelRead(ChannelHandlerContext ctx, Object msg) {
                if (msg instanceof HttpRequest) {
                    cancel();
                    betweenRequests = false;
                    nextStarted = false;
                    responding++;
                }
                if (msg instanceof LastHttpContent) {
                    betweenRequests = true;
                }
                ctx.fireChannelRead(msg);
            }

            @Override
            public void write(ChannelHandlerContext ctx, Object msg, ChannelPromise promise) {
                if (msg instanceof LastHttpContent && responding > 0 && --responding == 0 && nextStarted && timer == null) {
                    start(ctx);
                }
                ctx.write(msg, promise);
            }
        };
    }

    private void start(ChannelHandlerContext ctx) {
        timer = ctx.executor().schedule(() -> {
            timer = null;
            ctx.close();
        }, timeoutNanos, TimeUnit.NANOSECONDS);
    }

    private void cancel() {
        if (timer != null) {
            timer.cancel(false);
            timer = null;
        }
    }
}
