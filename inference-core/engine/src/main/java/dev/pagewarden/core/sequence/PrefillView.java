package dev.pagewarden.core.sequence;

import dev.pagewarden.core.kv.PageRef;
import dev.pagewarden.core.receipt.ReusedPage;
import dev.pagewarden.core.sampling.Sampler;

import java.util.List;

/** The prefill stage's view of a request: its prompt pages, the first token, the transfer it starts. */
public interface PrefillView extends KvStageView {
    void prefillPages(List<PageRef> pages);

    /** What prefill writes into the KV: the prompt, then (after a preemption) every generated token but the pending one. */
    int[] prefillTokens();

    /** Tokens generated so far: more than none means a re-prefill after a preemption (nothing is sampled). */
    int outputCount();

    List<PageRef> takePrefillPages();

    void prefillNanos(long nanos);

    /**
     * The cached prefix pages the prefill reused instead of computing them (the receipt lists them); their
     * positions make the prompt tokens whose KV came from the cache.
     */
    void reusedPages(List<ReusedPage> pages);

    Sampler sampler();

    /** The first generated token, which the first decode step feeds. */
    void pendingToken(int token);

    /** Starts a new transfer of the request's KV and returns its generation. */
    int nextTransferGeneration();
}
