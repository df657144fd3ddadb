package dev.pagewarden.platform.engine;

import dev.pagewarden.core.cluster.ClusterEngine;
import dev.pagewarden.core.cluster.ClusterOptions;
import dev.pagewarden.core.cluster.NodeAddress;
import dev.pagewarden.core.engine.CapacityPolicy;
import dev.pagewarden.core.engine.Engine;
import dev.pagewarden.core.engine.EngineConfig;
import dev.pagewarden.core.engine.EngineParts;
import dev.pagewarden.core.engine.InferenceEngine;
import dev.pagewarden.core.engine.PoolStats;
import dev.pagewarden.core.fault.FaultHooks;
import dev.pagewarden.core.faultlab.LabEngine;
import dev.pagewarden.core.model.load.LoadedModel;
import dev.pagewarden.core.model.load.ModelLoader;
import dev.pagewarden.core.receipt.ReceiptSigner;
import dev.pagewarden.core.spi.Clock;
import dev.pagewarden.core.lineage.LineageSink;
import dev.pagewarden.core.safety.SafetyListener;
import dev.pagewarden.platform.config.PagewardenProperties;
import dev.pagewarden.platform.error.ApiException;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.springframework.boot.flyway.autoconfigure.FlywayMigrationInitializer;
import org.springframework.jdbc.core.simple.JdbcClient;
import org.springframework.stereotype.Component;

import java.io.IOException;
import java.security.SecureRandom;
import java.time.Duration;
import java.util.List;
import java.util.Locale;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.Consumer;
import java.util.function.Function;
import java.util.function.ToDoubleFunction;

/**
 * Loads the configured model and runs its engine: prefill and decode workers in this process, or, with
 * {@code pagewarden.engine.nodes}, engine nodes reached through a {@link ClusterEngine} (the model is still
 * loaded here, memory-mapped, for its tokenizer, chat template and id; nothing is computed here).
 * Each start takes a fresh block of request ids from PostgreSQL, so ids never repeat across
 * restarts or engines sharing the audit database. Holds the operator's private/public switch.
 */
@Component
public class EngineHost implements AutoCloseable {
    private static final Logger LOG = LoggerFactory.getLogger(EngineHost.class);
    private static final SecureRandom ID_KEYS = new SecureRandom();
    /** The states {@link PoolStats#pagesByState} counts; listed, since engine nodes report none until they are up. */
    private static final List<String> PAGE_STATES = List.of("free", "owned", "deferred", "quarantined", "cached");

    private final ServedModel served;
    /** A lab engine's faults (with the lab's oracle); null outside lab mode. */
    private final LabEngine lab;
    private final String unavailableReason;
    private final LoadedModel loaded;
    /** The id the engine names the local model by; engine nodes must report the same. */
    private final String engineModelId;
    private volatile String mismatchLogged;
    private final ModelVisibilities visibility;

