package dev.pagewarden.core.cluster;

import dev.pagewarden.core.receipt.Receipt;
import dev.pagewarden.core.receipt.ReceiptIssuer;
import dev.pagewarden.core.receipt.ReceiptSigner;
import dev.pagewarden.core.receipt.ServingIdentity;
import dev.pagewarden.core.request.FinishReason;
import dev.pagewarden.core.request.GenerationRequest;
import dev.pagewarden.core.request.GenerationResult;
import dev.pagewarden.core.request.InvalidRequestException;
import dev.pagewarden.core.request.RequestAbortedException;
import dev.pagewarden.core.request.RequestFailedException;
import dev.pagewarden.core.request.RequestRejectedException;
import dev.pagewarden.core.request.RequestState;
import dev.pagewarden.core.sequence.Sequence;
import dev.pagewarden.core.transfer.net.ControlMessage;
import dev.pagewarden.core.transfer.net.ControlPeer;

import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;

/**
 * The cluster client's side of the requests it placed on decode nodes: SUBMIT and ABORT out, TOKEN, FINISHED and
 * FAILED in. Results complete exactly as the local engine's do: same exception types and codes. A decode node lost
 * while it serves a request fails that request with {@link ClusterEngine#NODE_LOST}. With a {@link ReceiptSigner}, a
 * finished request's result carries an isolation receipt: the decode node reports the page epochs its decode read
 * (FINISHED), and this client signs them with the tokens it streamed, naming the decode node as {@code node_id} (the
 * owner of those pages, as its lineage says) and this client's start as the replica, with the cached prefix pages
 * the prefill node reused (named by that node's pool). Nodes hold no signing key.
 */
final class RemoteRequests {
    /** Null: results carry no receipt. */
    private final ReceiptSigner signer;
    /** This client's start, as receipts name the replica. */
    private final String replicaId = ServingIdentity.randomReplicaId();
    private final Map<Long, Pending> requests = new ConcurrentHashMap<>();
    /** Where each finished request's prompt prefix was prefilled (and so is likely cached). */
    private final PrefixAffinity affinity;

    /**
     * A request placed on {@code decode} (which serves {@code modelId}), to be prefilled on {@code prefill}; {@code
     * prefixKey}: its prompt prefix's {@link PrefixAffinity} key (null: none).
     */
    private record Pending(Sequence seq, Member decode, ControlPeer peer, String modelId, ClusterView.Live prefill,
                           String prefixKey) {
    }

    RemoteRequests(ReceiptSigner signer, PrefixAffinity affinity) {
        this.signer = signer;
        this.affinity = affinity;
    }

    /** Takes a request placed on {@code decode} and {@code prefill}; {@link #send} sends it. */
    void placed(Sequence seq, ClusterView.Live decode, ClusterView.Live prefill, String prefixKey) {
        Pending p = new Pending(seq, decode.member(), decode.peer(), decode.status().modelId(), prefill, prefixKey);
        requests.put(seq.id(), p);
        seq.abortHook(() -> {
            if (!p.peer().send(new ControlMessage.Abort(seq.id(), seq.abortReason()))) {
                end(p, new RequestAbortedException("request " + seq.id() + " aborted: " + seq.abortReason()), null);
            }
        });
    }

    /** SUBMIT to the decode node the request was placed on, naming its prefill node. */
    void send(Sequence seq) {
        Pending p = requests.get(seq.id());
        if (p == null) {
            return; // ended meanwhile (aborted, its node lost)
        }
        GenerationRequest request = seq.request();
        ClusterView.Live prefill = p.prefill();
        boolean sent = p.peer().send(new ControlMessage.Submit(seq.id(), request.tenant(), request.promptTokens(),
                request.maxNewTokens(), ControlMessage.Sampling.of(request.sampling()), prefill.status().node(),
                prefill.member().host, prefill.member().port, ControlMessage.Caching.of(request.caching())));
        if (!sent) {
            end(p, new RequestFailedException(ClusterEngine.NODE_LOST, "request " + seq.id() + ": decode node "
                    + p.peer().name() + " was lost before it got the request"), null);
        }
    }

    void token(ControlPeer from, ControlMessage.Token t) {
        Pending p = requests.get(t.requestId());
        if (p == null || p.peer() != from) {
            return;
        }
        Sequence seq = p.seq();
        advance(seq, RequestState.Decoding.class);
        seq.emit(t.token(), t.logprobs(), System.nanoTime());
        if (seq.stopRequested()) {
            // a stop string matched: finished here after this token; the node stops too
            from.send(new ControlMessage.Stop(seq.id()));
            end(p, null, FinishReason.STOP);
        }
    }

