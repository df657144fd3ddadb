package dev.pagewarden.core.engine;

import dev.pagewarden.core.admission.Admission;
import dev.pagewarden.core.backend.Backend;
import dev.pagewarden.core.backend.BackendOptions;
import dev.pagewarden.core.backend.BackendProvider;
import dev.pagewarden.core.backend.Backends;
import dev.pagewarden.core.context.EngineContext;
import dev.pagewarden.core.decode.DecodeWorker;
import dev.pagewarden.core.decode.KvIntake;
import dev.pagewarden.core.fault.FaultHooks;
import dev.pagewarden.core.kv.KvLayout;
import dev.pagewarden.core.kv.KvPool;
import dev.pagewarden.core.model.ModelConfig;
import dev.pagewarden.core.model.load.LoadedModel;
import dev.pagewarden.core.prefill.PrefillWorker;
import dev.pagewarden.core.receipt.ReceiptIssuer;
import dev.pagewarden.core.receipt.ReceiptSigner;
import dev.pagewarden.core.receipt.ServingIdentity;
import dev.pagewarden.core.request.GenerationRequest;
import dev.pagewarden.core.request.InvalidRequestException;
import dev.pagewarden.core.request.RequestHandle;
import dev.pagewarden.core.sequence.Sequence;
import dev.pagewarden.core.request.TokenListener;
import dev.pagewarden.core.request.ValidRequest;
import dev.pagewarden.core.safety.SafetyMonitor;
import dev.pagewarden.core.lineage.LineageSink;
import dev.pagewarden.core.safety.SafetyListener;
import dev.pagewarden.core.spi.Clock;
import dev.pagewarden.core.spi.EngineMetrics;
import dev.pagewarden.core.step.StepGuard;
import dev.pagewarden.core.transfer.DecodeTicks;
import dev.pagewarden.core.transfer.InProcessKvTransport;
import dev.pagewarden.core.transfer.KvReceiver;
import dev.pagewarden.core.transfer.KvTransport;

import java.util.List;

/**
 * One disaggregated engine in one process: a prefill worker and a decode worker, each with its own
 * backend instance and KV pool, joined by a transport. A request flows
 * submit -> admission -> prefill -> transfer -> decode -> result.
 *
 * <p>At start the engine sizes each pool from its memory budget and derives the effective context
 * window: the smallest of the configured window, the model's limit and what every pool can hold
 * for one request. Policy strict refuses to start when the configured window is larger; clamp
 * lowers it and says so (log and safety event).
 *
 * <p>Built with {@link #builder}. The stages run on threads of their own; an engine built
 * {@link Builder#stepped() stepped} starts no thread and moves only when {@link #step} is called,
 * which makes a run reproducible step for step (the replay lab drives it that way).
 */
public final class Engine implements InferenceEngine {
    private static final System.Logger LOG = System.getLogger(Engine.class.getName());

    private final ModelConfig model;
    private final EngineConfig config;
    private final String backendName;
    private final Backend prefillBackend;
    private final Backend decodeBackend;
    private final KvPool prefillPool;
    private final KvPool decodePool;
    private final Admission<Sequence> admission;
    private final PrefillWorker<Sequence> prefill;
    private final DecodeWorker<Sequence> decode;
    private final KvIntake<Sequence> intake;
    private final KvTransport transport;
    /** The default transport, which a stepped engine moves on; null when a factory supplied another. */
    private final InProcessKvTransport inProcess;
    private final DecodeTicks ticks = new DecodeTicks();
    private final boolean stepped;
    private final SafetyMonitor safety;
    private final Thread prefillThread;
    private final Thread decodeThread;
    private final Canary canary;
    private final RequestIdSource ids;
    private final Clock clock;
    private final String modelId;
    private final ReceiptIssuer receipts;
    private final String node;

    /** Builds the transport that carries pages from the prefill pool to the decode pool's {@code receiver}. */
    @FunctionalInterface
    public interface TransportFactory {
        /** {@code layout}: how the decode pool lays out a page, which the sent pages must match. */
        KvTransport create(KvReceiver receiver, KvLayout layout);
    }

    /** Starts building an engine for {@code loaded} with {@code config}. */
    public static Builder builder(LoadedModel loaded, EngineConfig config) {
        return new Builder(loaded, config);
    }

    /** What an engine reports to and is observed by; everything but the model and the config is optional. */
    public static final class Builder {
        private final LoadedModel loaded;
        private final EngineConfig config;
        private EngineMetrics metrics = EngineMetrics.NONE;
        private SafetyListener safety = SafetyListener.NONE;
        private LineageSink lineage = LineageSink.NONE;
        private Clock clock = Clock.SYSTEM;
        private ReceiptSigner signer;
        private FaultHooks hooks = FaultHooks.NONE;
        private boolean stepped;
        private TransportFactory transport;
        private String node;
        private BackendProvider backend;

