package dev.pagewarden.core.cluster;

import dev.pagewarden.core.backend.Backend;
import dev.pagewarden.core.backend.BackendOptions;
import dev.pagewarden.core.backend.BackendProvider;
import dev.pagewarden.core.backend.Backends;
import dev.pagewarden.core.context.EngineContext;
import dev.pagewarden.core.engine.EngineConfig;
import dev.pagewarden.core.engine.EngineParts;
import dev.pagewarden.core.engine.PoolStats;
import dev.pagewarden.core.kv.KvLayout;
import dev.pagewarden.core.kv.KvPool;
import dev.pagewarden.core.model.load.LoadedModel;
import dev.pagewarden.core.safety.SafetyListener;
import dev.pagewarden.core.transfer.net.ControlMessage;

import java.util.List;

/**
 * One node's half of an engine: its backend, its KV pool (named after the node, sized as the engine sizes the
 * pool of that role) and the window that pool allows.
 */
record Stage(NodeRole role, String node, String modelId, String backendName, Backend backend, KvPool pool, int window,
             LoadedModel loaded) {

    /** The stage of {@code role} on the context's node. */
    static Stage create(NodeRole role, LoadedModel loaded, EngineConfig config, EngineContext context) {
        String node = context.node();
        BackendProvider provider = Backends.select(config.backend(), loaded);
        Backend backend = provider.create(loaded, new BackendOptions(config.threads()));
        try {
            KvLayout layout = KvLayout.of(loaded.config(), config.pageTokens());
            KvPool pool = switch (role) {
                case PREFILL -> EngineParts.prefillPool(context, node, backend, layout, config, loaded.config(), 1.0);
                case DECODE -> EngineParts.decodePool(context, node, backend, layout, config, loaded.config(), 1.0);
            };
            int window = EngineParts.effectiveWindow(EngineParts.configuredWindow(config, loaded.config()), loaded.config(),
                    List.of(pool), config.capacityPolicy(), context);
            return new Stage(role, node, EngineParts.modelId(loaded), provider.name(), backend, pool, window, loaded);
        } catch (RuntimeException e) {
            backend.close();
            throw e;
        }
    }

    /** A node has no application to hand safety events to: it logs each one (the platform's engine records them). */
    static SafetyListener logged(System.Logger log) {
        return e -> log.log(System.Logger.Level.WARNING, "safety event " + e.type() + " (" + e.severity() + ") on "
                + e.worker() + ", request " + e.requestId() + ", tenant " + e.tenant() + ", pages " + e.pages() + ": "
                + e.details());
    }

    ControlMessage.Status status(int queued, int transfersInFlight, LineageOutbox lineage) {
        return status(queued, transfersInFlight, lineage, Integer.MAX_VALUE);
    }

    /** The status, naming the decode pages a request reserves beyond its prompt's ({@code headroomPages}). */
    ControlMessage.Status status(int queued, int transfersInFlight, LineageOutbox lineage, int headroomPages) {
        PoolStats s = PoolStats.of(pool);
        return new ControlMessage.Status(role.label(), node, modelId, backendName, loaded.config(), pool.layout(), window,
                new ControlMessage.Pool(s.name(), s.pageTokens(), s.capacityPages(), s.capacityTokens(), s.peakUsedPages(),
                        s.pagesByState()), queued, transfersInFlight, lineage.backlog(), lineage.accepting(), headroomPages);
    }

    void close() {
        pool.storage().close();
        backend.close();
    }
}
