package dev.pagewarden.core.cluster;

import java.time.Duration;

/**
 * How an engine node serves.
 *
 * @param name           the node's name: the CN of its certificate in the {@code pki} folder
 * @param bindHost       the address it listens on (KV pages and control share the port)
 * @param port           the port (0: any free one; the node reports the one bound)
 * @param advertisedHost the host other nodes reach it at (a decode node gives this to prefill nodes for its pages)
 * @param heartbeat      how often it sends its status to each control peer
 * @param timeout        each network step's limit: connect, TLS handshake, hello, a transfer's answers
 * @param lineageBuffer  page life steps the node keeps until the platform acknowledges them; at this many it
 *                       admits no new request until the platform catches up (see {@link LineageOutbox})
 * @param platforms      certificate names of the platform's cluster clients: only they get this node's lineage
 *                       and may acknowledge it (another node of the cluster CA may not take it off the node)
 */
public record NodeOptions(String name, String bindHost, int port, String advertisedHost, Duration heartbeat,
                          Duration timeout, int lineageBuffer, java.util.Set<String> platforms) {

    public static final Duration DEFAULT_HEARTBEAT = Duration.ofMillis(500);
    public static final Duration DEFAULT_TIMEOUT = Duration.ofSeconds(10);
    public static final int DEFAULT_LINEAGE_BUFFER = LineageOutbox.DEFAULT_BOUND;
    /** The platform's certificate name by default ({@code pagewarden.engine.tls-name}). */
    public static final String DEFAULT_PLATFORM = "platform";

    public NodeOptions {
        if (name == null || name.isBlank()) {
            throw new IllegalArgumentException("a node needs a name (the CN of its certificate)");
        }
        if (port < 0 || port > 65535) {
            throw new IllegalArgumentException("listen port " + port + " outside 0..65535");
        }
        if (heartbeat.isNegative() || heartbeat.isZero()) {
            throw new IllegalArgumentException("heartbeat must be > 0, got " + heartbeat);
        }
        if (timeout.isNegative() || timeout.isZero()) {
            throw new IllegalArgumentException("timeout must be > 0, got " + timeout);
        }
        if (advertisedHost == null || advertisedHost.isBlank()) {
            advertisedHost = bindHost;
        }
        if (lineageBuffer < 1) {
            throw new IllegalArgumentException("the lineage buffer must hold at least 1 event, got " + lineageBuffer);
        }
        platforms = java.util.Set.copyOf(platforms);
        if (platforms.isEmpty() || platforms.stream().anyMatch(String::isBlank)) {
            throw new IllegalArgumentException("a node needs the certificate name(s) of the platform, got " + platforms);
        }
    }

    /** With the default lineage buffer ({@value LineageOutbox#DEFAULT_BOUND} events) and platform ({@value #DEFAULT_PLATFORM}). */
    public NodeOptions(String name, String bindHost, int port, String advertisedHost, Duration heartbeat, Duration timeout) {
        this(name, bindHost, port, advertisedHost, heartbeat, timeout, LineageOutbox.DEFAULT_BOUND,
                java.util.Set.of(DEFAULT_PLATFORM));
    }

    /** Listening on {@code bindHost:port}, reached there, with the default heartbeat and timeout. */
    public static NodeOptions of(String name, String bindHost, int port) {
        return new NodeOptions(name, bindHost, port, bindHost, DEFAULT_HEARTBEAT, DEFAULT_TIMEOUT);
    }

    public NodeOptions withHeartbeat(Duration v) {
        return new NodeOptions(name, bindHost, port, advertisedHost, v, timeout, lineageBuffer, platforms);
    }

    public NodeOptions withLineageBuffer(int events) {
        return new NodeOptions(name, bindHost, port, advertisedHost, heartbeat, timeout, events, platforms);
    }
}