    public EngineHost(PagewardenProperties properties, MeterRegistry registry, SafetyListener safety,
                      LineageSink lineage, ReceiptSigner signer, JdbcClient jdbc, ModelVisibilities visibility,
                      ModelResolver resolver, LabMode labMode, Optional<FlywayMigrationInitializer> migrated,
                      TenantMeters tenantMeters) {
        this.visibility = visibility;
        ModelResolver.Outcome outcome = resolver.resolve(ModelSource.of(properties.model()));
        if (outcome instanceof ModelResolver.Unavailable(String reason)) {
            this.loaded = null;
            this.engineModelId = null;
            this.served = null;
            this.lab = null;
            this.unavailableReason = reason;
            LOG.warn("Pagewarden started WITHOUT a model: {}. The API answers model_not_found until then.", reason);
            return;
        }
        ModelResolver.Resolved resolved = (ModelResolver.Resolved) outcome;
        this.unavailableReason = null;
        long block = jdbc.sql("SELECT nextval('engine_id_blocks')").query(Long.class).single();
        PagewardenProperties.Engine e = properties.engine();
        EngineConfig config = EngineConfig.builder()
                .backend(e.backend())
                .threads(e.threads())
                .contextWindow(e.contextWindow())
                .pageTokens(e.pageTokens())
                .poolTokens(e.prefillPoolTokens(), e.decodePoolTokens())
                .maxBatch(e.maxBatch())
                .maxQueue(e.maxQueue())
                .decodeHeadroomPages(e.decodeHeadroomPages())
                .maxPreemptions(e.maxPreemptions())
                .capacityPolicy(CapacityPolicy.valueOf(e.capacityPolicy().toUpperCase(Locale.ROOT)))
                .deferredReleaseTimeout(e.deferredReleaseTimeout())
                .canaryInterval(e.canaryInterval())
                .requestIdBase(block << 32)
                // receipts carry the engine's id: permuted so that it shows no tenant how busy the others are;
                // a lab engine keeps them sequential, so its replays stay reproducible
                .requestIdKey(labMode.enabled() ? 0 : ID_KEYS.nextLong() | 1)
                .nodeId(e.node())
                // a lab engine replays with its isolation oracle, which attributes every slot to the request that
                // computed it: shared prefix pages would read as another request's data there
                .prefixCache(e.prefixCache() && !labMode.enabled())
                .build();
        // a lab engine gets its fault switches and an isolation oracle, so a replay can report its ground truth
        LabEngine labEngine = labMode.engine().orElse(null);
        this.loaded = ModelLoader.load(resolved.model(), resolved.tokenizer());
        if (loaded.tokenizer() == null) {
            loaded.close();
            throw new IllegalStateException("model " + resolved.model() + " has no vocabulary: set "
                    + "pagewarden.model.tokenizer (PAGEWARDEN_MODEL_TOKENIZER) to its tokenizer.bin");
        }
        this.engineModelId = EngineParts.modelId(loaded);
        InferenceEngine engine;
        try {
            engine = e.hasNodes() ? connect(e, block, lineage, signer)
                    : Engine.builder(loaded, config).metrics(new MicrometerEngineMetrics(registry, tenantMeters)).safety(safety)
                    .lineage(lineage).receipts(signer).faultHooks(labEngine == null ? FaultHooks.NONE : labEngine.hooks()).build();
        } catch (RuntimeException ex) {
            loaded.close();
            throw ex;
        }
        this.lab = labEngine;
        this.served = new ServedModel(resolved.id(), engine, loaded.tokenizer(), loaded.chatTemplate(),
                resolved.model(), loaded.format());
        registerGauges(registry, engine);
        if (engine instanceof ClusterEngine) {
            LOG.info("Serving model '{}' ({}, {}) from engine nodes {} as '{}' (certificate from {}); request ids "
                            + "from {}", served.id(), resolved.model(), loaded.format(),
                    e.nodes(), e.tlsName(), e.tlsDir(), (block << 32) + 1);
            return;
        }
        LOG.info("Serving model '{}' ({}, {}) on backend {}: effective context window {} tokens, "
                        + "KV pools {} ({} tokens) and {} ({} tokens), request ids from {}",
                served.id(), resolved.model(), loaded.format(), engine.backendName(), engine.contextWindow(),
                engine.prefillPool().name(), engine.prefillPool().capacityTokens(), engine.decodePool().name(),
                engine.decodePool().capacityTokens(), (block << 32) + 1);
    }

