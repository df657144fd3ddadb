package dev.pagewarden.core.cluster;

import dev.pagewarden.core.admission.Admission;
import dev.pagewarden.core.engine.InferenceEngine;
import dev.pagewarden.core.engine.PoolStats;
import dev.pagewarden.core.engine.RequestIdSource;
import dev.pagewarden.core.kv.KvLayout;
import dev.pagewarden.core.lineage.LineageEvent;
import dev.pagewarden.core.lineage.LineageSink;
import dev.pagewarden.core.model.ModelConfig;
import dev.pagewarden.core.receipt.Receipt;
import dev.pagewarden.core.receipt.ReceiptIssuer;
import dev.pagewarden.core.receipt.ReceiptSigner;
import dev.pagewarden.core.receipt.ServingIdentity;
import dev.pagewarden.core.request.FinishReason;
import dev.pagewarden.core.request.GenerationRequest;
import dev.pagewarden.core.request.GenerationResult;
import dev.pagewarden.core.request.RequestAbortedException;
import dev.pagewarden.core.request.RequestFailedException;
import dev.pagewarden.core.request.RequestHandle;
import dev.pagewarden.core.request.RequestState;
import dev.pagewarden.core.sequence.Sequence;
import dev.pagewarden.core.request.TokenListener;
import dev.pagewarden.core.sampling.SamplingParams;
import dev.pagewarden.core.transfer.net.ClusterTls;
import dev.pagewarden.core.transfer.net.ControlClient;
import dev.pagewarden.core.transfer.net.ControlHandler;
import dev.pagewarden.core.transfer.net.ControlMessage;
import dev.pagewarden.core.transfer.net.ControlPeer;

import java.net.UnknownHostException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;

/**
 * The platform's engine when prefill and decode run on engine nodes of their own ({@link PrefillNode},
 * {@link DecodeNode}). It keeps a control connection to every node (TLS with the cluster CA, reconnecting
 * with backoff) and a node is in rotation while its STATUS keeps coming; one that misses
 * {@link ClusterOptions#missedHeartbeats} heartbeats or loses its connection is out until its next STATUS.
 *
 * <p>{@link #submit} validates against what the nodes report (vocabulary, window; every node must serve the
 * same model with the same KV layout, or nothing is routed), picks the live decode node with the most free
 * pages that can hold prompt + max new tokens and the live prefill node with the most free pages that can
 * hold the prompt (none: rejected, {@code overloaded}), and sends SUBMIT to that decode node. Its results
 * complete exactly as the local engine's do: same exception types and codes. A decode node lost while it
 * serves a request fails that request with {@value #NODE_LOST}. With a {@link ReceiptSigner}, a finished
 * request's result carries an isolation receipt as the local engine's does: the decode node reports the page
 * epochs its decode read (FINISHED), and this client signs them with the tokens it streamed, naming the decode
 * node as {@code node_id} (the owner of those pages, as its lineage says) and this client's start as the
 * replica. Nodes hold no signing key.
 *
 * <p>Each node's page life steps (LINEAGE) go into the client's {@link LineageSink} - the platform's journal - and
 * are acknowledged once it has taken them; a batch with an event that names another node than the certificate of
 * the connection it came on is refused whole and that connection closed (a node writes only its own lineage).
 * While the sink is not accepting, requests are rejected with {@code audit_backpressure}; a node whose own
 * backlog of unacknowledged steps is at its bound gets no request.
 */
public final class ClusterEngine implements InferenceEngine {
    private static final System.Logger LOG = System.getLogger(ClusterEngine.class.getName());
    /** The code of a request whose decode node went away (connection lost or heartbeats missed) while serving it. */
    public static final String NODE_LOST = "engine_node_lost";

