package dev.pagewarden.core.cluster;

import dev.pagewarden.core.context.EngineContext;
import dev.pagewarden.core.fault.FaultHooks;

import dev.pagewarden.core.engine.EngineConfig;
import dev.pagewarden.core.engine.PoolStats;
import dev.pagewarden.core.lineage.LineageSink;
import dev.pagewarden.core.model.load.LoadedModel;
import dev.pagewarden.core.safety.SafetyMonitor;
import dev.pagewarden.core.spi.Clock;
import dev.pagewarden.core.spi.EngineMetrics;
import dev.pagewarden.core.transfer.KvReceiver;
import dev.pagewarden.core.transfer.net.ControlMessage;
import dev.pagewarden.core.transfer.net.ControlPeer;

import java.util.concurrent.atomic.AtomicBoolean;

/**
 * What a prefill and a decode node share: the stage (backend, pool, window), the lineage outbox, the control
 * runtime, and a close that runs once: requests still here are aborted, the runtime stops, then the node's own
 * workers, then the stage.
 */
abstract sealed class EngineNode implements AutoCloseable permits DecodeNode, PrefillNode {
    final Clock clock = Clock.SYSTEM;
    final EngineMetrics metrics = EngineMetrics.NONE;
    final SafetyMonitor safety;
    final LineageOutbox lineage;
    final EngineContext context;
    final Stage stage;
    private final System.Logger log;
    private final AtomicBoolean closed = new AtomicBoolean();

    EngineNode(NodeRole role, LoadedModel loaded, EngineConfig config, NodeOptions options, LineageSink lineage,
               System.Logger log) {
        this.log = log;
        this.lineage = new LineageOutbox(lineage, options.lineageBuffer());
        this.context = EngineContext.of(options.name(), FaultHooks.NONE, Stage.logged(log), metrics, clock, this.lineage);
        this.safety = context.safety();
        this.stage = Stage.create(role, loaded, config, context);
    }

    /** The node's control runtime (listening, heartbeats, lineage). */
    abstract NodeRuntime runtime();

    /** Asks every request still here to abort, for {@code why}. */
    abstract void abortAll(String why);

    /** Stops the node's own workers (after the runtime: no new work can come). */
    abstract void stopWorkers();

    /** Starts listening ({@code receiver}: where pages go; null: none come) or closes {@code node} and rethrows. */
    static <N extends EngineNode> N listen(N node, KvReceiver receiver, Runnable everyHeartbeat) throws InterruptedException {
        try {
            node.runtime().start(receiver, everyHeartbeat);
        } catch (RuntimeException | InterruptedException e) {
            node.close();
            throw e;
        }
        return node;
    }

    public int port() {
        return runtime().port();
    }

    public String name() {
        return runtime().options().name();
    }

    public int contextWindow() {
        return stage.window();
    }

    public String modelId() {
        return stage.modelId();
    }

    /** The node's pool now (a snapshot). */
    public PoolStats pool() {
        return PoolStats.of(stage.pool());
    }

    /** A message this role does not take: logged and dropped. */
    void ignore(ControlPeer from, ControlMessage m) {
        log.log(System.Logger.Level.WARNING, stage.role().label() + " node " + name() + " ignores "
                + m.getClass().getSimpleName() + " from " + from);
    }

    static void join(Thread worker) {
        try {
            worker.join(5000);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    /** Stops serving: no new connection, requests still here are aborted, then the workers and the stage shut down. */
    @Override
    public final void close() {
        if (!closed.compareAndSet(false, true)) {
            return; // once: a signal and a try-with-resources may both close it
        }
        abortAll(stage.role().label() + " node " + name() + " is closing");
        runtime().close();
        stopWorkers();
        stage.close();
    }
}