        private Builder(LoadedModel loaded, EngineConfig config) {
            this.loaded = loaded;
            this.config = config;
        }

        public Builder metrics(EngineMetrics v) { metrics = v; return this; }

        /** Every safety event, on the engine thread that detected it. */
        public Builder safety(SafetyListener v) { safety = v; return this; }

        /** Every page life step; the engine refuses work while the sink cannot take more. */
        public Builder lineage(LineageSink v) { lineage = v; return this; }

        public Builder clock(Clock v) { clock = v; return this; }

        /**
         * Every request that finishes normally gets an isolation receipt signed by {@code v} (null: no
         * receipts). The receipt names the model by {@link #modelId()}, and the node and replica by the
         * config's node id and replica id (default: the host name, a random id per start).
         */
        public Builder receipts(ReceiptSigner v) { signer = v; return this; }

        /**
         * The node this engine's pools belong to, as its lineage events and receipts name it; overrides the
         * config's node id. Default: the config's node id, else the host name. Nodes that write lineage to
         * one database need distinct names.
         */
        public Builder node(String v) {
            if (!ServingIdentity.isNodeName(v)) {
                throw new IllegalArgumentException("node must be 1 to 63 letters, digits, '.', '_' or '-': '" + v + "'");
            }
            node = v;
            return this;
        }

        /** Fault injection (the replay lab only); {@link FaultHooks#NONE} by default. */
        public Builder faultHooks(FaultHooks v) { hooks = v; return this; }

        /** No threads: the engine moves only in {@link Engine#step}. */
        public Builder stepped() { stepped = true; return this; }

        /** Another way for pages to reach the decode pool (a network transport, say); in process by default. */
        public Builder transport(TransportFactory v) { transport = v; return this; }

        /** Runs on {@code v}'s backends instead of the one the config names (an embedder's own device). */
        public Builder backend(BackendProvider v) { backend = v; return this; }

        public Engine build() {
            return new Engine(this);
        }
    }

    private Engine(Builder b) {
        LoadedModel loaded = b.loaded;
        EngineConfig config = b.config;
        EngineMetrics metrics = b.metrics;
        SafetyListener listener = b.safety;
        LineageSink lineage = b.lineage;
        Clock clock = b.clock;
        ReceiptSigner signer = b.signer;
        FaultHooks hooks = b.hooks;
        this.stepped = b.stepped;
        this.model = loaded.config();
        this.modelId = EngineParts.modelId(loaded);
        ServingIdentity served = ServingIdentity.of(b.node != null ? b.node : config.nodeId(), config.replicaId());
        this.node = served.nodeId();
        this.receipts = signer == null ? null : new ReceiptIssuer(modelId, signer, served);
        this.config = config;
        this.ids = new RequestIdSource(config.requestIdBase(), config.requestIdKey());
        this.clock = clock;
        EngineContext context = EngineContext.of(node, hooks, listener, metrics, clock, lineage);
        this.safety = context.safety();
        BackendProvider provider = b.backend != null ? b.backend : Backends.select(config.backend(), loaded);
        this.backendName = provider.name();
        LOG.log(System.Logger.Level.DEBUG, "backend {0} ({1})", provider.name(), config.backend());
        BackendOptions options = new BackendOptions(config.threads());
        this.prefillBackend = provider.create(loaded, options);
        this.decodeBackend = provider.create(loaded, options);

        int configured = EngineParts.configuredWindow(config, model);
        KvLayout layout = KvLayout.of(model, config.pageTokens());
        this.prefillPool = EngineParts.prefillPool(context, "prefill-0", prefillBackend, layout, config, model,
                EngineParts.PREFILL_MEMORY_SHARE);
        this.decodePool = EngineParts.decodePool(context, "decode-0", decodeBackend, layout, config, model, 1.0);
        if (!prefillPool.layout().equals(decodePool.layout())) {
            // a page image means nothing to a pool that arranges pages differently
            throw new IllegalStateException("prefill pool " + prefillPool.layout() + " and decode pool "
                    + decodePool.layout() + " lay out KV pages differently");
        }
        int window = EngineParts.effectiveWindow(configured, model, List.of(prefillPool, decodePool),
                config.capacityPolicy(), context);
        int vocab = model.vocabSize();

        this.decode = new DecodeWorker<>(new StepGuard(decodeBackend, decodePool, hooks), vocab, ticks, config.maxBatch(),
                EngineParts.stopTokens(loaded), context, this::release, config.maxPreemptions(),
                seq -> admission().requeue(seq));
        this.intake = new KvIntake<>(decodePool, context, config.deferredReleaseTimeout(), decode::enqueueReady,
                this::release, () -> admission().pagesFreed());
        decode.housekeeping(intake::reap);
        if (b.transport == null) {
            this.inProcess = new InProcessKvTransport(intake, hooks, ticks, stepped);
            this.transport = inProcess;
        } else if (stepped) {
            throw new IllegalArgumentException("a stepped engine moves its transfers itself and takes no transport");
        } else {
            this.inProcess = null;
            // a sender in another process can fail before its first page (connection, handshake, hello)
            intake.startTimeout(config.transferStartTimeout());
            this.transport = b.transport.create(intake, decodePool.layout());
        }
        this.prefill = new PrefillWorker<>(new StepGuard(prefillBackend, prefillPool, hooks), vocab, transport,
                config.prefillChunkTokens(), context, intake::expect, this::release);
        if (config.prefixCache()) {
            prefill.prefixCache(modelId);
        }
        this.admission = new Admission<>(decodePool, new Admission.Limits(vocab, window, prefillPool.capacityTokens(),
                decodePool.capacityTokens(), config.maxQueue(), hooks.promptOverflow().admissionChecksPoolFit()),
                prefill::enqueue, lineage::accepting, metrics, clock::nanoTime, config.decodeHeadroomPages());

        if (stepped) {
            this.prefillThread = null;
            this.decodeThread = null;
            this.canary = null;
        } else {
            this.prefillThread = Thread.ofPlatform().name("pagewarden-prefill").daemon().start(prefill);
            this.decodeThread = Thread.ofPlatform().name("pagewarden-decode").daemon().start(decode);
            this.canary = config.canaryInterval().isZero() ? null
                    : Canary.start(this, config.canaryInterval(), safety, metrics);
        }
    }

