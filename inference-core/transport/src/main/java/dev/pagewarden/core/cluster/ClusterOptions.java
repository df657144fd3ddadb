package dev.pagewarden.core.cluster;

import java.time.Duration;

/**
 * How the platform's cluster client watches and reaches its engine nodes.
 *
 * @param clientName      the name of the platform's certificate (the CN the nodes see)
 * @param heartbeat       the nodes' heartbeat; a node silent for {@code missedHeartbeats} of them is out of rotation
 * @param missedHeartbeats heartbeats a node may miss before it is taken out of rotation (and its connection closed)
 * @param timeout         connect, TLS handshake and hello, each
 * @param maxBackoff      the longest wait between two connection attempts to a node that is down (doubling from the heartbeat)
 * @param resolveEvery    how often host names are resolved again (new addresses become new nodes)
 * @param requestIdBase   request ids are base+1, base+2, ... (see the engine's config)
 * @param requestIdKey    non-zero: ids within the block permuted by this key (see the engine's config)
 */
public record ClusterOptions(String clientName, Duration heartbeat, int missedHeartbeats, Duration timeout,
                             Duration maxBackoff, Duration resolveEvery, long requestIdBase, long requestIdKey) {

    public ClusterOptions {
        if (clientName == null || clientName.isBlank()) {
            throw new IllegalArgumentException("the cluster client needs its certificate's name");
        }
        if (heartbeat.isNegative() || heartbeat.isZero()) {
            throw new IllegalArgumentException("heartbeat must be > 0, got " + heartbeat);
        }
        if (missedHeartbeats < 1) {
            throw new IllegalArgumentException("missed heartbeats must be >= 1, got " + missedHeartbeats);
        }
        if (timeout.isNegative() || timeout.isZero() || maxBackoff.isNegative() || resolveEvery.isNegative()
                || resolveEvery.isZero()) {
            throw new IllegalArgumentException("timeout, backoff and resolve interval must be > 0");
        }
        if (requestIdBase < 0) {
            throw new IllegalArgumentException("request id base must be >= 0, got " + requestIdBase);
        }
    }

    /**
     * Heartbeat 500 ms, three missed, 10 s timeouts, backoff up to 10 s, names resolved every 10 s, and request
     * ids from a random block of 2^32 per client start: nodes key requests by id, so two clients sharing nodes
     * must not count from the same base (an application with its own id blocks sets {@code requestIdBase}).
     */
    public static ClusterOptions defaults(String clientName) {
        long block = 1 + new java.security.SecureRandom().nextInt(1 << 24);
        return new ClusterOptions(clientName, NodeOptions.DEFAULT_HEARTBEAT, 3, NodeOptions.DEFAULT_TIMEOUT,
                Duration.ofSeconds(10), Duration.ofSeconds(10), block << 32, 0);
    }

    public ClusterOptions withHeartbeat(Duration v) {
        return new ClusterOptions(clientName, v, missedHeartbeats, timeout, maxBackoff, resolveEvery, requestIdBase,
                requestIdKey);
    }

    public ClusterOptions withMaxBackoff(Duration v) {
        return new ClusterOptions(clientName, heartbeat, missedHeartbeats, timeout, v, resolveEvery, requestIdBase,
                requestIdKey);
    }

    public ClusterOptions withTimeout(Duration v) {
        return new ClusterOptions(clientName, heartbeat, missedHeartbeats, v, maxBackoff, resolveEvery, requestIdBase,
                requestIdKey);
    }

    public ClusterOptions withResolveEvery(Duration v) {
        return new ClusterOptions(clientName, heartbeat, missedHeartbeats, timeout, maxBackoff, v, requestIdBase,
                requestIdKey);
    }
}