    private final List<NodeAddress> addresses;
    private final ClusterOptions options;
    private final ControlClient client;
    private final RequestIdSource ids;
    private final LineageSink lineage;
    /** Null: results carry no receipt. */
    private final ReceiptSigner signer;
    /** This client's start, as receipts name the replica. */
    private final String replicaId = ServingIdentity.randomReplicaId();
    private final Map<String, Member> members = new ConcurrentHashMap<>();
    private final Map<Long, Pending> requests = new ConcurrentHashMap<>();
    private final ScheduledExecutorService ticker;
    private final ExecutorService connector;
    private volatile long nextResolve;
    private final NodeAddress.Resolver resolver;
    /** Per entry, the addresses of its last answered lookup ({@code dns:}), or every one seen so far (a plain host). */
    private final Map<NodeAddress, java.util.Set<String>> known = new ConcurrentHashMap<>();
    private final java.util.concurrent.atomic.AtomicBoolean resolving = new java.util.concurrent.atomic.AtomicBoolean();
    private volatile java.util.function.Consumer<String> nodeJoined = n -> { };
    private volatile boolean closed;

    /** One node at one address, and where the client stands with it. */
    private final class Member {
        final NodeRole role;
        final String host;
        final int port;
        volatile MemberState state = new MemberState.Down("not connected yet", 0, 0);
        /** Whether it was announced out of rotation for missed heartbeats (to say so once, and when it is back). */
        volatile boolean outOfRotation;
        /** Its address is no longer among its name's: out of rotation, dropped once its requests and lineage are done. */
        volatile boolean leaving;

        Member(NodeRole role, String host, int port) {
            this.role = role;
            this.host = host;
            this.port = port;
        }

        String where() {
            return role.label() + "@" + host + ":" + port;
        }
    }

    /** The client's view of one node, exhaustively. */
    sealed interface MemberState {
        /** No connection; the next attempt is due at {@code retryAt} (nanoTime). */
        record Down(String reason, long retryAt, int failures) implements MemberState { }

        /** An attempt is under way. */
        record Connecting(int failures) implements MemberState { }

        /**
         * Connected; {@code status} is the last STATUS (null until the first), {@code seen} when it came, {@code
         * taken} the pages this client has routed there since (so a burst spreads before the next STATUS).
         */
        record Connected(ControlPeer peer, ControlMessage.Status status, long seen, long taken) implements MemberState { }
    }

    /** A request submitted to a decode node, which serves {@code modelId}. */
    private record Pending(Sequence seq, Member decode, ControlPeer peer, String modelId) {
    }

    private ClusterEngine(List<NodeAddress> addresses, ClusterTls tls, ClusterOptions options, LineageSink lineage,
                          ReceiptSigner signer, NodeAddress.Resolver resolver) {
        if (!tls.name().equals(options.clientName())) {
            throw new IllegalArgumentException("the cluster client's certificate is for " + tls.name() + ", not "
                    + options.clientName());
        }
        this.addresses = List.copyOf(addresses);
        this.lineage = java.util.Objects.requireNonNull(lineage, "lineage");
        this.signer = signer;
        this.resolver = java.util.Objects.requireNonNull(resolver, "resolver");
        this.options = options;
        this.client = new ControlClient(tls.clientContext(), options.clientName(), null, options.timeout());
        this.ids = new RequestIdSource(options.requestIdBase(), options.requestIdKey());
        this.ticker = Executors.newSingleThreadScheduledExecutor(Thread.ofPlatform().name("pagewarden-cluster" + "-", 0).daemon().factory());
        this.connector = Executors.newCachedThreadPool(Thread.ofPlatform().name("pagewarden-cluster-connect" + "-", 0).daemon().factory());
    }

    /**
     * Starts watching {@code nodes} (see {@link NodeAddress#parseList}) with the platform's certificate in
     * {@code tls}; returns at once. {@link #awaitReady} waits until a prefill and a decode node are live.
     */
    public static ClusterEngine connect(List<NodeAddress> nodes, ClusterTls tls, ClusterOptions options) {
        return connect(nodes, tls, options, LineageSink.NONE, null);
    }

    /**
     * {@link #connect(List, ClusterTls, ClusterOptions)}, the nodes' page life steps going to {@code lineage} and
     * finished requests' receipts signed by {@code receipts} (null: no receipts).
     */
    public static ClusterEngine connect(List<NodeAddress> nodes, ClusterTls tls, ClusterOptions options,
                                        LineageSink lineage, ReceiptSigner receipts) {
        return connect(nodes, tls, options, lineage, receipts, NodeAddress.Resolver.SYSTEM);
    }

