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
import dev.pagewarden.core.model.LoadedModel;
import dev.pagewarden.core.model.ModelConfig;
import dev.pagewarden.core.prefill.PrefillWorker;
import dev.pagewarden.core.request.GenerationRequest;
import dev.pagewarden.core.request.InvalidRequestException;
import dev.pagewarden.core.request.RequestHandle;
import dev.pagewarden.core.request.Sequence;
import dev.pagewarden.core.request.TokenListener;
import dev.pagewarden.core.spi.EngineMetrics;
import dev.pagewarden.core.transfer.InProcessKvTransport;
import dev.pagewarden.core.transfer.KvTransport;

import java.util.concurrent.atomic.AtomicLong;
import java.util.function.LongSupplier;

/**
 * One disaggregated engine in one process: a prefill worker and a decode worker, each with its own
 * backend instance and KV pool, joined by a transport. A request flows
 * submit -> admission -> prefill -> transfer -> decode -> result.
 */
public final class Engine implements AutoCloseable {
    private final ModelConfig model;
    private final String backendName;
    private final Backend prefillBackend;
    private final Backend decodeBackend;
    private final KvPool prefillPool;
    private final KvPool decodePool;
    private final Admission admission;
    private final PrefillWorker prefill;
    private final DecodeWorker decode;
    private final KvTransport transport;
    private final Thread prefillThread;
    private final Thread decodeThread;
    private final AtomicLong ids = new AtomicLong();
    private final LongSupplier clock = System::nanoTime;

    public Engine(LoadedModel loaded, EngineConfig config, EngineMetrics metrics) {
        this.model = loaded.config();
        BackendProvider provider = Backends.select(config.backend());
        this.backendName = provider.name();
        BackendOptions options = new BackendOptions(config.threads());
        this.prefillBackend = provider.create(loaded, options);
        this.decodeBackend = provider.create(loaded, options);

        int window = config.contextWindow() == 0 ? model.seqLen() : Math.min(config.contextWindow(), model.seqLen());
        KvLayout layout = KvLayout.of(model, config.pageTokens());
        int prefillTokens = config.prefillPoolTokens() == 0 ? 2 * window : config.prefillPoolTokens();
        int decodeTokens = config.decodePoolTokens() == 0 ? 4 * window : config.decodePoolTokens();
        this.prefillPool = new KvPool("prefill-0", prefillBackend.allocateKv(layout, layout.pagesFor(prefillTokens)));
        this.decodePool = new KvPool("decode-0", decodeBackend.allocateKv(layout, layout.pagesFor(decodeTokens)));
        // A window larger than a pool can hold for one request would admit what can never run.
        window = (int) Math.min(window, Math.min(prefillPool.capacityTokens(), decodePool.capacityTokens()));

        int[] stops = stopTokens(loaded);
        this.decode = new DecodeWorker(decodeBackend, decodePool, config.maxBatch(), stops, this::release, metrics, clock);
        KvIntake intake = new KvIntake(decodePool, decode::enqueueReady, this::release);
        this.transport = new InProcessKvTransport(intake);
        this.prefill = new PrefillWorker(prefillBackend, prefillPool, transport, config.prefillChunkTokens(),
                intake::expect, this::release, metrics, clock);
        this.admission = new Admission(decodePool, window, config.maxQueue(), prefill::enqueue, clock);

        this.prefillThread = Thread.ofPlatform().name("pagewarden-prefill").daemon().start(prefill);
        this.decodeThread = Thread.ofPlatform().name("pagewarden-decode").daemon().start(decode);
    }

    private static int[] stopTokens(LoadedModel loaded) {
        if (loaded.vocabulary() == null) {
            return new int[0];
        }
        // A BOS in generated text starts a new sequence (llama2.c's models end stories that way).
        return new int[]{loaded.vocabulary().eosId(), loaded.vocabulary().bosId()};
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
        Sequence seq = new Sequence(ids.incrementAndGet(), request, listener, clock.getAsLong());
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

    @Override
    public void close() {
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
