package dev.pagewarden.core.transfer.net;

import dev.pagewarden.core.kv.KvLayout;
import dev.pagewarden.core.lineage.LineageEvent;
import dev.pagewarden.core.model.ModelConfig;
import dev.pagewarden.core.receipt.PageEpochRead;
import dev.pagewarden.core.sampling.SamplingParams;

import java.util.List;
import java.util.Map;

/**
 * A message on a control connection between engine nodes and the platform's cluster client. It travels in
 * the KV wire's framing (length, type, per-connection sequence number; a hello first, naming the connection's
 * purpose), on the same port as the pages.
 */
public sealed interface ControlMessage {

    /** Sampling as on the wire: the fields of {@code SamplingParams}. */
    record Sampling(float temperature, float topP, long seed, boolean ignoreEos) {
        public static Sampling of(SamplingParams p) {
            return new Sampling(p.temperature(), p.topP(), p.seed(), p.ignoreEos());
        }

        /** The parameters this says; throws {@link IllegalArgumentException} for values no sampler takes. */
        public SamplingParams params() {
            return new SamplingParams(temperature, topP, seed, ignoreEos);
        }
    }

    /** Platform to decode node: serve this request, with its prompt prefilled on the named prefill node. */
    record Submit(long requestId, String tenant, int[] prompt, int maxNewTokens, Sampling sampling, String prefillNode,
                  String prefillHost, int prefillPort) implements ControlMessage {
    }

    /** Decode node to prefill node: prefill this prompt and send its pages (transfer {@code generation}) to the named decode node. */
    record Prefill(long requestId, String tenant, int[] prompt, Sampling sampling, int generation, String decodeNode,
                   String decodeHost, int decodePort) implements ControlMessage {
    }

    /** Prefill node to decode node, before the pages: the first token it sampled. */
    record Prefilled(long requestId, int generation, int firstToken, long prefillNanos) implements ControlMessage {
    }

    /**
     * Prefill node to decode node: the request ended there ({@code code}, {@code message}). {@code pagesSent}:
     * whether its transfer had started (then the KV connection's ack settles the pages, not this message).
     */
    record PrefillFailed(long requestId, int generation, String code, String message, boolean pagesSent)
            implements ControlMessage {
    }

    /** Decode node to platform: one generated token. */
    record Token(long requestId, int token) implements ControlMessage {
    }

    /**
     * Decode node to platform: the request finished normally (reason STOP or LENGTH) with its timings, and every
     * page epoch its decode read with the final slot range (what the platform signs in its isolation receipt).
     */
    record Finished(long requestId, String reason, int outputTokens, long queuedNanos, long prefillNanos,
                    long firstTokenNanos, long totalNanos, List<PageEpochRead> reads) implements ControlMessage {
        public Finished {
            reads = List.copyOf(reads);
        }
    }

    /** How a request ended without finishing. */
    enum Outcome { INVALID, REJECTED, FAILED, ABORTED }

    /** Decode node to platform: the request ended without finishing; {@code code} is the API error code (the parameter for INVALID). */
    record Failed(long requestId, Outcome outcome, String code, String message) implements ControlMessage {
    }

    /** Platform to decode node, decode node to prefill node: abort the request. */
    record Abort(long requestId, String reason) implements ControlMessage {
    }

    /** Platform to decode node: finish the request normally after the token last delivered (a stop string matched). */
    record Stop(long requestId) implements ControlMessage {
    }

    /** One pool's figures as a node reports them. */
    record Pool(String name, int pageTokens, int capacityPages, long capacityTokens, int peakUsedPages,
                Map<String, Integer> pagesByState) {
        public Pool {
            pagesByState = Map.copyOf(pagesByState);
        }

        public int freePages() {
            return pagesByState.getOrDefault("free", 0);
        }
    }

    /**
     * Every node to each control peer, every heartbeat: who it is, what it serves, how full it is. {@code
     * transfersInFlight}: page transfers under way on the node; {@code lineageBacklog}: its page life steps not
     * yet acknowledged by the platform, and {@code lineageAccepting} false while that backlog is at its bound (the
     * node then admits no new request).
     */
    record Status(String role, String node, String modelId, String backend, ModelConfig model, KvLayout layout,
                  int contextWindow, Pool pool, int queued, int transfersInFlight, int lineageBacklog,
                  boolean lineageAccepting) implements ControlMessage {
    }

    /**
     * Node to platform: its page life steps numbered {@code firstSeq}, {@code firstSeq + 1}, ... (numbers of this
     * node's life, never reused within it). Sent again after a reconnect until acknowledged.
     */
    record Lineage(long firstSeq, List<LineageEvent> events) implements ControlMessage {
        public Lineage {
            events = List.copyOf(events);
        }
    }

    /** Platform to node: every page life step numbered up to {@code upTo} is in the platform's lineage sink. */
    record LineageAck(long upTo) implements ControlMessage {
    }
}