    void finished(ControlPeer from, ControlMessage.Finished f) {
        Pending p = requests.get(f.requestId());
        if (p == null || p.peer() != from) {
            return;
        }
        if (p.seq().outputCount() != f.outputTokens()) {
            end(p, new RequestFailedException(ClusterEngine.NODE_LOST, "request " + f.requestId() + ": decode node "
                    + from.name() + " reports " + f.outputTokens() + " tokens, " + p.seq().outputCount() + " arrived"), null);
            return;
        }
        if (!requests.remove(f.requestId(), p)) {
            return;
        }
        Sequence seq = p.seq();
        FinishReason reason = FinishReason.valueOf(f.reason());
        advance(seq, RequestState.Decoding.class);
        seq.moveTo(new RequestState.Finished(reason));
        int[] tokens = seq.toResult(reason, 0).outputTokens(); // no issuer on the sequence: tokens only
        // signed here over what the decode node read and the tokens that arrived here
        Receipt receipt = signer == null ? null : new ReceiptIssuer(p.modelId(), signer,
                new ServingIdentity(from.name(), replicaId)).issue(seq.id(), seq.tenant(), f.reads(), f.reused(), tokens);
        affinity.finished(p.prefixKey(), p.prefill().status().node());
        seq.result().complete(new GenerationResult(seq.id(), tokens, reason, f.queuedNanos(), f.prefillNanos(),
                f.firstTokenNanos(), f.totalNanos(), receipt, f.cachedTokens()));
    }

    void failed(ControlPeer from, ControlMessage.Failed f) {
        Pending p = requests.get(f.requestId());
        if (p == null || p.peer() != from) {
            return;
        }
        if (f.outcome() == ControlMessage.Outcome.ABORTED && !p.seq().abortRequested()) {
            // nobody here asked: the node aborted it on its way down
            end(p, new RequestFailedException(ClusterEngine.NODE_LOST, f.message()), null);
            return;
        }
        end(p, Outcomes.exception(f), null);
    }

    /** The connection to {@code member} closed: the requests it served fail. */
    void lost(Member member, ControlPeer peer) {
        for (Pending p : requests.values()) {
            if (p.peer() == peer) {
                end(p, new RequestFailedException(ClusterEngine.NODE_LOST, "request " + p.seq().id() + ": decode node "
                        + peer.name() + " (" + member.where() + ") was lost while serving it"), null);
            }
        }
    }

    /** Whether a request still waits on {@code member}'s answer. */
    boolean serving(Member member) {
        return requests.values().stream().anyMatch(p -> p.decode() == member);
    }

    /** Aborts every request still under way (the client closes). */
    void abortAll(String why) {
        for (Pending p : List.copyOf(requests.values())) {
            end(p, new RequestAbortedException("request " + p.seq().id() + " aborted: " + why), null);
        }
    }

    int inFlight() {
        return requests.size();
    }

    /** Ends a request here once: with {@code error}, or finished for {@code reason}. */
    private void end(Pending p, RuntimeException error, FinishReason reason) {
        if (!requests.remove(p.seq().id(), p)) {
            return;
        }
        Sequence seq = p.seq();
        if (error == null) {
            affinity.finished(p.prefixKey(), p.prefill().status().node());
            advance(seq, RequestState.Decoding.class);
            seq.finish(reason, System.nanoTime());
            return;
        }
        RequestState terminal = switch (error) {
            case RequestRejectedException r -> new RequestState.Rejected(r.code(), r.getMessage());
            case InvalidRequestException i -> new RequestState.Rejected(i.code(), i.getMessage());
            case RequestAbortedException a -> new RequestState.Aborted(seq.abortReason() == null ? "aborted" : seq.abortReason());
            case RequestFailedException f -> new RequestState.Failed(f.code(), f.getMessage());
            default -> new RequestState.Failed("engine_error", error.getMessage());
        };
        if (terminal instanceof RequestState.Failed) {
            advance(seq, RequestState.Reserved.class);
        }
        if (seq.state().canMoveTo(terminal)) {
            seq.moveTo(terminal);
        }
        seq.result().completeExceptionally(error);
    }

    /** Moves the local record along the lifecycle until {@code target} (the node went through these stages). */
    private static void advance(Sequence seq, Class<? extends RequestState> target) {
        List<RequestState> path = List.of(new RequestState.Admitted(), new RequestState.Reserved(),
                new RequestState.Prefilling(), new RequestState.Transferring(), new RequestState.Ready(),
                new RequestState.Decoding());
        for (RequestState next : path) {
            if (target.isInstance(seq.state())) {
                return;
            }
            if (seq.state().canMoveTo(next)) {
                seq.moveTo(next);
            }
        }
    }
}
