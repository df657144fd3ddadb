package dev.pagewarden.core.cluster;

import dev.pagewarden.core.admission.Admission;
import dev.pagewarden.core.engine.EngineConfig;
import dev.pagewarden.core.lineage.LineageSink;
import dev.pagewarden.core.model.load.LoadedModel;
import dev.pagewarden.core.prefill.PrefillWorker;
import dev.pagewarden.core.request.GenerationRequest;
import dev.pagewarden.core.request.RequestState;
import dev.pagewarden.core.sequence.Sequence;
import dev.pagewarden.core.request.TokenListener;
import dev.pagewarden.core.step.StepGuard;
import dev.pagewarden.core.transfer.KvTransport;
import dev.pagewarden.core.transfer.TransferJob;
import dev.pagewarden.core.transfer.net.ClusterTls;
import dev.pagewarden.core.transfer.net.ControlHandler;
import dev.pagewarden.core.transfer.net.ControlMessage;
import dev.pagewarden.core.transfer.net.ControlPeer;
import dev.pagewarden.core.transfer.net.NetKvTransport;

import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;

/**
 * An engine node that prefills: a prefill pool and its worker. A decode node asks it (PREFILL) to prefill a
 * prompt whose decode pages that decode node has already reserved; it answers PREFILLED with the first
 * sampled token and sends the pages to the decode node's port over a {@link NetKvTransport} (one per decode
 * node). A request it gives up before its transfer starts (aborted, failed) is reported as PREFILL_FAILED.
 * With the prefix cache on ({@link EngineConfig#prefixCache}), its pool keeps and reuses prompt pages per scope
 * exactly as the engine's prefill pool does in one process; a hit's pages still travel to the decode node as
 * checked frames, and PREFILLED names the reused pages for the request's receipt and usage.
 */
public final class PrefillNode extends EngineNode {
    private static final System.Logger LOG = System.getLogger(PrefillNode.class.getName());
    private final PrefillWorker<Sequence> prefill;
    private final NodeRuntime runtime;
    private final Thread prefillThread;
    private final Map<Long, Job> jobs = new ConcurrentHashMap<>();
    private final Map<String, NetKvTransport> transports = new ConcurrentHashMap<>();
    private final NodeConstraints constraints;
    /** The highest transfer generation a re-prefill may name: far more preemptions than any node allows one request. */
    private static final int MAX_GENERATION = 1 << 16;

    /** One prompt to prefill for a decode node. */
    private record Job(Sequence seq, ControlPeer decode, ControlMessage.Prefill request, boolean[] started) {
    }

    private PrefillNode(LoadedModel loaded, EngineConfig config, NodeOptions options, ClusterTls tls, LineageSink lineage) {
        super(NodeRole.PREFILL, loaded, config, options, lineage, LOG);
        this.prefill = new PrefillWorker<>(new StepGuard(stage.backend(), stage.pool(), context.hooks()),
                loaded.config().vocabSize(), new Router(tls, options), config.prefillChunkTokens(), context,
                this::transferStarting, seq -> { });
        if (config.prefixCache()) {
            // the same cache as the engine's in one process: pages of a scope, reused by that scope only
            prefill.prefixCache(stage.modelId());
        }
        this.constraints = new NodeConstraints(loaded.tokenizer());
        this.runtime = new NodeRuntime(options, tls, stage.pool().layout(), new Handler(),
                () -> stage.status(prefill.pending(), transfersInFlight(), this.lineage), this.lineage);
        this.prefillThread = Thread.ofPlatform().name("pagewarden-prefill").daemon().start(prefill);
    }

    /** Starts a prefill node (see {@link DecodeNode#start} for the arguments). */
    public static PrefillNode start(LoadedModel loaded, EngineConfig config, NodeOptions options, ClusterTls tls,
                                    LineageSink lineage) throws InterruptedException {
        return listen(new PrefillNode(loaded, config, options, tls, lineage), null, () -> { });
    }

    @Override
    NodeRuntime runtime() {
        return runtime;
    }

    /** Whether the job's pages have started to leave (its PREFILLED went out). */
    private static boolean started(Job j) {
        synchronized (j) {
            return j.started()[0];
        }
    }

    /** Prompts whose pages are on their way to a decode node. */
    private int transfersInFlight() {
        int n = 0;
        for (Job j : jobs.values()) {
            synchronized (j) {
                n += j.started()[0] ? 1 : 0;
            }
        }
        return n;
    }

    /** Sends each transfer to the decode node its request names, over that node's own connection. */
    private final class Router implements KvTransport {
        private final ClusterTls tls;
        private final NodeOptions options;

        Router(ClusterTls tls, NodeOptions options) {
            this.tls = tls;
            this.options = options;
        }

        @Override
        public void send(TransferJob job) {
            Job j = jobs.get(job.requestId());
            if (j == null) {
                job.onOutcome().accept(false);
                return;
            }
            ControlMessage.Prefill p = j.request();
            NetKvTransport t = transports.computeIfAbsent(p.decodeNode() + "@" + p.decodeHost() + ":" + p.decodePort(),
                    k -> new NetKvTransport(p.decodeHost(), p.decodePort(), tls.clientContext(), options.name(),
                            options.timeout(), options.timeout(), options.timeout().multipliedBy(3), 4));
            t.send(new TransferJob(job.requestId(), job.tenant(), job.generation(), job.source(), job.sourcePages(),
                    job.tokens(), ok -> {
                        jobs.remove(job.requestId(), j);
                        job.onOutcome().accept(ok);
                    }));
        }

        @Override
        public void close() {
            for (NetKvTransport t : transports.values()) {
                t.close();
            }
        }
    }

