package dev.pagewarden.core.cluster;

import dev.pagewarden.core.admission.Admission;
import dev.pagewarden.core.decode.DecodeWorker;
import dev.pagewarden.core.decode.KvIntake;
import dev.pagewarden.core.engine.EngineConfig;
import dev.pagewarden.core.engine.EngineParts;
import dev.pagewarden.core.lineage.LineageSink;
import dev.pagewarden.core.model.load.LoadedModel;
import dev.pagewarden.core.receipt.PageEpochRead;
import dev.pagewarden.core.receipt.ReusedPage;
import dev.pagewarden.core.request.TokenListener;
import dev.pagewarden.core.sampling.TokenLogprobs;
import dev.pagewarden.core.request.GenerationRequest;
import dev.pagewarden.core.request.GenerationResult;
import dev.pagewarden.core.request.InvalidRequestException;
import dev.pagewarden.core.request.RequestState;
import dev.pagewarden.core.sequence.Sequence;
import dev.pagewarden.core.step.StepGuard;
import dev.pagewarden.core.transfer.DecodeTicks;
import dev.pagewarden.core.transfer.net.ClusterTls;
import dev.pagewarden.core.transfer.net.ControlHandler;
import dev.pagewarden.core.transfer.net.ControlMessage;
import dev.pagewarden.core.transfer.net.ControlPeer;

import java.io.IOException;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.RejectedExecutionException;
import java.util.function.LongPredicate;

/**
 * An engine node that decodes: a decode pool with its admission, KV intake and decode worker, serving the
 * platform's requests. A SUBMIT is admitted here first - its decode reservation (the prompt's pages plus {@link
 * EngineConfig#decodeHeadroomPages}, at most the whole request) before any page is touched anywhere, so a request
 * that cannot fit is refused and no prefill node hears of it. Decode takes further pages one at a time; when the
 * pool has none, the most recently admitted running request is preempted as in one process: its pages are released
 * as the engine's preemption releases them (only pages no transfer can still write to), it waits in this node's
 * admission ahead of new requests, and once it has pages again its prefill node re-prefills the prompt and the tokens
 * generated so far but the last (PREFILL naming them; nothing is sampled there) and sends those pages here as a new
 * transfer; decoding goes on with the pending token, the platform sees only a pause. Preempted more than {@link
 * EngineConfig#maxPreemptions} times, it fails with preempted_too_often. Once reserved, the
 * intake expects the transfer, and the chosen prefill node is asked (PREFILL, on a control connection this
 * node keeps to it) to prefill the prompt and send the pages to this node's port. Its first token comes
 * as PREFILLED; the decode sampler goes on from it as if it had drawn it itself. Tokens stream back to the
 * platform as TOKEN, and the request ends with FINISHED or FAILED.
 */
public final class DecodeNode extends EngineNode {
    private static final System.Logger LOG = System.getLogger(DecodeNode.class.getName());
    private final EngineConfig config;
    private final Admission<Sequence> admission;
    private final KvIntake<Sequence> intake;
    private final DecodeWorker<Sequence> decode;
    private final NodeRuntime runtime;
    private final Thread decodeThread;
    private final ExecutorService prefillSender;
    private final Map<Long, Remote> requests = new ConcurrentHashMap<>();
    private final Map<String, ControlPeer> prefillPeers = new ConcurrentHashMap<>();
    private final Map<String, Object> connecting = new ConcurrentHashMap<>();
    /** When each prefill node's connection last carried a message (its STATUS comes every heartbeat). */
    private final Map<ControlPeer, Long> prefillSeen = new ConcurrentHashMap<>();
    private final NodeConstraints constraints;

    /** One request this node serves: where it came from, where it is prefilled, and its first token's rendezvous. */
    private static final class Remote {
        final Sequence seq;
        final ControlPeer platform;
        final String prefillNode;
        final String prefillHost;
        final int prefillPort;
        volatile ControlPeer prefill;
        volatile int generation;
        /** Guarded by this: the first token (-1 until PREFILLED), and whether the pages are verified. */
        int firstToken = -1;
        long prefillNanos;
        TokenLogprobs firstLogprobs;
        List<ReusedPage> reused = List.of();
        boolean ready;
        long readySince;

