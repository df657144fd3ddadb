package dev.pagewarden.core.transfer.net;

import dev.pagewarden.core.kv.KvLayout;
import dev.pagewarden.core.lineage.LineageEvent;
import dev.pagewarden.core.model.ModelConfig;
import dev.pagewarden.core.receipt.PageEpochRead;
import dev.pagewarden.core.receipt.ReusedPage;
import dev.pagewarden.core.request.PrefixCaching;
import dev.pagewarden.core.sampling.SamplingParams;
import dev.pagewarden.core.sampling.TokenConstraint;
import dev.pagewarden.core.sampling.TokenLogprobs;

import java.util.List;
import java.util.Map;
import java.util.function.Function;

/**
 * A message on a control connection between engine nodes and the platform's cluster client. It travels in
 * the KV wire's framing (length, type, per-connection sequence number; a hello first, naming the connection's
 * purpose), on the same port as the pages.
 */
public sealed interface ControlMessage {

    /**
     * Sampling as on the wire: every field of {@code SamplingParams}, the constraint as the text it compiles from
     * ({@link TokenConstraint#source}; null: none), which the receiving node compiles over its own vocabulary.
     */
    record Sampling(float temperature, float topP, long seed, boolean ignoreEos, int topK, float minP,
                    float presencePenalty, float frequencyPenalty, float repetitionPenalty,
                    Map<Integer, Float> logitBias, int logprobs, String constraint) {
        public Sampling {
            logitBias = Map.copyOf(logitBias == null ? Map.of() : logitBias);
        }

        /** Temperature, top_p, the seed and nothing else. */
        public Sampling(float temperature, float topP, long seed, boolean ignoreEos) {
            this(temperature, topP, seed, ignoreEos, 0, 0f, 0f, 0f, 1f, Map.of(), -1, null);
        }

        /** The wire form of {@code p}; throws {@link IllegalArgumentException} for a constraint without a source. */
        public static Sampling of(SamplingParams p) {
            String constraint = null;
            if (p.constraint() != null) {
                constraint = p.constraint().source();
                if (constraint == null) {
                    throw new IllegalArgumentException("the response format has no text to send to an engine node");
                }
            }
            return new Sampling(p.temperature(), p.topP(), p.seed(), p.ignoreEos(), p.topK(), p.minP(),
                    p.presencePenalty(), p.frequencyPenalty(), p.repetitionPenalty(), p.logitBias(), p.logprobs(),
                    constraint);
        }

        /**
         * The parameters this says, the constraint compiled by {@code compile}; throws {@link IllegalArgumentException}
         * for values no sampler takes or a constraint that does not compile.
         */
        public SamplingParams params(Function<String, TokenConstraint> compile) {
            return new SamplingParams(temperature, topP, seed, ignoreEos, topK, minP, presencePenalty, frequencyPenalty,
                    repetitionPenalty, logitBias, logprobs, constraint == null ? null : compile.apply(constraint));
        }

        /** {@link #params(Function)} for sampling without a constraint (one with a constraint is refused). */
        public SamplingParams params() {
            return params(c -> {
                throw new IllegalArgumentException("no response format can be compiled here");
            });
        }
    }

    /**
     * Whether and in which scope a request's prompt pages may be cached and reused on its prefill node (the fields of
     * {@code PrefixCaching}).
     */
    record Caching(boolean enabled, String key, String template) {
        public static final Caching OFF = new Caching(false, null, null);

        public static Caching of(PrefixCaching c) {
            return new Caching(c.enabled(), c.key(), c.template());
        }

        public PrefixCaching caching() {
            return enabled ? new PrefixCaching(true, key, template) : PrefixCaching.OFF;
        }
    }

    /** Platform to decode node: serve this request, with its prompt prefilled on the named prefill node. */
    record Submit(long requestId, String tenant, int[] prompt, int maxNewTokens, Sampling sampling, String prefillNode,
                  String prefillHost, int prefillPort, Caching caching) implements ControlMessage {
        public Submit(long requestId, String tenant, int[] prompt, int maxNewTokens, Sampling sampling,
                      String prefillNode, String prefillHost, int prefillPort) {
            this(requestId, tenant, prompt, maxNewTokens, sampling, prefillNode, prefillHost, prefillPort, Caching.OFF);
        }
    }