    /** {@link #connect(List, ClusterTls, ClusterOptions, LineageSink, ReceiptSigner)} resolving names with {@code resolver}. */
    static ClusterEngine connect(List<NodeAddress> nodes, ClusterTls tls, ClusterOptions options, LineageSink lineage,
                                 ReceiptSigner receipts, NodeAddress.Resolver resolver) {
        if (nodes.isEmpty()) {
            throw new IllegalArgumentException("no engine nodes given");
        }
        ClusterEngine c = new ClusterEngine(nodes, tls, options, lineage, receipts, resolver);
        c.resolving.set(true);
        c.resolve();
        long ms = Math.max(10, options.heartbeat().toMillis() / 2);
        c.ticker.scheduleWithFixedDelay(c::tick, 0, ms, TimeUnit.MILLISECONDS);
        return c;
    }

    /**
     * {@link #connect(List, ClusterTls, ClusterOptions)} with the platform's certificate from a {@code pki} folder
     * ({@code ca.crt}, {@code NAME.crt}, {@code NAME.key} for the options' client name).
     */
    public static ClusterEngine connect(List<NodeAddress> nodes, java.nio.file.Path pki, ClusterOptions options,
                                        LineageSink lineage, ReceiptSigner receipts) throws java.io.IOException {
        return connect(nodes, ClusterTls.load(pki, options.clientName()), options, lineage, receipts);
    }

    /** Waits up to {@code timeout} until at least one prefill and one decode node are live; returns whether they are. */
    public boolean awaitReady(Duration timeout) throws InterruptedException {
        long deadline = System.nanoTime() + timeout.toNanos();
        while (true) {
            View v = view();
            if (!v.live(NodeRole.PREFILL).isEmpty() && !v.live(NodeRole.DECODE).isEmpty()) {
                return true;
            }
            if (System.nanoTime() - deadline >= 0) {
                return false;
            }
            Thread.sleep(Math.min(20, options.heartbeat().toMillis()));
        }
    }

    /**
     * What one node in rotation last reported: its pool, its queue, its page transfers under way and its page
     * life steps the platform has not acknowledged yet ({@code lineageAccepting} false: it admits no request).
     */
    public record NodeReport(String node, NodeRole role, PoolStats pool, int queued, int transfersInFlight,
                             int lineageBacklog, boolean lineageAccepting) {
    }

    /**
     * Calls {@code joined} with a node's name each time a connection to it brings its first STATUS (so once per
     * node and reconnect; the nodes already in rotation are not replayed: see {@link #nodes()}).
     */
    public void onNodeJoined(java.util.function.Consumer<String> joined) {
        this.nodeJoined = java.util.Objects.requireNonNull(joined);
    }

    /** Every node in rotation, as it last reported, prefill nodes first. */
    public List<NodeReport> nodes() {
        List<NodeReport> out = new ArrayList<>();
        View v = view();
        for (NodeRole r : List.of(NodeRole.PREFILL, NodeRole.DECODE)) {
            for (Live l : v.live(r)) {
                ControlMessage.Status s = l.status;
                out.add(new NodeReport(s.node(), r, stats(s.pool()), s.queued(), s.transfersInFlight(), s.lineageBacklog(),
                        s.lineageAccepting()));
            }
        }
        return out;
    }

    private static PoolStats stats(ControlMessage.Pool p) {
        return new PoolStats(p.name(), p.pageTokens(), p.capacityPages(), p.capacityTokens(), p.peakUsedPages(),
                p.pagesByState());
    }

    /** Nodes in rotation now: role, name, address. */
    public List<String> liveNodes() {
        List<String> out = new ArrayList<>();
        for (Map.Entry<NodeRole, List<Live>> e : view().byRole.entrySet()) {
            for (Live l : e.getValue()) {
                out.add(l.status.node() + " (" + l.member.where() + ")");
            }
        }
        return out;
    }

    // ---- membership ----

