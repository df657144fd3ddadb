package dev.pagewarden.core.cluster;

import dev.pagewarden.core.admission.Admission;
import dev.pagewarden.core.engine.InferenceEngine;
import dev.pagewarden.core.engine.PoolStats;
import dev.pagewarden.core.engine.RequestIdSource;
import dev.pagewarden.core.kv.KvLayout;
import dev.pagewarden.core.lineage.LineageSink;
import dev.pagewarden.core.model.ModelConfig;
import dev.pagewarden.core.receipt.ReceiptSigner;
import dev.pagewarden.core.request.GenerationRequest;
import dev.pagewarden.core.request.InvalidRequestException;
import dev.pagewarden.core.request.RequestHandle;
import dev.pagewarden.core.sampling.SamplingParams;
import dev.pagewarden.core.sequence.Sequence;
import dev.pagewarden.core.request.TokenListener;
import dev.pagewarden.core.request.ValidRequest;
import dev.pagewarden.core.spi.EngineMetrics;
import dev.pagewarden.core.transfer.net.ClusterTls;
import dev.pagewarden.core.transfer.net.ControlMessage;

import java.io.IOException;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeSet;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.function.Consumer;

/**
 * The platform's engine when prefill and decode run on engine nodes of their own ({@link PrefillNode},
 * {@link DecodeNode}). Requests go through the same {@link Admission} as in the local engine, with the nodes as its
 * placement: {@link Membership} keeps the nodes in rotation (control connections, heartbeats, DNS), {@link
 * NodePlacement} picks the nodes a request runs on, {@link RemoteRequests} sends it there and completes its result as
 * the local engine does (same exception types and codes), and {@link LineageRelay} takes the nodes' page life steps
 * into the platform's journal. While that journal is not accepting, requests are rejected with {@code
 * audit_backpressure}; a node whose own backlog of unacknowledged steps is at its bound gets no request. Every node
 * must serve the same model with the same KV layout, or nothing is routed.
 */
public final class ClusterEngine implements InferenceEngine {
    /** The code of a request whose decode node went away (connection lost or heartbeats missed) while serving it. */
    public static final String NODE_LOST = "engine_node_lost";

    private final ClusterOptions options;
    private final RequestIdSource ids;
    private final RemoteRequests requests;
    private final Membership membership;
    private final Admission<Sequence> admission;
    private volatile boolean closed;

    private ClusterEngine(List<NodeAddress> addresses, ClusterTls tls, ClusterOptions options, LineageSink lineage,
                          ReceiptSigner signer, NodeAddress.Resolver resolver) {
        this.options = options;
        this.ids = new RequestIdSource(options.requestIdBase(), options.requestIdKey());
        PrefixAffinity affinity = new PrefixAffinity();
        this.requests = new RemoteRequests(signer, affinity);
        LineageRelay relay = new LineageRelay(lineage);
        this.membership = new Membership(addresses, tls, options, resolver, requests, relay);
        NodePlacement placement = new NodePlacement(membership, requests, affinity);
        this.admission = new Admission<>(placement, placement::limits, relay::accepting, EngineMetrics.NONE);
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
        c.membership.start();
        return c;
    }

    /**
     * {@link #connect(List, ClusterTls, ClusterOptions)} with the platform's certificate from a {@code pki} folder
     * ({@code ca.crt}, {@code NAME.crt}, {@code NAME.key} for the options' client name).
     */
    public static ClusterEngine connect(List<NodeAddress> nodes, Path pki, ClusterOptions options,
                                        LineageSink lineage, ReceiptSigner receipts) throws IOException {
        return connect(nodes, ClusterTls.load(pki, options.clientName()), options, lineage, receipts);
    }