        Remote(Sequence seq, ControlPeer platform, ControlMessage.Submit s) {
            this.seq = seq;
            this.platform = platform;
            this.prefillNode = s.prefillNode();
            this.prefillHost = s.prefillHost();
            this.prefillPort = s.prefillPort();
        }

        /**
         * Ends the wait of verified pages for their first token, when they wait and {@code since}
         * accepts the time they became ready; returns whether it did (the caller then ends the request).
         */
        synchronized boolean stopAwaitingFirstToken(LongPredicate since) {
            if (ready && firstToken < 0 && since.test(readySince)) {
                ready = false;
                return true;
            }
            return false;
        }
    }

    private DecodeNode(LoadedModel loaded, EngineConfig config, NodeOptions options, ClusterTls tls, LineageSink lineage) {
        super(NodeRole.DECODE, loaded, config, options, lineage, LOG);
        this.config = config;
        int vocab = loaded.config().vocabSize();
        this.decode = new DecodeWorker<>(new StepGuard(stage.backend(), stage.pool(), context.hooks()), vocab, new DecodeTicks(),
                config.maxBatch(), EngineParts.stopTokens(loaded), context, this::release, config.maxPreemptions(),
                this::requeue);
        this.intake = new KvIntake<>(stage.pool(), context, config.deferredReleaseTimeout(), this::transferReady,
                this::release, this::pagesFreed);
        intake.startTimeout(config.transferStartTimeout());
        decode.housekeeping(() -> {
            intake.reap();
            firstTokensOverdue();
        });
        // a prefill node checks its own pool; the decode node cannot know it, so only its own pool limits here
        // pages on demand as in one process: prompt + headroom reserved, decode grows a page at a time; a preempted
        // request waits here again and is re-prefilled by its prefill node
        this.admission = new Admission<>(stage.pool(), new Admission.Limits(vocab, stage.window(), Long.MAX_VALUE,
                stage.pool().capacityTokens(), config.maxQueue(), true), this::startPrefill, this.lineage::accepting, metrics,
                clock::nanoTime, config.decodeHeadroomPages());
        this.constraints = new NodeConstraints(loaded.tokenizer());
        // one thread per PREFILL: connecting to a prefill node that does not answer holds up no request for another
        this.prefillSender = Executors.newThreadPerTaskExecutor(Thread.ofVirtual().name("pagewarden-prefill-request-", 0)
                .factory());
        this.runtime = new NodeRuntime(options, tls, stage.pool().layout(), new Handler(),
                () -> stage.status(admission.queued(), intake.inFlight(), this.lineage, config.decodeHeadroomPages()),
                this.lineage);
        this.decodeThread = Thread.ofPlatform().name("pagewarden-decode").daemon().start(decode);
    }

    /**
     * Starts a decode node for {@code loaded} with the pool and admission settings of {@code config}, listening
     * as {@code options} say, with {@code tls} (its name must be {@code options.name()}); page life steps go to
     * {@code lineage} (an application's own sink, {@link LineageSink#NONE} for none) and to every platform connection
     * (LINEAGE, kept until acknowledged: see {@link LineageOutbox}).
     */
    public static DecodeNode start(LoadedModel loaded, EngineConfig config, NodeOptions options, ClusterTls tls,
                                   LineageSink lineage) throws InterruptedException {
        DecodeNode node = new DecodeNode(loaded, config, options, tls, lineage);
        return listen(node, node.intake, node::silentPrefillNodes);
    }

    @Override
    NodeRuntime runtime() {
        return runtime;
    }

    /** Requests this node serves now (admitted or waiting). */
    public int inFlight() {
        return requests.size();
    }

    private void release(Sequence seq) {
        admission.release(seq);
    }

    /** A preempted request waits for pages again, ahead of new ones; once reserved it is re-prefilled. */
    private void requeue(Sequence seq) {
        admission.requeue(seq);
    }