    /**
     * Looks every name up again (all at once, each within the options' timeout) and makes the members what the
     * answers say. A lookup that fails or does not answer in time keeps that entry's last known addresses: a DNS
     * outage takes no node out of rotation.
     */
    private void resolve() {
        try {
            Map<NodeAddress, java.util.concurrent.CompletableFuture<List<String>>> lookups = new LinkedHashMap<>();
            for (NodeAddress a : addresses) {
                lookups.put(a, java.util.concurrent.CompletableFuture.supplyAsync(() -> {
                    try {
                        return resolver.addresses(a.host());
                    } catch (UnknownHostException e) {
                        throw new java.util.concurrent.CompletionException(e);
                    }
                }, connector));
            }
            long deadline = System.nanoTime() + options.timeout().toNanos();
            for (Map.Entry<NodeAddress, java.util.concurrent.CompletableFuture<List<String>>> e : lookups.entrySet()) {
                NodeAddress a = e.getKey();
                String again = "; looking up again in " + options.resolveEvery().toMillis() + " ms";
                try {
                    List<String> ips = e.getValue().get(Math.max(0, deadline - System.nanoTime()), TimeUnit.NANOSECONDS);
                    known.compute(a, (k, was) -> {
                        java.util.Set<String> now = new java.util.LinkedHashSet<>(a.dns() || was == null ? List.of() : was);
                        now.addAll(ips);
                        return now;
                    });
                } catch (java.util.concurrent.TimeoutException x) {
                    e.getValue().cancel(true);
                    LOG.log(System.Logger.Level.WARNING, "engine node " + a + ": looking up " + a.host() + " took over "
                            + options.timeout().toMillis() + " ms; its known addresses stay" + again);
                } catch (java.util.concurrent.ExecutionException x) {
                    LOG.log(System.Logger.Level.WARNING, "engine node " + a + ": host " + a.host() + " does not resolve ("
                            + x.getCause().getMessage() + "); its known addresses stay" + again);
                }
            }
            java.util.Set<String> wanted = new java.util.HashSet<>();
            for (NodeAddress a : addresses) {
                for (String ip : known.getOrDefault(a, java.util.Set.of())) {
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
            case MemberState.Connecting c -> { } // its attempt ends first
            case MemberState.Down d -> members.remove(m.where(), m);
            case MemberState.Connected c -> {
                boolean busy = requests.values().stream().anyMatch(p -> p.decode() == m)
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
                } catch (java.util.concurrent.RejectedExecutionException e) {
                    return; // closing
                }
            }
            long stale = options.heartbeat().toNanos() * options.missedHeartbeats();
            for (Member m : members.values()) {
                if (m.leaving) {
                    retire(m);
                    if (!(m.state instanceof MemberState.Connected)) {
                        continue; // not reconnected: it is dropped, or its attempt is still under way
                    }
                }
                switch (m.state) {
                    case MemberState.Down d -> {
                        if (now - d.retryAt() >= 0 && !closed) {
                            m.state = new MemberState.Connecting(d.failures());
                            try {
                                connector.execute(() -> open(m, d.failures()));
                            } catch (java.util.concurrent.RejectedExecutionException e) {
                                return; // closing
                            }
                        }
                    }
                    case MemberState.Connecting c -> { }
                    case MemberState.Connected c -> {
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
                if (m.state instanceof MemberState.Connecting) {
                    m.state = new MemberState.Connected(peer, null, System.nanoTime(), 0);
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
            m.state = new MemberState.Down(e.getMessage(), System.nanoTime() + backoff, failures + 1);
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
                case ControlMessage.Token t -> token(from, t);
                case ControlMessage.Finished f -> finished(from, f);
                case ControlMessage.Failed f -> failed(from, f);
                case ControlMessage.Submit s -> unexpected(from, s);
                case ControlMessage.Prefill p -> unexpected(from, p);
                case ControlMessage.Prefilled p -> unexpected(from, p);
                case ControlMessage.PrefillFailed p -> unexpected(from, p);
                case ControlMessage.Abort a -> unexpected(from, a);
                case ControlMessage.Stop s -> unexpected(from, s);
                case ControlMessage.Lineage l -> lineage(from, l);
                case ControlMessage.LineageAck a -> unexpected(from, a);
            }
        }

        @Override
        public void closed(ControlPeer peer) {
            synchronized (member) {
                if (member.state instanceof MemberState.Connected c && c.peer() == peer) {
                    member.state = new MemberState.Down("connection closed", System.nanoTime() + options.heartbeat().toNanos(), 0);
                }
            }
            for (Pending p : requests.values()) {
                if (p.peer() == peer) {
                    end(p, new RequestFailedException(NODE_LOST, "request " + p.seq().id() + ": decode node " + peer.name()
                            + " (" + member.where() + ") was lost while serving it"), null);
                }
            }
        }
    }

    private void unexpected(ControlPeer from, ControlMessage m) {
        LOG.log(System.Logger.Level.WARNING, "engine node " + from + " sent " + m.getClass().getSimpleName() + "; ignored");
    }

    /** A node's page life steps: into the sink, then acknowledged; refused whole if one names another node. */
    private void lineage(ControlPeer from, ControlMessage.Lineage l) {
        for (LineageEvent e : l.events()) {
            if (!e.node().equals(from.name())) {
                LOG.log(System.Logger.Level.ERROR, "engine node " + from + " sent lineage event " + e.id() + " naming node "
                        + e.node() + "; a node writes only its own lineage: batch refused, connection closed");
                from.close();
                return;
            }
        }
        for (LineageEvent e : l.events()) {
            lineage.emit(e);
        }
        if (!l.events().isEmpty()) {
            from.send(new ControlMessage.LineageAck(l.firstSeq() + l.events().size() - 1));
        }
    }

    private void status(Member m, ControlPeer from, ControlMessage.Status s) {
        if (!s.role().equals(m.role.label()) || !s.node().equals(from.name())) {
            LOG.log(System.Logger.Level.WARNING, "engine node at " + m.where() + " reports itself as " + s.role() + " node "
                    + s.node() + " (certificate " + from.name() + "); not used");
            from.close();
            return;
        }
        synchronized (m) {
            MemberState st = m.state;
            if (m.outOfRotation) {
                m.outOfRotation = false;
                LOG.log(System.Logger.Level.INFO, "engine node " + s.node() + " (" + m.where() + ") back in rotation");
            }
            boolean joined = false;
            if (st instanceof MemberState.Connected c && c.peer() == from) {
                if (c.status() == null) {
                    LOG.log(System.Logger.Level.INFO, "engine node " + s.node() + " (" + m.where() + ") in rotation");
                    joined = true;
                }
                m.state = new MemberState.Connected(from, s, System.nanoTime(), 0);
            } else if (st instanceof MemberState.Connecting) {
                m.state = new MemberState.Connected(from, s, System.nanoTime(), 0);
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

    // ---- the view of the cluster a request is routed by ----

    private record Live(Member member, ControlPeer peer, ControlMessage.Status status, long taken) {
        long free() {
            return status.pool().freePages() - taken;
        }
    }

    /** The live nodes by role, and why nothing may be routed (null: routing is fine). */
    private record View(Map<NodeRole, List<Live>> byRole, String problem) {
        List<Live> live(NodeRole r) {
            return byRole.getOrDefault(r, List.of());
        }

        ControlMessage.Status any() {
            for (List<Live> l : byRole.values()) {
                if (!l.isEmpty()) {
                    return l.getFirst().status();
                }
            }
            return null;
        }
    }

    private View view() {
        long now = System.nanoTime();
        long stale = options.heartbeat().toNanos() * options.missedHeartbeats();
        Map<NodeRole, List<Live>> byRole = new TreeMap<>();
        for (NodeRole r : NodeRole.values()) {
            byRole.put(r, new ArrayList<>());
        }
        for (Member m : members.values()) {
            if (!m.leaving && m.state instanceof MemberState.Connected c && c.status() != null && now - c.seen() <= stale
                    && c.peer().isOpen()) {
                byRole.get(m.role).add(new Live(m, c.peer(), c.status(), c.taken()));
            }
        }
        String problem = null;
        ControlMessage.Status first = null;
        for (List<Live> l : byRole.values()) {
            for (Live x : l) {
                if (first == null) {
                    first = x.status;
                } else if (!first.modelId().equals(x.status.modelId()) || !first.layout().equals(x.status.layout())
                        || first.model().vocabSize() != x.status.model().vocabSize()) {
                    problem = "engine nodes disagree: " + first.node() + " serves " + first.modelId() + " with pages of "
                            + first.layout() + ", " + x.status.node() + " serves " + x.status.modelId() + " with pages of "
                            + x.status.layout() + "; no request is routed until every node serves the same model";
                }
            }
        }
        return new View(byRole, problem);
    }

    /** The window of the cluster: what the best decode node and the best prefill node both accept. */
    private static int window(View v) {
        int decode = v.live(NodeRole.DECODE).stream().mapToInt(l -> l.status.contextWindow()).max().orElse(0);
        int prefill = v.live(NodeRole.PREFILL).stream().mapToInt(l -> l.status.contextWindow()).max().orElse(0);
        return Math.min(decode, prefill);
    }

    // ---- requests ----

    @Override
    public RequestHandle submit(GenerationRequest request, TokenListener listener) {
        View v = view();
        ControlMessage.Status any = v.any();
        if (any != null && v.problem() == null) {
            Admission.validate(request, any.model().vocabSize(), window(v));
        }
        Sequence seq = new Sequence(ids.next(), request, listener, System.nanoTime());
        RequestHandle handle = new RequestHandle(seq);
        if (closed) {
            seq.reject("overloaded", "the cluster client is closed");
            return handle;
        }
        if (v.problem() != null) {
            seq.reject("engine_misconfigured", v.problem());
            return handle;
        }
        if (!lineage.accepting()) {
            // fail closed as the engine's admission does: no page life step of the nodes may go unrecorded
            seq.reject("audit_backpressure", "the audit journal is at its capacity; retry later");
            return handle;
        }
        int window = window(v);
        long need = (long) request.promptLength() + request.maxNewTokens();
        if (any != null && need > window) {
            seq.reject("context_length_exceeded", "this model's maximum context length is " + window + " tokens, but the "
                    + "request needs " + need + " (" + request.promptLength() + " in the prompt + " + request.maxNewTokens()
                    + " max new tokens)");
            return handle;
        }
        Live decode;
        Live prefill;
        synchronized (this) { // one routing decision at a time, each seeing the pages the last one took
            View now = view();
            decode = pick(now.live(NodeRole.DECODE), request, true);
            prefill = pick(now.live(NodeRole.PREFILL), request, false);
            NodeRole missing = decode == null ? NodeRole.DECODE : NodeRole.PREFILL;
            if ((decode == null || prefill == null) && !now.live(missing).isEmpty()
                    && now.live(missing).stream().noneMatch(l -> l.status.lineageAccepting())) {
                // fail closed: every such node holds as many unacknowledged page life steps as it may
                seq.reject("audit_backpressure", "every live " + missing.label() + " node's lineage backlog is at its "
                        + "bound; retry later");
                return handle;
            }
            if (decode == null || prefill == null) {
                seq.reject("overloaded", "no live " + (decode == null ? "decode" : "prefill") + " node has room for "
                        + (decode == null ? need + " tokens" : request.promptLength() + " prompt tokens")
                        + " now (" + v.live(NodeRole.DECODE).size() + " decode and " + v.live(NodeRole.PREFILL).size()
                        + " prefill nodes live); retry later");
                return handle;
            }
            take(decode, Admission.pagesNeeded(request, decode.status.layout().pageTokens()));
            take(prefill, decode.status.layout().pagesFor(request.promptLength()));
        }
        seq.moveTo(new RequestState.Admitted());
        Pending p = new Pending(seq, decode.member, decode.peer, decode.status.modelId());
        requests.put(seq.id(), p);
        seq.abortHook(() -> {
            if (!p.peer().send(new ControlMessage.Abort(seq.id(), seq.abortReason()))) {
                end(p, new RequestAbortedException("request " + seq.id() + " aborted: " + seq.abortReason()), null);
            }
        });
        SamplingParams s = request.sampling();
        boolean sent = decode.peer.send(new ControlMessage.Submit(seq.id(), request.tenant(), request.promptTokens(),
                request.maxNewTokens(), new ControlMessage.Sampling(s.temperature(), s.topP(), s.seed(), s.ignoreEos()),
                prefill.status.node(), prefill.member.host, prefill.member.port));
        if (!sent) {
            end(p, new RequestFailedException(NODE_LOST, "request " + seq.id() + ": decode node " + decode.status.node()
                    + " was lost before it got the request"), null);
        }
        return handle;
    }

    /** The node of {@code nodes} with the most free pages that can hold the request (its whole reservation on decode). */
    private static Live pick(List<Live> nodes, GenerationRequest r, boolean decode) {
        return nodes.stream().filter(l -> {
            int pt = l.status.layout().pageTokens();
            long pages = decode ? Admission.pagesNeeded(r, pt) : l.status.layout().pagesFor(r.promptLength());
            long tokens = decode ? (long) r.promptLength() + r.maxNewTokens() : r.promptLength();
            return pages <= l.free() && tokens <= l.status.pool().capacityTokens() && l.status.lineageAccepting();
        }).max(Comparator.comparingLong(Live::free)).orElse(null);
    }

    private static void take(Live l, long pages) {
        Member m = l.member;
        synchronized (m) {
            if (m.state instanceof MemberState.Connected c && c.peer() == l.peer) {
                m.state = new MemberState.Connected(c.peer(), c.status(), c.seen(), c.taken() + pages);
            }
        }
    }

    private void token(ControlPeer from, ControlMessage.Token t) {
        Pending p = requests.get(t.requestId());
        if (p == null || p.peer() != from) {
            return;
        }
        Sequence seq = p.seq();
        advance(seq, RequestState.Decoding.class);
        seq.emit(t.token(), System.nanoTime());
        if (seq.stopRequested()) {
            // a stop string matched: finished here after this token; the node stops too
            from.send(new ControlMessage.Stop(seq.id()));
            end(p, null, FinishReason.STOP);
        }
    }

    private void finished(ControlPeer from, ControlMessage.Finished f) {
        Pending p = requests.get(f.requestId());
        if (p == null || p.peer() != from) {
            return;
        }
        if (p.seq().outputCount() != f.outputTokens()) {
            end(p, new RequestFailedException(NODE_LOST, "request " + f.requestId() + ": decode node " + from.name()
                    + " reports " + f.outputTokens() + " tokens, " + p.seq().outputCount() + " arrived"), null);
            return;
        }
        if (!requests.remove(f.requestId(), p)) {
            return;
        }
        Sequence seq = p.seq();
        FinishReason reason = FinishReason.valueOf(f.reason());
        advance(seq, RequestState.Decoding.class);
        seq.moveTo(new RequestState.Finished(reason));
        int[] tokens = seq.toResult(reason, 0).outputTokens(); // no issuer on the sequence: tokens only
        // signed here over what the decode node read and the tokens that arrived here
        Receipt receipt = signer == null ? null : new ReceiptIssuer(p.modelId(), signer,
                new ServingIdentity(from.name(), replicaId)).issue(seq.id(), seq.tenant(), f.reads(), tokens);
        seq.result().complete(new GenerationResult(seq.id(), tokens, reason, f.queuedNanos(), f.prefillNanos(),
                f.firstTokenNanos(), f.totalNanos(), receipt));
    }

    private void failed(ControlPeer from, ControlMessage.Failed f) {
        Pending p = requests.get(f.requestId());
        if (p == null || p.peer() != from) {
            return;
        }
        if (f.outcome() == ControlMessage.Outcome.ABORTED && !p.seq().abortRequested()) {
            // nobody here asked: the node aborted it on its way down
            end(p, new RequestFailedException(NODE_LOST, f.message()), null);
            return;
        }
        end(p, Outcomes.exception(f), null);
    }

    /** Ends a request here once: with {@code error}, or finished for {@code reason}. */
    private void end(Pending p, RuntimeException error, FinishReason reason) {
        if (!requests.remove(p.seq().id(), p)) {
            return;
        }
        Sequence seq = p.seq();
        if (error == null) {
            advance(seq, RequestState.Decoding.class);
            seq.finish(reason, System.nanoTime());
            return;
        }
        RequestState terminal = switch (error) {
            case dev.pagewarden.core.request.RequestRejectedException r -> new RequestState.Rejected(r.code(), r.getMessage());
            case dev.pagewarden.core.request.InvalidRequestException i -> new RequestState.Rejected(i.code(), i.getMessage());
            case RequestAbortedException a -> new RequestState.Aborted(seq.abortReason() == null ? "aborted" : seq.abortReason());
            case RequestFailedException f -> new RequestState.Failed(f.code(), f.getMessage());
            default -> new RequestState.Failed("engine_error", error.getMessage());
        };
        if (terminal instanceof RequestState.Failed) {
            advance(seq, RequestState.Reserved.class);
        }
        if (seq.state().canMoveTo(terminal)) {
            seq.moveTo(terminal);
        }
        seq.result().completeExceptionally(error);
    }

    /** Moves the local record along the lifecycle until {@code target} (the node went through these stages). */
    private static void advance(Sequence seq, Class<? extends RequestState> target) {
        List<RequestState> path = List.of(new RequestState.Admitted(), new RequestState.Reserved(),
                new RequestState.Prefilling(), new RequestState.Transferring(), new RequestState.Ready(),
                new RequestState.Decoding());
        for (RequestState next : path) {
            if (target.isInstance(seq.state())) {
                return;
            }
            if (seq.state().canMoveTo(next)) {
                seq.moveTo(next);
            }
        }
    }

    @Override
    public void validate(GenerationRequest request) {
        View v = view();
        ControlMessage.Status any = v.any();
        if (any != null && v.problem() == null) {
            Admission.validate(request, any.model().vocabSize(), window(v));
        }
    }

    @Override
    public int contextWindow() {
        return window(view());
    }

    @Override
    public ModelConfig model() {
        return known().model();
    }

    @Override
    public String modelId() {
        return known().modelId();
    }

    private ControlMessage.Status known() {
        ControlMessage.Status s = view().any();
        if (s == null) {
            throw new IllegalStateException("no engine node is live: " + addresses);
        }
        return s;
    }

    /** The decode nodes' backends ("cpu", "gpu", or several joined by "+"). */
    @Override
    public String backendName() {
        TreeSet<String> names = new TreeSet<>();
        for (Live l : view().live(NodeRole.DECODE)) {
            names.add(l.status.backend());
        }
        return names.isEmpty() ? "none" : String.join("+", names);
    }

    @Override
    public int queued() {
        return view().live(NodeRole.DECODE).stream().mapToInt(l -> l.status.queued()).sum();
    }

    /** The live prefill nodes' pools as one: pages summed, the largest single-request capacity. */
    @Override
    public PoolStats prefillPool() {
        return aggregate("prefill", view().live(NodeRole.PREFILL));
    }

    /** The live decode nodes' pools as one: pages summed, the largest single-request capacity. */
    @Override
    public PoolStats decodePool() {
        return aggregate("decode", view().live(NodeRole.DECODE));
    }

    /** Every live node's pool as it last reported it, prefill nodes first. */
    @Override
    public List<PoolStats> pools() {
        return nodes().stream().map(NodeReport::pool).toList();
    }

    private static PoolStats aggregate(String name, List<Live> nodes) {
        int pageTokens = 0;
        int capacity = 0;
        long tokens = 0;
        int peak = 0;
        Map<String, Integer> states = new LinkedHashMap<>();
        for (Live l : nodes) {
            ControlMessage.Pool p = l.status.pool();
            pageTokens = p.pageTokens();
            capacity += p.capacityPages();
            tokens = Math.max(tokens, p.capacityTokens());
            peak += p.peakUsedPages();
            p.pagesByState().forEach((k, n) -> states.merge(k, n, Integer::sum));
        }
        states.putIfAbsent("free", 0);
        return new PoolStats(name + " (" + nodes.size() + " nodes)", pageTokens, capacity, tokens, peak, states);
    }

    /** Closes every connection; requests still under way are aborted (their nodes abort them too when the connection goes). */
    @Override
    public void close() {
        closed = true;
        ticker.shutdownNow();
        connector.shutdownNow();
        try {
            ticker.awaitTermination(5, TimeUnit.SECONDS);
            connector.awaitTermination(options.timeout().toMillis() + 1000, TimeUnit.MILLISECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        for (Pending p : List.copyOf(requests.values())) {
            end(p, new RequestAbortedException("request " + p.seq().id() + " aborted: the cluster client closed"), null);
        }
        for (Member m : members.values()) {
            if (m.state instanceof MemberState.Connected c) {
                c.peer().close();
            }
        }
        client.close();
    }

    /** For tests: the layout the live nodes share (null if none is live). */
    KvLayout layout() {
        ControlMessage.Status s = view().any();
        return s == null ? null : s.layout();
    }

    /** For tests: requests waiting for their node's answer. */
    int inFlight() {
        return requests.size();
    }

    List<String> members() {
        return new CopyOnWriteArrayList<>(members.keySet());
    }
}
