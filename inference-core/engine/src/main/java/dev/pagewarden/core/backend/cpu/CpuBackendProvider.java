package dev.pagewarden.core.backend.cpu;

import dev.pagewarden.core.backend.Backend;
import dev.pagewarden.core.backend.BackendOptions;
import dev.pagewarden.core.backend.BackendProvider;
import dev.pagewarden.core.model.load.LoadedModel;
import dev.pagewarden.core.tensor.MatMul;
import dev.pagewarden.core.tensor.Parallel;

import java.util.Collections;
import java.util.Map;
import java.util.WeakHashMap;
import java.util.concurrent.locks.ReentrantLock;

/** The always-available CPU backend. Backends it creates share one kernel thread pool and take turns on it. */
public final class CpuBackendProvider implements BackendProvider {
    private Parallel pool;
    private final ReentrantLock computeLock = new ReentrantLock();
    /** Weak keys: an upload lives in its model's arena and goes when the model does. */
    private static final Map<LoadedModel, ResidentWeights> UPLOADED = Collections.synchronizedMap(new WeakHashMap<>());

    @Override
    public String name() {
        return "cpu";
    }

    @Override
    public boolean available() {
        return true;
    }

    @Override
    public String unavailableReason() {
        return "";
    }

    @Override
    public int priority() {
        return 0;
    }

    private static final System.Logger LOG = System.getLogger(CpuBackendProvider.class.getName());
    private static volatile boolean logged;

    @Override
    public synchronized Backend create(LoadedModel model, BackendOptions options) {
        if (!logged) {
            logged = true;
            LOG.log(System.Logger.Level.INFO, "CPU kernels: {0}", MatMul.kernelsInUse());
        }
        if (pool == null || pool.threads() != options.resolvedThreads()) {
            pool = new Parallel(options.resolvedThreads());
        }
        // one upload per loaded model, shared by every CPU backend on it (prefill, decode, later engines)
        ResidentWeights resident = UPLOADED.computeIfAbsent(model, m -> ResidentWeights.upload(m.weights(), m.arena()));
        return new CpuBackend(resident, pool, computeLock);
    }
}