    private final class Handler implements ControlHandler {
        @Override
        public void received(ControlPeer from, ControlMessage message) {
            switch (message) {
                case ControlMessage.Prefill p -> prefill(from, p);
                case ControlMessage.Abort a -> {
                    Job j = jobs.get(a.requestId());
                    if (j != null && j.decode() == from) {
                        j.seq().requestAbort(a.reason());
                    }
                }
                case ControlMessage.Status s -> { }
                case ControlMessage.Submit s -> ignore(from, s);
                case ControlMessage.Prefilled p -> ignore(from, p);
                case ControlMessage.PrefillFailed f -> ignore(from, f);
                case ControlMessage.Token t -> ignore(from, t);
                case ControlMessage.Finished f -> ignore(from, f);
                case ControlMessage.Failed f -> ignore(from, f);
                case ControlMessage.Stop s -> ignore(from, s);
                case ControlMessage.Lineage l -> ignore(from, l);
                case ControlMessage.LineageAck a -> { } // taken by the runtime
            }
        }

        @Override
        public void closed(ControlPeer peer) {
            for (Job j : jobs.values()) {
                if (j.decode() == peer) {
                    j.seq().requestAbort("the control connection of decode node " + peer.name() + " was lost");
                }
            }
        }
    }

    private void prefill(ControlPeer from, ControlMessage.Prefill p) {
        if (!lineage.accepting()) {
            // fail closed: no page life step may go unrecorded (the decode node's admission checks its own)
            from.send(new ControlMessage.PrefillFailed(p.requestId(), p.generation(), "audit_backpressure",
                    "prefill node " + name() + " holds " + lineage.backlog() + " page life steps the platform has not "
                            + "acknowledged; retry later", false));
            return;
        }
        Sequence seq;
        try {
            int[] generated = p.generated();
            if (generated.length == 0 ? p.generation() != 1 : p.generation() < 2 || p.generation() > MAX_GENERATION) {
                throw new IllegalArgumentException("transfer generation " + p.generation() + " after " + generated.length
                        + " generated tokens; a first prefill is generation 1, a re-prefill a later one");
            }
            int vocab = stage.loaded().config().vocabSize();
            for (int t : generated) {
                if (t < 0 || t >= vocab) {
                    throw new IllegalArgumentException("generated token " + t + " is outside the vocabulary");
                }
            }
            GenerationRequest request = new GenerationRequest(p.tenant(), p.prompt(), generated.length + 1,
                    p.sampling().params(constraints), p.caching().caching());
            Admission.validate(request, vocab, Integer.MAX_VALUE);
            seq = new Sequence(p.requestId(), request, TokenListener.NONE, clock.nanoTime());
            resume(seq, generated, p.generation());
        } catch (RuntimeException e) {
            from.send(new ControlMessage.PrefillFailed(p.requestId(), p.generation(), "invalid_request", e.getMessage(), false));
            return;
        }
        Job j = new Job(seq, from, p, new boolean[1]);
        Job earlier = jobs.putIfAbsent(p.requestId(), j);
        // a re-prefill may come before the ack of the earlier transfer, whose pages the decode node already took
        if (earlier != null && !(earlier.request().generation() < p.generation() && started(earlier)
                && jobs.replace(p.requestId(), earlier, j))) {
            from.send(new ControlMessage.PrefillFailed(p.requestId(), p.generation(), "duplicate_request",
                    "request " + p.requestId() + " is already being prefilled on node " + name(), false));
            return;
        }
        seq.result().whenComplete((r, error) -> {
            // ends here only when given up (a prefilled request stays "transferring" on this side)
            jobs.remove(p.requestId(), j);
            boolean started;
            synchronized (j) {
                started = j.started()[0];
            }
            ControlMessage.Failed f = Outcomes.failed(p.requestId(), error);
            from.send(new ControlMessage.PrefillFailed(p.requestId(), p.generation(), f.code(), f.message(), started));
        });
        // the decode node holds the reservation; this side moves the request as its engine would have
        seq.moveTo(new RequestState.Admitted());
        seq.moveTo(new RequestState.Reserved());
        prefill.enqueue(seq);
    }

    /**
     * A re-prefill after a preemption: the sequence holds the tokens its decode node generated so far (the last one
     * pending), so the prefill writes prompt + all but the last and samples nothing, as the engine's re-prefill does;
     * its transfer is the decode node's next generation.
     */
    private static void resume(Sequence seq, int[] generated, int generation) {
        for (int t : generated) {
            seq.emit(t, null, 0);
        }
        if (generated.length > 0) {
            seq.pendingToken(generated[generated.length - 1]);
        }
        while (seq.transferGeneration() < generation - 1) {
            seq.nextTransferGeneration();
        }
    }

    /** The pages are about to leave: the decode node learns the first token first. */
    private void transferStarting(Sequence seq) {
        Job j = jobs.get(seq.id());
        if (j == null) {
            return;
        }
        synchronized (j) {
            j.started()[0] = true;
        }
        j.decode().send(new ControlMessage.Prefilled(seq.id(), seq.transferGeneration(), seq.pendingToken(),
                seq.prefillNanos(), seq.sampler().lastLogprobs(), seq.cachedPromptTokens(), seq.reusedPages()));
    }

    @Override
    void abortAll(String why) {
        for (Job j : List.copyOf(jobs.values())) {
            j.seq().requestAbort(why);
        }
    }

    @Override
    void stopWorkers() {
        prefill.stop();
        join(prefillThread);
        for (NetKvTransport t : transports.values()) {
            t.close();
        }
    }
}
