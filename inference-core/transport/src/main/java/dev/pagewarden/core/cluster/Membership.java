package dev.pagewarden.core.cluster;

import dev.pagewarden.core.transfer.net.ClusterTls;
import dev.pagewarden.core.transfer.net.ControlClient;
import dev.pagewarden.core.transfer.net.ControlHandler;
import dev.pagewarden.core.transfer.net.ControlMessage;
import dev.pagewarden.core.transfer.net.ControlPeer;

import java.net.UnknownHostException;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.function.Consumer;

/**
 * Which engine nodes the cluster client knows and which are in rotation. It looks the listed names up (again every
 * {@link ClusterOptions#resolveEvery}), keeps a control connection to every address (TLS with the cluster CA,
 * reconnecting with backoff), and a node is in rotation while its STATUS keeps coming; one that misses {@link
 * ClusterOptions#missedHeartbeats} heartbeats or loses its connection is out until its next STATUS. Its connections'
 * other messages go to the requests ({@link RemoteRequests}) and the lineage relay.
 */
final class Membership {
    private static final System.Logger LOG = System.getLogger(Membership.class.getName());

    private final List<NodeAddress> addresses;
    private final ClusterOptions options;
    private final ControlClient client;
    private final NodeAddress.Resolver resolver;
    private final RemoteRequests requests;
    private final LineageRelay lineage;
    private final Map<String, Member> members = new ConcurrentHashMap<>();
    private final ScheduledExecutorService ticker;
    private final ExecutorService connector;
    private volatile long nextResolve;
    /** Per entry, the addresses of its last answered lookup ({@code dns:}), or every one seen so far (a plain host). */
    private final Map<NodeAddress, Set<String>> known = new ConcurrentHashMap<>();
    private final AtomicBoolean resolving = new AtomicBoolean();
    private volatile Consumer<String> nodeJoined = n -> { };
    private volatile boolean closed;

    Membership(List<NodeAddress> addresses, ClusterTls tls, ClusterOptions options, NodeAddress.Resolver resolver,
               RemoteRequests requests, LineageRelay lineage) {
        if (!tls.name().equals(options.clientName())) {
            throw new IllegalArgumentException("the cluster client's certificate is for " + tls.name() + ", not "
                    + options.clientName());
        }
        this.addresses = List.copyOf(addresses);
        this.options = options;
        this.resolver = Objects.requireNonNull(resolver, "resolver");
        this.requests = requests;
        this.lineage = lineage;
        this.client = new ControlClient(tls.clientContext(), options.clientName(), null, options.timeout());
        this.ticker = Executors.newSingleThreadScheduledExecutor(Thread.ofPlatform().name("pagewarden-cluster" + "-", 0).daemon().factory());
        this.connector = Executors.newCachedThreadPool(Thread.ofPlatform().name("pagewarden-cluster-connect" + "-", 0).daemon().factory());
    }

    /** Looks the names up once, then keeps checking heartbeats and reconnecting. */
    void start() {
        resolving.set(true);
        resolve();
        long ms = Math.max(10, options.heartbeat().toMillis() / 2);
        ticker.scheduleWithFixedDelay(this::tick, 0, ms, TimeUnit.MILLISECONDS);
    }

    void onNodeJoined(Consumer<String> joined) {
        this.nodeJoined = Objects.requireNonNull(joined);
    }

    List<NodeAddress> addresses() {
        return addresses;
    }

    /** The nodes in rotation now. */
    ClusterView view() {
        return ClusterView.of(members.values(), options.heartbeat().toNanos() * options.missedHeartbeats());
    }

    /** Every member's key (role@address). */
    Set<String> keys() {
        return members.keySet();
    }

    /** Counts {@code pages} as taken on the node of {@code l} (until its next STATUS reports them). */
    void take(ClusterView.Live l, long pages) {
        Member m = l.member();
        synchronized (m) {
            if (m.state instanceof Member.State.Connected c && c.peer() == l.peer()) {
                m.state = new Member.State.Connected(c.peer(), c.status(), c.seen(), c.taken() + pages);
            }
        }
    }

