package dev.pagewarden.core.engine;

import dev.pagewarden.core.admission.Admission;
import dev.pagewarden.core.backend.Backend;
import dev.pagewarden.core.backend.BackendOptions;
import dev.pagewarden.core.backend.BackendProvider;
import dev.pagewarden.core.backend.Backends;
import dev.pagewarden.core.decode.DecodeWorker;
import dev.pagewarden.core.decode.KvIntake;
import dev.pagewarden.core.kv.KvLayout;
import dev.pagewarden.core.kv.KvPool;
import dev.pagewarden.core.lab.Fault;
import dev.pagewarden.core.lab.LabFaults;
import dev.pagewarden.core.lineage.LineageIds;
import dev.pagewarden.core.lineage.LineageRecorder;
import dev.pagewarden.core.model.ModelConfig;
import dev.pagewarden.core.model.load.LoadedModel;
import dev.pagewarden.core.prefill.PrefillWorker;
import dev.pagewarden.core.receipt.ReceiptIssuer;
import dev.pagewarden.core.receipt.ReceiptSigner;
import dev.pagewarden.core.receipt.ServingIdentity;
import dev.pagewarden.core.request.GenerationRequest;
import dev.pagewarden.core.request.InvalidRequestException;
import dev.pagewarden.core.request.RequestHandle;
import dev.pagewarden.core.request.Sequence;
import dev.pagewarden.core.request.TokenListener;
import dev.pagewarden.core.safety.SafetyEvent;
import dev.pagewarden.core.safety.SafetyMonitor;
import dev.pagewarden.core.spi.Clock;
import dev.pagewarden.core.spi.EngineMetrics;
import dev.pagewarden.core.spi.LineageSink;
import dev.pagewarden.core.spi.SafetyListener;
import dev.pagewarden.core.transfer.InProcessKvTransport;
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
 */
public final class Engine implements AutoCloseable {
    private static final System.Logger LOG = System.getLogger(Engine.class.getName());

    private final ModelConfig model;
    private final EngineConfig config;
    private final String backendName;
    private final Backend prefillBackend;
    private final Backend decodeBackend;
    private final KvPool prefillPool;
    private final KvPool decodePool;
    private final Admission admission;
    private final PrefillWorker prefill;
    private final DecodeWorker decode;
    private final KvIntake intake;
    private final KvTransport transport;
    private final SafetyMonitor safety;
    private final Thread prefillThread;
    private final Thread decodeThread;
    private final Canary canary;
    private final RequestIdSource ids;
    private final Clock clock;
    private final String modelId;
    private final ReceiptIssuer receipts;

    public Engine(LoadedModel loaded, EngineConfig config, EngineMetrics metrics) {
        this(loaded, config, metrics, SafetyListener.NONE, Clock.SYSTEM);
    }

    public Engine(LoadedModel loaded, EngineConfig config, EngineMetrics metrics, SafetyListener listener, Clock clock) {
        this(loaded, config, metrics, listener, LineageSink.NONE, clock);
    }

    /** An engine whose every page life step goes to {@code lineage} (and which refuses work while it cannot take more). */
    public Engine(LoadedModel loaded, EngineConfig config, EngineMetrics metrics, SafetyListener listener,
                  LineageSink lineage, Clock clock) {
        this(loaded, config, metrics, listener, lineage, clock, null);
    }

    /**
     * As above, and every request that finishes normally gets an isolation receipt signed by
     * {@code signer} (null: no receipts). The receipt names the model by {@link #modelId()}, and the node
     * and replica by the config's node id and replica id (default: the host name, a random id per start).
     */
    public Engine(LoadedModel loaded, EngineConfig config, EngineMetrics metrics, SafetyListener listener,
                  LineageSink lineage, Clock clock, ReceiptSigner signer) {
        this.model = loaded.config();
        this.modelId = modelId(loaded);
        this.receipts = signer == null ? null
                : new ReceiptIssuer(modelId, signer, ServingIdentity.of(config.nodeId(), config.replicaId()));
        this.config = config;
        this.ids = new RequestIdSource(config.requestIdBase(), config.requestIdKey());
        this.clock = clock;
        LabFaults faults = config.faults();
        this.safety = new SafetyMonitor(listener, metrics, clock);
        BackendProvider provider = Backends.select(config.backend());
        this.backendName = provider.name();
        LOG.log(System.Logger.Level.DEBUG, "backend {0} ({1})", provider.name(), config.backend());
        BackendOptions options = new BackendOptions(config.threads());
        this.prefillBackend = provider.create(loaded, options);
        this.decodeBackend = provider.create(loaded, options);

        int configured = config.contextWindow() == 0 ? model.seqLen() : config.contextWindow();
        int sizingWindow = Math.min(configured, model.seqLen());
        KvLayout layout = KvLayout.of(model, config.pageTokens());
        LineageIds ids = new LineageIds();
        this.prefillPool = new KvPool("prefill-0", prefillBackend.allocateKv(layout,
                pages(layout, prefillBackend, config.prefillKvBytes(), config.prefillPoolTokens(), 2L * sizingWindow)),
                new LineageRecorder(lineage, ids, clock, "prefill-0"));
        this.decodePool = new KvPool("decode-0", decodeBackend.allocateKv(layout,
                pages(layout, decodeBackend, config.decodeKvBytes(), config.decodePoolTokens(), 4L * sizingWindow)),
                new LineageRecorder(lineage, ids, clock, "decode-0"));
        if (!prefillPool.layout().equals(decodePool.layout())) {
            // a page image means nothing to a pool that arranges pages differently
            throw new IllegalStateException("prefill pool " + prefillPool.layout() + " and decode pool "
                    + decodePool.layout() + " lay out KV pages differently");
        }
        for (KvPool p : List.of(prefillPool, decodePool)) {
            p.detectorsEnabled(faults.detectorsOn());
            p.groundTruth(config.groundTruth());
        }
        int window = effectiveWindow(configured, faults);

        this.decode = new DecodeWorker(decodeBackend, decodePool, config.maxBatch(), stopTokens(loaded), this::release,
                safety, metrics, clock::nanoTime);
        this.intake = new KvIntake(decodePool, faults, safety, metrics, clock, config.deferredReleaseTimeout(),
                decode::enqueueReady, this::release, () -> admission().pagesFreed());
        decode.housekeeping(intake::reap);
        this.transport = new InProcessKvTransport(intake, faults);
        this.prefill = new PrefillWorker(prefillBackend, prefillPool, transport, config.prefillChunkTokens(), faults,
                safety, intake::expect, this::release, metrics, clock::nanoTime);
        this.admission = new Admission(decodePool, new Admission.Limits(window, prefillPool.capacityTokens(),
                decodePool.capacityTokens(), config.maxQueue(), !faults.has(Fault.LEGACY_FINISHED_CHECK)),
                prefill::enqueue, lineage::accepting, metrics, clock::nanoTime);

        this.prefillThread = Thread.ofPlatform().name("pagewarden-prefill").daemon().start(prefill);
        this.decodeThread = Thread.ofPlatform().name("pagewarden-decode").daemon().start(decode);
        this.canary = config.canaryInterval().isZero() ? null : Canary.start(this, config.canaryInterval(), safety, metrics);
    }

