package dev.pagewarden.core.engine;

import dev.pagewarden.core.backend.Backend;
import dev.pagewarden.core.context.EngineContext;
import dev.pagewarden.core.kv.KvLayout;
import dev.pagewarden.core.kv.KvPool;
import dev.pagewarden.core.lineage.LineageRecorder;
import dev.pagewarden.core.model.ModelConfig;
import dev.pagewarden.core.model.load.LoadedModel;
import dev.pagewarden.core.safety.SafetyEvent;
import dev.pagewarden.core.safety.SafetyMonitor;

import java.util.List;
import java.util.Set;
import java.util.TreeSet;

/**
 * The decisions a whole {@link Engine} and an engine node (a prefill or a decode stage on its own) make
 * alike: how large a KV pool is, what window a request may use, which tokens end a generation and what
 * the model is called. One place, so that a node serves exactly what the engine in one process serves.
 */
public final class EngineParts {
    private static final System.Logger LOG = System.getLogger(Engine.class.getName());

    private EngineParts() {
    }

    /** Prefill pool default: twice the window (a prompt being prefilled while the next one starts). */
    public static final int PREFILL_WINDOWS = 2;
    /** Decode pool default: four times the window. */
    public static final int DECODE_WINDOWS = 4;

    /** The window asked for: the configured one, or the model's own limit when none is configured. */
    public static int configuredWindow(EngineConfig config, ModelConfig model) {
        return config.contextWindow() == 0 ? model.seqLen() : config.contextWindow();
    }

    /**
     * The share of the device memory the backend offers ({@link Backend#suggestedKvBytes}) that an engine's
     * prefill pool takes when both pools are sized from it, as their window defaults split it (2 : 4); the
     * decode pool, allocated after it, takes what is left.
     */
    public static final double PREFILL_MEMORY_SHARE = (double) PREFILL_WINDOWS / (PREFILL_WINDOWS + DECODE_WINDOWS);

    /**
     * The prefill pool {@code name} of the context's node (see {@link dev.pagewarden.core.lineage.LineageEvent#node}): sized from the config's prefill budget or token count, else from the
     * backend's memory figure ({@code memoryShare} of it), else {@link #PREFILL_WINDOWS} windows.
     */
    public static KvPool prefillPool(EngineContext context, String name, Backend backend, KvLayout layout, EngineConfig config,
                                     ModelConfig model, double memoryShare) {
        long sizingWindow = Math.min(configuredWindow(config, model), model.seqLen());
        return pool(context, name, backend, layout, pages(name, layout, backend, config.prefillKvBytes(),
                config.prefillPoolTokens(), PREFILL_WINDOWS * sizingWindow, config, memoryShare));
    }

    /**
     * The decode pool {@code name} of the context's node: sized from the config's decode budget or token count, else from the
     * backend's memory figure ({@code memoryShare} of it), else {@link #DECODE_WINDOWS} windows.
     */
    public static KvPool decodePool(EngineContext context, String name, Backend backend, KvLayout layout, EngineConfig config,
                                    ModelConfig model, double memoryShare) {
        long sizingWindow = Math.min(configuredWindow(config, model), model.seqLen());
        return pool(context, name, backend, layout, pages(name, layout, backend, config.decodeKvBytes(),
                config.decodePoolTokens(), DECODE_WINDOWS * sizingWindow, config, memoryShare));
    }

    private static KvPool pool(EngineContext context, String name, Backend backend, KvLayout layout, int pages) {
        return new KvPool(name, backend.allocateKv(layout, pages), new LineageRecorder(context.lineage(),
                context.lineageIds(), context.clock(), context.node(), name), context.checks());
    }

    /** The most token rows one step runs: a prefill chunk or a full decode batch. */
    static int stepRows(EngineConfig config) {
        return Math.max(config.prefillChunkTokens(), config.maxBatch());
    }

    /**
     * Pages for a pool: from its byte budget when set, else from an explicit token count, else from the
     * backend's memory figure when it has one (at most {@code maxBatch} times the window default: more
     * could never be in use at once by a full batch of the longest requests), else the window default.
     */
    static int pages(String name, KvLayout layout, Backend backend, long budgetBytes, int tokens, long defaultTokens,
                     EngineConfig config, double memoryShare) {
        if (budgetBytes == 0 && tokens == 0) {
            long suggested = backend.suggestedKvBytes(layout, stepRows(config), memoryShare);
            if (suggested > 0) {
                long cap = layout.pagesFor(Math.min((long) config.maxBatch() * defaultTokens,
                        (long) (Integer.MAX_VALUE / layout.pageTokens()) * layout.pageTokens()));
                long fit = suggested / backend.kvPageBytes(layout);
                long pages = Math.min(fit, cap);
                if (pages < 1) {
                    throw new IllegalArgumentException("KV pool " + name + ": the " + backend.name() + " backend's free "
                            + "memory figure of " + suggested + " bytes holds no page of " + backend.kvPageBytes(layout)
                            + " bytes; give the pool an explicit size or free device memory");
                }
                LOG.log(System.Logger.Level.INFO, "KV pool " + name + ": " + pages + " pages of " + layout.pageTokens()
                        + " tokens from the " + backend.name() + " backend's free memory figure of " + suggested
                        + " bytes (" + fit + " pages fit; at most max batch " + config.maxBatch() + " x " + defaultTokens
                        + " tokens)");
                return pages(layout, backend, pages * backend.kvPageBytes(layout), 0, defaultTokens);
            }
        }
        return pages(layout, backend, budgetBytes, tokens, defaultTokens);
    }

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

    /**
     * The window admission enforces: the configured one when every pool in {@code pools} can hold it for one
     * request; otherwise the context's capacity check decides: in production, policy strict refuses to start and
     * clamp lowers it to what they hold (and says so).
     */
    public static int effectiveWindow(int configured, ModelConfig model, List<KvPool> pools, CapacityPolicy policy,
                                      EngineContext context) {
        long capacity = model.seqLen();
        StringBuilder holds = new StringBuilder();
        for (KvPool p : pools) {
            capacity = Math.min(capacity, p.capacityTokens());
            holds.append(", ").append(p.name()).append(' ').append(p.capacityTokens()).append(" tokens");
        }
        if (configured <= capacity) {
            return configured;
        }
        String numbers = "configured context window " + configured + " tokens exceeds what one request can hold: "
                + "model limit " + model.seqLen() + holds;
        long fits = capacity;
        return context.hooks().capacityCheck().window(configured, model.seqLen(), numbers,
                () -> enforce(policy, numbers, fits, context.safety()));
    }

    /** The configured capacity policy's answer to a window over what the pools hold. */
    private static int enforce(CapacityPolicy policy, String numbers, long capacity, SafetyMonitor safety) {
        return switch (policy) {
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
    public static String modelId(LoadedModel loaded) {
        if (loaded.source() == null || loaded.source().getFileName() == null) {
            return "model";
        }
        return loaded.source().getFileName().toString();
    }

    /** Where generation ends: the tokenizer's end-of-generation ids (EOS, end of turn), never sent to the client. */
    public static int[] stopTokens(LoadedModel loaded) {
        Set<Integer> stops = new TreeSet<>();
        if (loaded.tokenizer() != null) {
            stops.addAll(loaded.tokenizer().endOfGeneration());
        }
        if (loaded.vocabulary() != null) {
            // A BOS in generated text starts a new sequence (llama2.c's models end stories that way).
            stops.add(loaded.vocabulary().eosId());
            stops.add(loaded.vocabulary().bosId());
        }
        return stops.stream().mapToInt(Integer::intValue).toArray();
    }
}