    /** Stops looking up, checking and reconnecting; connections stay open until {@link #disconnect}. */
    void stop() {
        closed = true;
        ticker.shutdownNow();
        connector.shutdownNow();
        try {
            ticker.awaitTermination(5, TimeUnit.SECONDS);
            connector.awaitTermination(options.timeout().toMillis() + 1000, TimeUnit.MILLISECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    void disconnect() {
        for (Member m : members.values()) {
            if (m.state instanceof Member.State.Connected c) {
                c.peer().close();
            }
        }
        client.close();
    }

    /**
     * Looks every name up again (all at once, each within the options' timeout) and makes the members what the
     * answers say. A lookup that fails or does not answer in time keeps that entry's last known addresses: a DNS
     * outage takes no node out of rotation.
     */
    private void resolve() {
        try {
            Map<NodeAddress, CompletableFuture<List<String>>> lookups = new LinkedHashMap<>();
            for (NodeAddress a : addresses) {
                lookups.put(a, CompletableFuture.supplyAsync(() -> {
                    try {
                        return resolver.addresses(a.host());
                    } catch (UnknownHostException e) {
                        throw new CompletionException(e);
                    }
                }, connector));
            }
            long deadline = System.nanoTime() + options.timeout().toNanos();
            for (Map.Entry<NodeAddress, CompletableFuture<List<String>>> e : lookups.entrySet()) {
                NodeAddress a = e.getKey();
                String again = "; looking up again in " + options.resolveEvery().toMillis() + " ms";
                try {
                    List<String> ips = e.getValue().get(Math.max(0, deadline - System.nanoTime()), TimeUnit.NANOSECONDS);
                    known.compute(a, (k, was) -> {
                        Set<String> now = new LinkedHashSet<>(a.dns() || was == null ? List.of() : was);
                        now.addAll(ips);
                        return now;
                    });
                } catch (TimeoutException x) {
                    e.getValue().cancel(true);
                    LOG.log(System.Logger.Level.WARNING, "engine node " + a + ": looking up " + a.host() + " took over "
                            + options.timeout().toMillis() + " ms; its known addresses stay" + again);
                } catch (ExecutionException x) {
                    LOG.log(System.Logger.Level.WARNING, "engine node " + a + ": host " + a.host() + " does not resolve ("
                            + x.getCause().getMessage() + "); its known addresses stay" + again);
                }
            }
            Set<String> wanted = new HashSet<>();
            for (NodeAddress a : addresses) {
                for (String ip : known.getOrDefault(a, Set.of())) {
                    Member m = members.computeIfAbsent(a.role().label() + "@" + ip + ":" + a.port(),
                            k -> new Member(a.role(), ip, a.port()));
                    wanted.add(m.where());
                    if (m.leaving) {
                        m.leaving = false;
                        LOG.log(System.Logger.Level.INFO, "engine node " + m.where() + " is listed again");
                    }
                }
            }
            for (Member m : members.values()) {
                if (!wanted.contains(m.where()) && !m.leaving) {
                    m.leaving = true;
                    LOG.log(System.Logger.Level.INFO, "engine node " + m.where() + " is no longer listed: out of rotation, "
                            + "dropped once its requests and lineage are done");
                }
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        } catch (RuntimeException e) {
            LOG.log(System.Logger.Level.WARNING, "resolving engine nodes failed: " + e, e);
        } finally {
            nextResolve = System.nanoTime() + options.resolveEvery().toNanos();
            resolving.set(false);
        }
    }

    /** A leaving member: its connection closed and itself dropped once no request and no lineage waits on it. */
    private void retire(Member m) {
        switch (m.state) {
            case Member.State.Connecting c -> { } // its attempt ends first
            case Member.State.Down d -> members.remove(m.where(), m);
            case Member.State.Connected c -> {
                boolean busy = requests.serving(m)
                        || c.status() != null && c.status().lineageBacklog() > 0 && c.peer().isOpen();
                if (!busy) {
                    members.remove(m.where(), m);
                    c.peer().close();
                }
            }
        }
    }

    private void tick() {
        if (closed) {
            return;
        }
        try {
            long now = System.nanoTime();
            if (now - nextResolve >= 0 && resolving.compareAndSet(false, true)) {
                try {
                    connector.execute(this::resolve); // off the ticker: a slow lookup holds up no heartbeat check
                } catch (RejectedExecutionException e) {
                    return; // closing
                }
            }
            long stale = options.heartbeat().toNanos() * options.missedHeartbeats();
            for (Member m : members.values()) {
                if (m.leaving) {
                    retire(m);
                    if (!(m.state instanceof Member.State.Connected)) {
                        continue; // not reconnected: it is dropped, or its attempt is still under way
                    }
                }
                switch (m.state) {
                    case Member.State.Down d -> {
                        if (now - d.retryAt() >= 0 && !closed) {
                            m.state = new Member.State.Connecting(d.failures());
                            try {
                                connector.execute(() -> open(m, d.failures()));
                            } catch (RejectedExecutionException e) {
                                return; // closing
                            }
                        }
                    }
                    case Member.State.Connecting c -> { }
                    case Member.State.Connected c -> {
                        if (now - c.seen() > stale && !m.outOfRotation) {
                            m.outOfRotation = true; // view() leaves it out; its next STATUS brings it back
                            LOG.log(System.Logger.Level.WARNING, "engine node " + c.peer().name() + " (" + m.where()
                                    + ") missed " + options.missedHeartbeats() + " heartbeats; out of rotation");
                        }
                        if (now - c.seen() > Math.max(stale, options.timeout().toNanos())) {
                            // silent past the network timeout too: taken for gone, so that its requests fail
                            // (in closed()) rather than wait on a connection that delivers nothing
                            c.peer().close();
                        }
                    }
                }
            }
        } catch (RuntimeException e) {
            LOG.log(System.Logger.Level.WARNING, "cluster client tick failed: " + e, e);
        }
    }

    private void open(Member m, int failures) {
        if (closed) {
            return;
        }
        try {
            ControlPeer peer = client.connect(m.host, m.port, new Handler(m));
            // the hello came; the node counts once its first STATUS does
            synchronized (m) {
                if (m.state instanceof Member.State.Connecting) {
                    m.state = new Member.State.Connected(peer, null, System.nanoTime(), 0);
                }
            }
        } catch (Exception e) {
            if (e instanceof InterruptedException) {
                Thread.currentThread().interrupt();
            }
            if (closed) {
                return;
            }
            long backoff = Math.min(options.maxBackoff().toNanos(), options.heartbeat().toNanos() << Math.min(failures, 20));
            if (failures == 0) {
                LOG.log(System.Logger.Level.WARNING, "engine node " + m.where() + " cannot be reached: " + e.getMessage());
            }
            m.state = new Member.State.Down(e.getMessage(), System.nanoTime() + backoff, failures + 1);
        }
    }

    /** Messages of one node's control connection. */
    private final class Handler implements ControlHandler {
        private final Member member;

        Handler(Member member) {
            this.member = member;
        }

        @Override
        public void received(ControlPeer from, ControlMessage message) {
            switch (message) {
                case ControlMessage.Status s -> status(member, from, s);
                case ControlMessage.Token t -> requests.token(from, t);
                case ControlMessage.Finished f -> requests.finished(from, f);
                case ControlMessage.Failed f -> requests.failed(from, f);
                case ControlMessage.Submit s -> unexpected(from, s);
                case ControlMessage.Prefill p -> unexpected(from, p);
                case ControlMessage.Prefilled p -> unexpected(from, p);
                case ControlMessage.PrefillFailed p -> unexpected(from, p);
                case ControlMessage.Abort a -> unexpected(from, a);
                case ControlMessage.Stop s -> unexpected(from, s);
                case ControlMessage.Lineage l -> lineage.relay(from, l);
                case ControlMessage.LineageAck a -> unexpected(from, a);
            }
        }

        @Override
        public void closed(ControlPeer peer) {
            synchronized (member) {
                if (member.state instanceof Member.State.Connected c && c.peer() == peer) {
                    member.state = new Member.State.Down("connection closed", System.nanoTime() + options.heartbeat().toNanos(), 0);
                }
            }
            requests.lost(member, peer);
        }
    }

    private static void unexpected(ControlPeer from, ControlMessage m) {
        LOG.log(System.Logger.Level.WARNING, "engine node " + from + " sent " + m.getClass().getSimpleName() + "; ignored");
    }

    private void status(Member m, ControlPeer from, ControlMessage.Status s) {
        if (!s.role().equals(m.role.label()) || !s.node().equals(from.name())) {
            LOG.log(System.Logger.Level.WARNING, "engine node at " + m.where() + " reports itself as " + s.role() + " node "
                    + s.node() + " (certificate " + from.name() + "); not used");
            from.close();
            return;
        }
        synchronized (m) {
            Member.State st = m.state;
            if (m.outOfRotation) {
                m.outOfRotation = false;
                LOG.log(System.Logger.Level.INFO, "engine node " + s.node() + " (" + m.where() + ") back in rotation");
            }
            boolean joined = false;
            if (st instanceof Member.State.Connected c && c.peer() == from) {
                if (c.status() == null) {
                    LOG.log(System.Logger.Level.INFO, "engine node " + s.node() + " (" + m.where() + ") in rotation");
                    joined = true;
                }
                m.state = new Member.State.Connected(from, s, System.nanoTime(), 0);
            } else if (st instanceof Member.State.Connecting) {
                m.state = new Member.State.Connected(from, s, System.nanoTime(), 0);
                joined = true;
            }
            if (joined) {
                try {
                    nodeJoined.accept(s.node());
                } catch (RuntimeException e) {
                    LOG.log(System.Logger.Level.WARNING, "node listener failed for " + s.node() + ": " + e, e);
                }
            }
        }
    }
}