    /** Waits up to {@code timeout} until at least one prefill and one decode node are live; returns whether they are. */
    public boolean awaitReady(Duration timeout) throws InterruptedException {
        long deadline = System.nanoTime() + timeout.toNanos();
        while (true) {
            ClusterView v = membership.view();
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
    public void onNodeJoined(Consumer<String> joined) {
        membership.onNodeJoined(joined);
    }

    /** Every node in rotation, as it last reported, prefill nodes first. */
    public List<NodeReport> nodes() {
        List<NodeReport> out = new ArrayList<>();
        ClusterView v = membership.view();
        for (NodeRole r : List.of(NodeRole.PREFILL, NodeRole.DECODE)) {
            for (ClusterView.Live l : v.live(r)) {
                ControlMessage.Status s = l.status();
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
        for (Map.Entry<NodeRole, List<ClusterView.Live>> e : membership.view().byRole().entrySet()) {
            for (ClusterView.Live l : e.getValue()) {
                out.add(l.status().node() + " (" + l.member().where() + ")");
            }
        }
        return out;
    }

    /**
     * Submits a checked request: refused at once while this client is closed or the nodes disagree on the model,
     * then admitted as in the local engine, to the nodes {@link NodePlacement} picks.
     */
    @Override
    public RequestHandle submit(ValidRequest valid, TokenListener listener) {
        GenerationRequest request = admission.request(valid);
        Sequence seq = new Sequence(ids.next(), request, admission.charging(request.tenant(), listener), System.nanoTime());
        RequestHandle handle = new RequestHandle(seq);
        if (closed) {
            seq.reject("overloaded", "the cluster client is closed");
            return handle;
        }
        String problem = membership.view().problem();
        if (problem != null) {
            seq.reject("engine_misconfigured", problem);
            return handle;
        }
        admission.submit(seq);
        return handle;
    }

    /**
     * Checks against what the nodes report (vocabulary, window); nothing while none is live or they disagree. Every
     * sampling control travels to the nodes; a constraint only as the text it compiles from: one without is refused.
     */
    @Override
    public ValidRequest validate(GenerationRequest request) {
        SamplingParams sampling = request.sampling();
        if (sampling.constraint() != null && sampling.constraint().source() == null) {
            throw new InvalidRequestException("response_format", "this response format cannot be sent to engine nodes "
                    + "(only json_object and json_schema can)");
        }
        return admission.validate(request);
    }

    @Override
    public int contextWindow() {
        return membership.view().window();
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
        ControlMessage.Status s = membership.view().any();
        if (s == null) {
            throw new IllegalStateException("no engine node is live: " + membership.addresses());
        }
        return s;
    }

    /** The decode nodes' backends ("cpu", "gpu", or several joined by "+"). */
    @Override
    public String backendName() {
        TreeSet<String> names = new TreeSet<>();
        for (ClusterView.Live l : membership.view().live(NodeRole.DECODE)) {
            names.add(l.status().backend());
        }
        return names.isEmpty() ? "none" : String.join("+", names);
    }

    @Override
    public int queued() {
        return membership.view().live(NodeRole.DECODE).stream().mapToInt(l -> l.status().queued()).sum();
    }

    /** The live prefill nodes' pools as one: pages summed, the largest single-request capacity. */
    @Override
    public PoolStats prefillPool() {
        return aggregate("prefill", membership.view().live(NodeRole.PREFILL));
    }

    /** The live decode nodes' pools as one: pages summed, the largest single-request capacity. */
    @Override
    public PoolStats decodePool() {
        return aggregate("decode", membership.view().live(NodeRole.DECODE));
    }

    /** Every live node's pool as it last reported it, prefill nodes first. */
    @Override
    public List<PoolStats> pools() {
        return nodes().stream().map(NodeReport::pool).toList();
    }

    private static PoolStats aggregate(String name, List<ClusterView.Live> nodes) {
        int pageTokens = 0;
        int capacity = 0;
        long tokens = 0;
        int peak = 0;
        Map<String, Integer> states = new LinkedHashMap<>();
        for (ClusterView.Live l : nodes) {
            ControlMessage.Pool p = l.status().pool();
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
        membership.stop();
        requests.abortAll("the cluster client closed");
        membership.disconnect();
    }

    /** For tests: the layout the live nodes share (null if none is live). */
    KvLayout layout() {
        ControlMessage.Status s = membership.view().any();
        return s == null ? null : s.layout();
    }

    /** For tests: requests waiting for their node's answer. */
    int inFlight() {
        return requests.inFlight();
    }

    List<String> members() {
        return new CopyOnWriteArrayList<>(membership.keys());
    }
}