    /**
     * A prefill node whose connection carried nothing (not even its STATUS) for three heartbeats and the
     * network timeout is taken for gone: its connection is closed, which fails the requests still waiting
     * for it, rather than letting them wait on a connection that no longer delivers.
     */
    private void silentPrefillNodes() {
        NodeOptions o = runtime.options();
        long limit = Math.max(3 * o.heartbeat().toNanos(), o.timeout().toNanos());
        long now = clock.nanoTime();
        prefillSeen.forEach((peer, seen) -> {
            if (now - seen > limit) {
                LOG.log(System.Logger.Level.WARNING, "prefill node " + peer + " silent for " + (now - seen) / 1_000_000
                        + " ms; closing its connection");
                peer.close();
            }
        });
    }

    private void pagesFreed() {
        admission.pagesFreed();
    }

    private final class Handler implements ControlHandler {
        @Override
        public void received(ControlPeer from, ControlMessage message) {
            prefillSeen.computeIfPresent(from, (p, t) -> clock.nanoTime());
            switch (message) {
                case ControlMessage.Submit s -> submit(from, s);
                case ControlMessage.Abort a -> {
                    Remote r = requests.get(a.requestId());
                    if (r != null && r.platform == from) {
                        r.seq.requestAbort(a.reason());
                    }
                }
                case ControlMessage.Stop s -> {
                    Remote r = requests.get(s.requestId());
                    if (r != null && r.platform == from) {
                        r.seq.requestStop();
                    }
                }
                case ControlMessage.Prefilled p -> prefilled(from, p);
                case ControlMessage.PrefillFailed f -> prefillFailed(from, f);
                case ControlMessage.Status s -> { } // a prefill node's heartbeat: its connection is alive
                case ControlMessage.Prefill p -> ignore(from, p);
                case ControlMessage.Token t -> ignore(from, t);
                case ControlMessage.Finished f -> ignore(from, f);
                case ControlMessage.Failed f -> ignore(from, f);
                case ControlMessage.Lineage l -> ignore(from, l);
                case ControlMessage.LineageAck a -> { } // taken by the runtime
            }
        }

        @Override
        public void closed(ControlPeer peer) {
            prefillPeers.values().remove(peer);
            prefillSeen.remove(peer);
            for (Remote r : requests.values()) {
                if (r.platform == peer) {
                    r.seq.requestAbort("the platform's control connection was lost");
                } else if (r.prefill == peer) {
                    prefillLost(r, "the control connection to prefill node " + peer.name() + " was lost");
                }
            }
        }
    }

    private void submit(ControlPeer from, ControlMessage.Submit s) {
        GenerationRequest request;
        try {
            request = admission.validate(new GenerationRequest(s.tenant(), s.prompt(), s.maxNewTokens(),
                    s.sampling().params(constraints), s.caching().caching())).request();
        } catch (InvalidRequestException e) {
            from.send(new ControlMessage.Failed(s.requestId(), ControlMessage.Outcome.INVALID,
                    Outcomes.invalidCode(e.param(), e.code()), e.getMessage()));
            return;
        } catch (IllegalArgumentException e) {
            from.send(new ControlMessage.Failed(s.requestId(), ControlMessage.Outcome.INVALID,
                    Outcomes.invalidCode("sampling", "invalid_request"), e.getMessage()));
            return;
        }
        Sequence seq = new Sequence(s.requestId(), request, new TokenListener() {
            @Override
            public void onToken(long id, int token) {
                onToken(id, token, null);
            }

            @Override
            public void onToken(long id, int token, TokenLogprobs logprobs) {
                from.send(new ControlMessage.Token(id, token, logprobs));
            }
        }, clock.nanoTime());
        Remote r = new Remote(seq, from, s);
        if (requests.putIfAbsent(s.requestId(), r) != null) {
            from.send(new ControlMessage.Failed(s.requestId(), ControlMessage.Outcome.REJECTED, "duplicate_request",
                    "request " + s.requestId() + " is already being served by node " + name()));
            return;
        }
        seq.abortHook(() -> {
            admission.abortWaiting(seq);
            intake.abort(seq);
            abortWhileAwaitingFirstToken(r);
            ControlPeer p = r.prefill;
            if (p != null) {
                p.send(new ControlMessage.Abort(seq.id(), seq.abortReason()));
            }
        });
        seq.result().whenComplete((result, error) -> {
            requests.remove(seq.id(), r);
            // the reads are the decode thread's, which completes the result: final by now
            from.send(result != null ? finished(result, seq.allReads(), seq.reusedPages()) : Outcomes.failed(seq.id(), error));
        });
        admission.submit(seq);
    }