    private Admission<Sequence> admission() {
        return admission;
    }

    private void release(Sequence seq) {
        admission.release(seq);
    }

    /** Submits a checked request; one that does not fit completes its result with a rejection before any page is reserved. */
    @Override
    public RequestHandle submit(ValidRequest request, TokenListener listener) {
        GenerationRequest checked = admission.request(request);
        Sequence seq = new Sequence(ids.next(), checked, admission.charging(checked.tenant(), listener), clock.nanoTime());
        seq.receipts(receipts);
        seq.abortHook(() -> {
            admission.abortWaiting(seq);
            intake.abort(seq);
        });
        admission.submit(seq);
        return new RequestHandle(seq);
    }

    /**
     * Checks a request's values against this engine without submitting it (what {@link #submit} checks
     * first): throws {@link InvalidRequestException} naming the parameter. A caller that charges quota
     * or opens a stream calls it before.
     */
    @Override
    public ValidRequest validate(GenerationRequest request) {
        return admission.validate(request);
    }

    /** The effective context window: what admission accepts for prompt + max new tokens. */
    @Override
    public int contextWindow() {
        return admission.contextWindow();
    }

    @Override
    public ModelConfig model() {
        return model;
    }

    /** The model's id (its file name), as receipts name it. */
    @Override
    public String modelId() {
        return modelId;
    }

    public EngineConfig config() {
        return config;
    }

    /** The node this engine's pools belong to: what its lineage events and receipts name. */
    public String node() {
        return node;
    }

    @Override
    public String backendName() {
        return backendName;
    }

    /** The prefill pool's state now (a snapshot). */
    @Override
    public PoolStats prefillPool() {
        return PoolStats.of(prefillPool);
    }

    /** The decode pool's state now (a snapshot). */
    @Override
    public PoolStats decodePool() {
        return PoolStats.of(decodePool);
    }

    /** The pools themselves, for this package's tests only. */
    KvPool prefillKv() {
        return prefillPool;
    }

    KvPool decodeKv() {
        return decodePool;
    }

    /** Both pools, prefill first (snapshots). */
    @Override
    public List<PoolStats> pools() {
        return List.of(prefillPool(), decodePool());
    }

    /**
     * A stepped engine's one move: the prefill worker runs the request at the head of its queue (if
     * its pages are free), every transfer moves on as far as its delays allow, the decode worker runs
     * one iteration. Returns whether anything is still under way (queued, prefilling, in transfer,
     * deferred or decoding).
     */
    public boolean step() {
        if (!stepped) {
            throw new IllegalStateException("this engine runs on its own threads; build it stepped() to drive it");
        }
        prefill.tick();
        inProcess.tick();
        decode.tick();
        return busy();
    }

    private boolean busy() {
        return admission.queued() > 0 || prefill.pending() > 0 || intake.inFlight() > 0 || decode.pending() > 0;
    }

    @Override
    public int queued() {
        return admission.queued();
    }

    /** Transfers whose pages the decode side still answers for (receiving, deferred, quarantined). */
    public int transfersInFlight() {
        return intake.inFlight();
    }

    @Override
    public void close() {
        if (canary != null) {
            canary.close();
        }
        prefill.stop();
        decode.stop();
        try {
            if (!stepped) {
                prefillThread.join(5000);
                decodeThread.join(5000);
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        transport.close();
        prefillPool.storage().close();
        decodePool.storage().close();
        prefillBackend.close();
        decodeBackend.close();
    }
}
