package dev.pagewarden.core.cluster;

import dev.pagewarden.core.kv.KvLayout;
import dev.pagewarden.core.transfer.KvReceiver;
import dev.pagewarden.core.transfer.net.ClusterTls;
import dev.pagewarden.core.transfer.net.ControlClient;
import dev.pagewarden.core.transfer.net.ControlHandler;
import dev.pagewarden.core.transfer.net.ControlMessage;
import dev.pagewarden.core.transfer.net.ControlPeer;
import dev.pagewarden.core.transfer.net.NetKvServer;

import java.io.IOException;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.function.Supplier;

/**
 * What every engine node runs whatever its role: one listening port for KV pages and control connections,
 * the control peers (accepted and opened) with a status to each every heartbeat, and the node's lifecycle.
 */
final class NodeRuntime implements ControlHandler {
    private static final System.Logger LOG = System.getLogger(NodeRuntime.class.getName());
    private static final long LINEAGE_FLUSH_MS = 20;

    /** A node's life: it serves only between a successful start and its close. */
    sealed interface State {
        record Starting() implements State { }
        record Serving(int port) implements State { }
        record Stopped() implements State { }
    }

    private final NodeOptions options;
    private final ClusterTls tls;
    private final KvLayout layout;
    private final ControlHandler role;
    private final Supplier<ControlMessage.Status> status;
    private final Set<ControlPeer> peers = ConcurrentHashMap.newKeySet();
    private final NetKvServer server;
    private final ControlClient client;
    private final ScheduledExecutorService ticker;
    private final LineageOutbox lineage;
    private volatile State state = new State.Starting();

    NodeRuntime(NodeOptions options, ClusterTls tls, KvLayout layout, ControlHandler role,
                Supplier<ControlMessage.Status> status, LineageOutbox lineage) {
        if (!options.name().equals(tls.name())) {
            throw new IllegalArgumentException("node " + options.name() + " was given the certificate of node " + tls.name()
                    + " (the name must be the CN of its certificate)");
        }
        this.options = options;
        this.tls = tls;
        this.layout = layout;
        this.role = role;
        this.status = status;
        this.lineage = lineage;
        this.server = new NetKvServer(options.name());
        this.client = new ControlClient(tls.clientContext(), options.name(), layout, options.timeout());
        this.ticker = Executors.newSingleThreadScheduledExecutor(Thread.ofPlatform().name("pagewarden-node-" + options.name() + "-", 0).daemon().factory());
    }

    /** Listens (pages go to {@code receiver}; null: this node takes none) and starts the heartbeat; returns the port. */
    synchronized int start(KvReceiver receiver, Runnable everyHeartbeat) throws InterruptedException {
        return switch (state) {
            case State.Starting s -> {
                server.controlHandler(this);
                int port = server.start(options.bindHost(), options.port(), tls.serverContext(), receiver, layout);
                long ms = options.heartbeat().toMillis();
                ticker.scheduleAtFixedRate(() -> heartbeat(everyHeartbeat), ms, ms, TimeUnit.MILLISECONDS);
                // lineage leaves sooner than the heartbeat: the platform's audit should trail the pages by little
                long flush = Math.max(1, Math.min(ms, LINEAGE_FLUSH_MS));
                ticker.scheduleWithFixedDelay(this::flushLineage, flush, flush, TimeUnit.MILLISECONDS);
                state = new State.Serving(port);
                yield port;
            }
            case State.Serving s -> throw new IllegalStateException("node " + options.name() + " already serves on port " + s.port());
            case State.Stopped s -> throw new IllegalStateException("node " + options.name() + " is closed");
        };
    }

    private void flushLineage() {
        try {
            lineage.flush();
        } catch (RuntimeException e) {
            LOG.log(System.Logger.Level.WARNING, "lineage of node " + options.name() + " could not be sent: " + e, e);
        }
    }

    private void heartbeat(Runnable everyHeartbeat) {
        try {
            everyHeartbeat.run();
            ControlMessage.Status now = status.get();
            for (ControlPeer p : peers) {
                p.send(now);
            }
        } catch (RuntimeException e) {
            LOG.log(System.Logger.Level.WARNING, "heartbeat of node " + options.name() + " failed: " + e, e);
        }
    }

    /** The port bound; throws unless serving. */
    int port() {
        return switch (state) {
            case State.Serving s -> s.port();
            case State.Starting s -> throw new IllegalStateException("node " + options.name() + " is not listening yet");
            case State.Stopped s -> throw new IllegalStateException("node " + options.name() + " is closed");
        };
    }

    State state() {
        return state;
    }

    NodeOptions options() {
        return options;
    }

    /** A control connection to the node at {@code host:port}, which must be {@code expectedName} by its certificate. */
    ControlPeer connect(String expectedName, String host, int port) throws IOException, InterruptedException {
        ControlPeer p = client.connect(host, port, this);
        if (!p.name().equals(expectedName)) {
            p.close();
            throw new IOException("the node at " + host + ":" + port + " is " + p.name() + ", not " + expectedName);
        }
        return p;
    }

    @Override
    public void opened(ControlPeer peer) {
        peers.add(peer);
        if (peer.layout() == null && options.platforms().contains(peer.name())) {
            lineage.subscribe(peer); // the platform's client (it holds no pages): it takes this node's lineage
        }
        peer.send(status.get()); // at once: the peer need not wait a heartbeat to see this node
        role.opened(peer);
    }

    @Override
    public void received(ControlPeer from, ControlMessage message) {
        if (message instanceof ControlMessage.LineageAck a) {
            lineage.acknowledged(from, a.upTo());
            return;
        }
        role.received(from, message);
    }

    @Override
    public void closed(ControlPeer peer) {
        peers.remove(peer);
        lineage.unsubscribe(peer);
        role.closed(peer);
    }

    /** Stops listening and closes every control connection; once. */
    synchronized void close() {
        switch (state) {
            case State.Stopped s -> {
                return;
            }
            case State.Starting s -> { }
            case State.Serving s -> {
                ticker.shutdownNow();
                server.close();
                for (ControlPeer p : peers) {
                    p.close();
                }
            }
        }
        state = new State.Stopped();
        ticker.shutdownNow();
        client.close();
    }
}