    private static ControlMessage.Finished finished(GenerationResult r, List<PageEpochRead> reads,
                                                    List<ReusedPage> reused) {
        return new ControlMessage.Finished(r.requestId(), r.finishReason().name(), r.outputTokens().length, r.queuedNanos(),
                r.prefillNanos(), r.timeToFirstNanos(), r.totalNanos(), reads, r.cachedTokens(), reused);
    }

    /** Admission reserved the decode pages: ask the prefill node (off the caller's thread: connecting may take a while). */
    private void startPrefill(Sequence seq) {
        Remote r = requests.get(seq.id());
        try {
            prefillSender.execute(() -> sendPrefill(r));
        } catch (RejectedExecutionException e) {
            release(seq);
            seq.fail("kv_transfer_failed", "decode node " + name() + " is closing");
        }
    }

    private void sendPrefill(Remote r) {
        Sequence seq = r.seq;
        if (seq.abortRequested()) {
            release(seq);
            seq.abortNow();
            return;
        }
        seq.moveTo(new RequestState.Prefilling());
        int generation = seq.nextTransferGeneration();
        synchronized (r) { // a re-prefill after a preemption: the new transfer meets its own PREFILLED
            r.generation = generation;
            r.firstToken = -1;
            r.ready = false;
            r.reused = List.of();
        }
        // expected before the prefill node can send a page, and before anyone can see "transferring"; the start
        // timeout runs from PREFILLED, as the prefill node may have a queue of prompts before this one
        intake.expect(seq, false);
        seq.moveTo(new RequestState.Transferring());
        ControlPeer p;
        try {
            p = prefillPeer(r.prefillNode, r.prefillHost, r.prefillPort);
        } catch (IOException e) {
            endBeforePages(r, "kv_transfer_failed", "prefill node " + r.prefillNode + " at " + r.prefillHost + ":"
                    + r.prefillPort + " cannot be reached: " + e.getMessage());
            return;
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            endBeforePages(r, "kv_transfer_failed", "decode node " + name() + " is closing");
            return;
        }
        r.prefill = p;
        ControlMessage.Sampling s = ControlMessage.Sampling.of(seq.request().sampling());
        boolean sent = p.send(new ControlMessage.Prefill(seq.id(), seq.tenant(), seq.request().promptTokens(), s, generation,
                name(), runtime.options().advertisedHost(), port(), ControlMessage.Caching.of(seq.request().caching()),
                generated(seq)));
        if (!sent) {
            endBeforePages(r, "kv_transfer_failed", "the control connection to prefill node " + r.prefillNode + " closed");
        } else if (seq.abortRequested()) {
            p.send(new ControlMessage.Abort(seq.id(), seq.abortReason())); // the abort came while connecting
        }
    }

    /** The tokens generated so far (the last one pending, its KV not yet written); none before the first token. */
    private static int[] generated(Sequence seq) {
        if (seq.outputCount() == 0) {
            return new int[0];
        }
        int promptLength = seq.request().promptLength();
        int[] prefill = seq.prefillTokens();
        int[] out = Arrays.copyOfRange(prefill, promptLength, prefill.length + 1);
        out[out.length - 1] = seq.pendingToken();
        return out;
    }

    private ControlPeer prefillPeer(String node, String host, int port) throws IOException, InterruptedException {
        String key = node + "@" + host + ":" + port;
        synchronized (connecting.computeIfAbsent(key, k -> new Object())) { // one connection per prefill node
            ControlPeer p = prefillPeers.get(key);
            if (p != null && p.isOpen()) {
                return p;
            }
            p = runtime.connect(node, host, port);
            prefillSeen.put(p, clock.nanoTime());
            prefillPeers.put(key, p);
            return p;
        }
    }

