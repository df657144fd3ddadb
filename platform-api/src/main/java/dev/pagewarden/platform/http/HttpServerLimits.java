package dev.pagewarden.platform.http;

import org.springframework.boot.context.properties.EnableConfigurationProperties;
import org.springframework.boot.reactor.netty.NettyReactiveWebServerFactory;
import org.springframework.boot.web.server.WebServerFactoryCustomizer;
import org.springframework.stereotype.Component;
import reactor.netty.NettyPipeline;

import java.net.InetAddress;

/**
 * Applies {@link HttpLimits} to the platform's Reactor Netty server, so a slow or idle client cannot
 * hold connections open: header, body and idle timeouts, the header size, and the per-address cap.
 */
@Component
@EnableConfigurationProperties(HttpLimits.class)
class HttpServerLimits implements WebServerFactoryCustomizer<NettyReactiveWebServerFactory> {
    private final HttpLimits limits;
    private final ConnectionCap cap;

    HttpServerLimits(HttpLimits limits) {
        this.limits = limits;
        this.cap = limits.maxConnectionsPerAddress() > 0 ? new ConnectionCap(limits.maxConnectionsPerAddress()) : null;
    }

    /** Connections the given client address holds open now (0 when there is no cap). */
    int openConnectionsFrom(InetAddress address) {
        return cap == null ? 0 : cap.openFrom(address);
    }

    @Override
    public void customize(NettyReactiveWebServerFactory factory) {
        factory.addServerCustomizers(server -> server
                .idleTimeout(limits.idleTimeout())
                // the whole body within bodyTimeout of the headers (408, then close); never the response
                .requestTimeout(limits.bodyTimeout())
                .httpRequestDecoder(d -> d.maxHeaderSize((int) limits.maxHeaderSize().toBytes()))
                .doOnChannelInit((observer, channel, remote) -> {
                    if (cap != null) {
                        channel.pipeline().addFirst("pagewarden.connectionCap", cap);
                    }
                    if (channel.pipeline().get(NettyPipeline.HttpCodec) != null) {
                        HeaderDeadline deadline = new HeaderDeadline(limits.headerTimeout());
                        channel.pipeline().addBefore(NettyPipeline.HttpCodec, "pagewarden.headerBytes", deadline.bytes());
                        channel.pipeline().addAfter(NettyPipeline.HttpCodec, "pagewarden.headerDone", deadline.messages());
                    }
                }));
    }
}