    /**
     * The cluster client for {@code pagewarden.engine.nodes}; returns at once, nodes join as they answer. Their page
     * life steps go to {@code lineage} and finished requests' receipts are signed by {@code signer}, as the local
     * engine's are.
     */
    static ClusterEngine connect(PagewardenProperties.Engine e, long block, LineageSink lineage, ReceiptSigner signer) {
        List<NodeAddress> nodes;
        try {
            nodes = NodeAddress.parseList(e.nodes());
        } catch (IllegalArgumentException ex) {
            throw new IllegalStateException("pagewarden.engine.nodes: " + ex.getMessage(), ex);
        }
        ClusterOptions defaults = ClusterOptions.defaults(e.tlsName());
        ClusterOptions options = new ClusterOptions(e.tlsName(), defaults.heartbeat(), defaults.missedHeartbeats(),
                defaults.timeout(), defaults.maxBackoff(), defaults.resolveEvery(), block << 32, ID_KEYS.nextLong() | 1);
        try {
            return ClusterEngine.connect(nodes, e.tlsDir(), options, lineage, signer);
        } catch (IOException | RuntimeException ex) {
            throw new IllegalStateException("pagewarden.engine.tls-dir: cannot use the certificate '" + e.tlsName()
                    + "' in " + e.tlsDir() + ": " + ex.getMessage(), ex);
        }
    }

    private static void registerGauges(MeterRegistry registry, InferenceEngine engine) {
        // each gauge reads a snapshot of its own pool only (a snapshot walks the pool's pages); engine nodes'
        // pools are summed per role, tagged "prefill" and "decode" (their names change as nodes come and go)
        List<Function<InferenceEngine, PoolStats>> pools = List.of(InferenceEngine::prefillPool, InferenceEngine::decodePool);
        for (int i = 0; i < pools.size(); i++) {
            Function<InferenceEngine, PoolStats> stats = pools.get(i);
            String name = engine instanceof Engine ? stats.apply(engine).name() : i == 0 ? "prefill" : "decode";
            for (String state : PAGE_STATES) {
                Gauge.builder("kv.pool.pages", engine, e -> stats.apply(e).pagesByState().getOrDefault(state, 0))
                        .description("KV pages by state").tag("worker", name).tag("state", state).register(registry);
            }
            Gauge.builder("kv.pool.capacity.tokens", engine, e -> stats.apply(e).capacityTokens()).tag("worker", name)
                    .register(registry);
        }
        Gauge.builder("engine.context.window.tokens", engine, InferenceEngine::contextWindow).register(registry);
        Gauge.builder("engine.queue.depth", engine, InferenceEngine::queued).register(registry);
        if (engine instanceof Engine local) {
            Gauge.builder("kv.transfers.in.flight", local, Engine::transfersInFlight).register(registry);
        }
        if (engine instanceof ClusterEngine cluster) {
            Set<String> seen = ConcurrentHashMap.newKeySet();
            Consumer<String> perNode = node -> {
                if (seen.add(node)) {
                    registerNodeGauges(registry, cluster, node);
                }
            };
            cluster.onNodeJoined(perNode);
            cluster.nodes().forEach(n -> perNode.accept(n.node())); // any that joined before the listener
        }
    }

    /**
     * One engine node's figures as it last reported them, tagged {@code node} (NaN while it is out of rotation):
     * its pool's pages by state, its queue, its page transfers under way, and its page life steps not yet
     * acknowledged by this platform (with whether it still admits requests).
     */
    private static void registerNodeGauges(MeterRegistry registry, ClusterEngine cluster, String node) {
        Function<ToDoubleFunction<ClusterEngine.NodeReport>, ToDoubleFunction<ClusterEngine>> of = f -> c -> c.nodes()
                .stream().filter(n -> n.node().equals(node)).findFirst().map(f::applyAsDouble).orElse(Double.NaN);
        for (String state : PAGE_STATES) {
            Gauge.builder("kv.node.pool.pages", cluster, of.apply(n -> n.pool().pagesByState().getOrDefault(state, 0)))
                    .description("An engine node's KV pages by state").tag("node", node).tag("state", state)
                    .register(registry);
        }
        Gauge.builder("engine.node.queue.depth", cluster, of.apply(ClusterEngine.NodeReport::queued)).tag("node", node)
                .register(registry);
        Gauge.builder("kv.node.transfers.in.flight", cluster, of.apply(ClusterEngine.NodeReport::transfersInFlight))
                .tag("node", node).register(registry);
        Gauge.builder("lineage.node.backlog.events", cluster, of.apply(ClusterEngine.NodeReport::lineageBacklog))
                .description("An engine node's page life steps not yet acknowledged by this platform").tag("node", node)
                .register(registry);
        Gauge.builder("lineage.node.accepting", cluster, of.apply(n -> n.lineageAccepting() ? 1 : 0))
                .description("0 while an engine node admits no request: its lineage backlog is at its bound")
                .tag("node", node).register(registry);
    }