    /** The prefill side will never send a page of this transfer: end the request (its reservation comes back). */
    private void endBeforePages(Remote r, String code, String message) {
        if (intake.withdraw(r.seq.id(), r.generation)) {
            release(r.seq);
            if (r.seq.abortRequested()) {
                r.seq.abortNow(); // the caller's abort reached the prefill node first: it ends as aborted
            } else {
                r.seq.fail(code, message);
            }
        }
    }

    private void prefilled(ControlPeer from, ControlMessage.Prefilled p) {
        Remote r = requests.get(p.requestId());
        if (r == null || r.prefill != from || r.generation != p.generation()) {
            return; // ended meanwhile
        }
        intake.senderStarting(p.requestId(), p.generation());
        boolean go;
        synchronized (r) {
            r.firstToken = p.firstToken();
            r.prefillNanos = p.prefillNanos();
            r.firstLogprobs = p.logprobs();
            r.reused = p.reused();
            go = r.ready;
        }
        if (go) {
            decodeFrom(r);
        }
    }

    /** The intake verified the pages. */
    private void transferReady(Sequence seq) {
        Remote r = requests.get(seq.id());
        if (r == null) {
            release(seq);
            seq.fail("kv_transfer_failed", "request " + seq.id() + " is no longer known to decode node " + name());
            return;
        }
        boolean go;
        synchronized (r) {
            r.ready = true;
            r.readySince = clock.nanoTime();
            go = r.firstToken >= 0;
        }
        if (go) {
            decodeFrom(r);
        }
    }

    private void decodeFrom(Remote r) {
        Sequence seq = r.seq;
        // a re-prefill after a preemption sampled nothing: the pending token and the sampler are this side's
        boolean resume = seq.outputCount() > 0;
        int first;
        TokenLogprobs logprobs;
        synchronized (r) {
            if (!r.ready) {
                return; // ended meanwhile
            }
            r.ready = false;
            first = r.firstToken;
            logprobs = r.firstLogprobs;
            if (!resume) {
                seq.pendingToken(first);
                seq.prefillNanos(r.prefillNanos);
            }
            seq.reusedPages(r.reused); // the prefill node's cache hit: usage and receipt name it
        }
        if (!resume) {
            seq.sampler().skipDraw(first, logprobs); // the prefill node drew the first token with this seed
        }
        decode.enqueueReady(seq);
    }

    /** Pages verified but the first token never came (its connection went without a word): fail, never wait for ever. */
    private void firstTokensOverdue() {
        long now = clock.nanoTime();
        long limit = config.transferStartTimeout().toNanos();
        for (Remote r : requests.values()) {
            if (r.stopAwaitingFirstToken(readySince -> now - readySince > limit)) {
                release(r.seq);
                r.seq.fail("kv_transfer_failed", "the first token of request " + r.seq.id() + " never came from prefill node "
                        + r.prefillNode);
            }
        }
    }

    private void abortWhileAwaitingFirstToken(Remote r) {
        if (r.stopAwaitingFirstToken(readySince -> true)) {
            release(r.seq);
            r.seq.abortNow();
        }
    }

    private void prefillFailed(ControlPeer from, ControlMessage.PrefillFailed f) {
        if (f.pagesSent()) {
            return; // the KV connection's ack settles the pages; the intake fails an unfinished transfer
        }
        Remote r = requests.get(f.requestId());
        if (r != null && r.prefill != from) {
            return;
        }
        if (r == null) {
            intake.withdraw(f.requestId(), f.generation()); // an aborted request's deferred pages: settled as by an ack
            return;
        }
        String code = "aborted".equals(f.code()) ? "kv_transfer_failed" : f.code();
        endBeforePages(r, code, "prefill node " + from.name() + ": " + f.message());
    }

    private void prefillLost(Remote r, String why) {
        endBeforePages(r, "kv_transfer_failed", why);
        if (r.stopAwaitingFirstToken(readySince -> true)) {
            release(r.seq);
            r.seq.fail("kv_transfer_failed", why + " before the first token came");
        }
    }

    @Override
    void abortAll(String why) {
        for (Remote r : List.copyOf(requests.values())) {
            r.seq.requestAbort(why);
        }
    }

    @Override
    void stopWorkers() {
        prefillSender.shutdownNow();
        decode.stop();
        join(decodeThread);
    }
}