    /**
     * Decode node to prefill node: prefill this prompt and send its pages (transfer {@code generation}) to the named
     * decode node. {@code generated}: after a preemption, the tokens generated so far (the last one pending: its KV is
     * not written, and nothing is sampled); empty for a request's first prefill.
     */
    record Prefill(long requestId, String tenant, int[] prompt, Sampling sampling, int generation, String decodeNode,
                   String decodeHost, int decodePort, Caching caching, int[] generated) implements ControlMessage {
        public Prefill(long requestId, String tenant, int[] prompt, Sampling sampling, int generation, String decodeNode,
                       String decodeHost, int decodePort, Caching caching) {
            this(requestId, tenant, prompt, sampling, generation, decodeNode, decodeHost, decodePort, caching, new int[0]);
        }

        public Prefill(long requestId, String tenant, int[] prompt, Sampling sampling, int generation, String decodeNode,
                       String decodeHost, int decodePort) {
            this(requestId, tenant, prompt, sampling, generation, decodeNode, decodeHost, decodePort, Caching.OFF);
        }
    }

    /**
     * Prefill node to decode node, before the pages: the first token it sampled (with its log probabilities when the
     * request asked for them, else null), and the cached prefix pages its prefill reused ({@code cachedTokens}
     * prompt tokens; the pages travel to the decode node with the rest).
     */
    record Prefilled(long requestId, int generation, int firstToken, long prefillNanos, TokenLogprobs logprobs,
                     int cachedTokens, List<ReusedPage> reused) implements ControlMessage {
        public Prefilled {
            reused = List.copyOf(reused);
        }

        public Prefilled(long requestId, int generation, int firstToken, long prefillNanos) {
            this(requestId, generation, firstToken, prefillNanos, null, 0, List.of());
        }
    }

    /**
     * Prefill node to decode node: the request ended there ({@code code}, {@code message}). {@code pagesSent}:
     * whether its transfer had started (then the KV connection's ack settles the pages, not this message).
     */
    record PrefillFailed(long requestId, int generation, String code, String message, boolean pagesSent)
            implements ControlMessage {
    }

    /** Decode node to platform: one generated token, with its log probabilities when the request asked (else null). */
    record Token(long requestId, int token, TokenLogprobs logprobs) implements ControlMessage {
        public Token(long requestId, int token) {
            this(requestId, token, null);
        }
    }

    /**
     * Decode node to platform: the request finished normally (reason STOP or LENGTH) with its timings, and every
     * page epoch its decode read with the final slot range, and the cached prefix pages its prefill reused ({@code
     * cachedTokens} prompt tokens): what the platform signs in its isolation receipt.
     */
    record Finished(long requestId, String reason, int outputTokens, long queuedNanos, long prefillNanos,
                    long firstTokenNanos, long totalNanos, List<PageEpochRead> reads, int cachedTokens,
                    List<ReusedPage> reused) implements ControlMessage {
        public Finished {
            reads = List.copyOf(reads);
            reused = List.copyOf(reused);
        }

        public Finished(long requestId, String reason, int outputTokens, long queuedNanos, long prefillNanos,
                        long firstTokenNanos, long totalNanos, List<PageEpochRead> reads) {
            this(requestId, reason, outputTokens, queuedNanos, prefillNanos, firstTokenNanos, totalNanos, reads, 0,
                    List.of());
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

        /** Free pages and cached prefix pages (which a prefill evicts when it needs room). */
        public int availablePages() {
            return freePages() + pagesByState.getOrDefault("cached", 0);
        }
    }

    /**
     * Every node to each control peer, every heartbeat: who it is, what it serves, how full it is. {@code
     * transfersInFlight}: page transfers under way on the node; {@code lineageBacklog}: its page life steps not
     * yet acknowledged by the platform, and {@code lineageAccepting} false while that backlog is at its bound (the
     * node then admits no new request). {@code headroomPages}: the decode pages a request reserves beyond its
     * prompt's on this node (decode takes the rest as it goes; {@code Integer.MAX_VALUE}: the whole request at once).
     */
    record Status(String role, String node, String modelId, String backend, ModelConfig model, KvLayout layout,
                  int contextWindow, Pool pool, int queued, int transfersInFlight, int lineageBacklog,
                  boolean lineageAccepting, int headroomPages) implements ControlMessage {
        public Status(String role, String node, String modelId, String backend, ModelConfig model, KvLayout layout,
                      int contextWindow, Pool pool, int queued, int transfersInFlight, int lineageBacklog,
                      boolean lineageAccepting) {
            this(role, node, modelId, backend, model, layout, contextWindow, pool, queued, transfersInFlight,
                    lineageBacklog, lineageAccepting, Integer.MAX_VALUE);
        }
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