    /** The lab engine's faults (with its isolation oracle), when the platform runs in lab mode with a model. */
    public Optional<LabEngine> lab() {
        return Optional.ofNullable(lab);
    }

    public Optional<ServedModel> served() {
        return Optional.ofNullable(served);
    }

    /** The model name receipts give the model served as {@code modelId} (the engine names its model file); empty when not served here. */
    public java.util.Set<String> receiptModelNames(String modelId) {
        return served != null && engineModelId != null && served.id().equals(modelId) ? java.util.Set.of(engineModelId)
                : java.util.Set.of();
    }

    /** Why no model is served (null when one is). */
    public String unavailableReason() {
        return unavailableReason;
    }

    /** The model a tenant asked for, or the API error that says why it cannot be used. */
    public ServedModel require(String modelId) {
        if (served == null || !served.id().equals(modelId)) {
            String known = served == null ? "none is loaded (" + unavailableReason + ")" : "available: " + served.id();
            throw ApiException.notFound("model", "model_not_found", "The model '" + modelId + "' does not exist; " + known);
        }
        if (isPrivate(modelId)) {
            throw ApiException.unavailable("model_unavailable", "The model '" + modelId
                    + "' has been made unavailable by the operator; try again later", null);
        }
        return served;
    }

    /**
     * {@link #require}, and for engine nodes that they can take the request now: a live prefill and a live decode
     * node ({@code engine_unavailable}, retry later) serving the model loaded here ({@code engine_misconfigured}).
     */
    public ServedModel requireServing(String modelId) {
        ServedModel model = require(modelId);
        if (!(model.engine() instanceof ClusterEngine cluster)) {
            return model;
        }
        String nodes;
        int window;
        try {
            nodes = cluster.modelId();
            window = cluster.contextWindow();
        } catch (IllegalStateException noneLive) {
            nodes = null;
            window = 0;
        }
        if (nodes != null && !nodes.equals(engineModelId)) {
            if (!nodes.equals(mismatchLogged)) { // once per model the nodes serve, not once per request
                mismatchLogged = nodes;
                LOG.error("engine nodes serve {}, but this platform loaded {}: requests are refused until they agree",
                        nodes, engineModelId);
            }
            throw ApiException.unavailable("engine_misconfigured", "The engine nodes serve another model than '"
                    + modelId + "'; the operator has been told", null);
        }
        if (window == 0) {
            throw ApiException.unavailable("engine_unavailable", "No engine node can serve '" + modelId
                    + "' now (a prefill and a decode node must both be up); retry later", Duration.ofSeconds(1));
        }
        return model;
    }

    /** Whether requests go to engine nodes ({@code pagewarden.engine.nodes}) rather than an engine in this process. */
    public boolean servesFromNodes() {
        return served != null && served.engine() instanceof ClusterEngine;
    }

    public boolean isPrivate(String modelId) {
        return visibility.isPrivate(modelId);
    }

    /** The operator's switch; persisted, effective at once for new requests here and within seconds on every replica. */
    public ModelVisibility setPrivate(String modelId, boolean makePrivate, String actor) {
        if (served == null || !served.id().equals(modelId)) {
            throw ApiException.notFound("model", "model_not_found", "The model '" + modelId + "' does not exist");
        }
        ModelVisibility v = visibility.set(modelId, makePrivate, actor);
        LOG.warn("model '{}' made {} by {}", modelId, makePrivate ? "PRIVATE" : "public", actor);
        return v;
    }

    @Override
    public void close() {
        if (served != null) {
            served.engine().close();
            loaded.close();
        }
    }
}