    /** Pages for a pool: from its byte budget when set, else from a token count (explicit or a multiple of the window). */
    private static int pages(KvLayout layout, Backend backend, long budgetBytes, int tokens, long defaultTokens) {
        long pages = budgetBytes > 0 ? budgetBytes / backend.kvPageBytes(layout)
                : layout.pagesFor(tokens > 0 ? tokens : defaultTokens);
        if (pages < 1) {
            throw new IllegalArgumentException("KV memory budget of " + budgetBytes + " bytes holds no page of "
                    + backend.kvPageBytes(layout) + " bytes");
        }
        if (pages > Integer.MAX_VALUE / layout.pageTokens()) {
            throw new IllegalArgumentException("KV pool of " + pages + " pages is too large");
        }
        return (int) pages;
    }

    private int effectiveWindow(int configured, LabFaults faults) {
        long capacity = Math.min(model.seqLen(), Math.min(prefillPool.capacityTokens(), decodePool.capacityTokens()));
        if (configured <= capacity) {
            return configured;
        }
        String numbers = "configured context window " + configured + " tokens exceeds what one request can hold: "
                + "model limit " + model.seqLen() + ", " + prefillPool.name() + " " + prefillPool.capacityTokens()
                + " tokens, " + decodePool.name() + " " + decodePool.capacityTokens() + " tokens";
        if (faults.has(Fault.SKIP_CAPACITY_CHECK)) {
            LOG.log(System.Logger.Level.WARNING, "LAB FAULT skip-capacity-check: " + numbers);
            return Math.min(configured, model.seqLen());
        }
        return switch (config.capacityPolicy()) {
            case STRICT -> throw new IllegalStateException(numbers + " (capacity policy strict: lower the window "
                    + "or give the KV pools more memory; policy clamp would start with window " + capacity + ")");
            case CLAMP -> {
                LOG.log(System.Logger.Level.WARNING, numbers + "; window clamped to " + capacity + " (policy clamp)");
                safety.report(SafetyEvent.Type.CAPACITY_CLAMPED, "engine", 0, null, List.of(),
                        numbers + "; advertised window lowered to " + capacity);
                yield (int) capacity;
            }
        };
    }

    /** The model's id in receipts and the requests table: its file name ("model" when loaded from nowhere). */
    private static String modelId(LoadedModel loaded) {
        if (loaded.source() == null || loaded.source().getFileName() == null) {
            return "model";
        }
        return loaded.source().getFileName().toString();
    }

    private static int[] stopTokens(LoadedModel loaded) {
        if (loaded.vocabulary() == null) {
            return new int[0];
        }
        // A BOS in generated text starts a new sequence (llama2.c's models end stories that way).
        return new int[]{loaded.vocabulary().eosId(), loaded.vocabulary().bosId()};
    }

    private Admission admission() {
        return admission;
    }

    private void release(Sequence seq) {
        admission.release(seq);
    }

    /**
     * Submits a request. Invalid input throws {@link InvalidRequestException} at once; a request
     * that does not fit completes its result with a rejection before any page is reserved.
     */
    public RequestHandle submit(GenerationRequest request, TokenListener listener) {
        for (int t : request.promptTokens()) {
            if (t < 0 || t >= model.vocabSize()) {
                throw new InvalidRequestException("prompt", "token id " + t + " is outside the vocabulary of " + model.vocabSize());
            }
        }
        Sequence seq = new Sequence(ids.next(), request, listener, clock.nanoTime());
        seq.receipts(receipts);
        seq.abortHook(() -> {
            admission.abortWaiting(seq);
            intake.abort(seq);
        });
        admission.submit(seq);
        return new RequestHandle(seq);
    }

    /** The effective context window: what admission accepts for prompt + max new tokens. */
    public int contextWindow() {
        return admission.contextWindow();
    }

    public ModelConfig model() {
        return model;
    }

    /** The model's id (its file name), as receipts name it. */
    public String modelId() {
        return modelId;
    }

    public EngineConfig config() {
        return config;
    }

    public String backendName() {
        return backendName;
    }

    public KvPool prefillPool() {
        return prefillPool;
    }

    public KvPool decodePool() {
        return decodePool;
    }

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
            prefillThread.join(5000);
            decodeThread.join(5000);
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
