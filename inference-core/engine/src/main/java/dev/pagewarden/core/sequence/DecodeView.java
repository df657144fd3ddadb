package dev.pagewarden.core.sequence;

import dev.pagewarden.core.kv.PageRef;
import dev.pagewarden.core.receipt.PageEpochRead;
import dev.pagewarden.core.request.FinishReason;
import dev.pagewarden.core.sampling.Sampler;

import java.util.List;

/** The decode loop's view of a request: its pages, its tokens, the reads its receipt names, and how it ends. */
public interface DecodeView extends KvStageView {
    List<PageRef> decodePages();

    List<PageRef> takeDecodePages();

    /** Decode grew the page table by one page. */
    void addDecodePage(PageRef page);

    /** Order of first admission: the most recently admitted running request is preempted first. */
    long admissionOrder();

    int preemptions();

    /** Its decode pages (released, reads finished) went to others: it waits to be re-prefilled and continue. */
    void preempt();

    Sampler sampler();

    /** The token the next decode step feeds (the last one sampled). */
    int pendingToken();

    void pendingToken(int token);

    /** Positions already in the KV cache: the prompt plus every generated token but the pending one. */
    int cachedPositions();

    int outputCount();

    /** Appends a generated token and streams it to the listener. */
    void emit(int token, long nowNanos);

    boolean stopRequested();

    /** Decode pages whose first read has been recorded in the lineage. */
    int boundPages();

    void boundPages(int pages);

    /** Positions [0, readEnd) the decode's steps have attended to so far. */
    int readEnd();

    void readEnd(int end);

    /** Records a page epoch the decode read for the first time. */
    void recordRead(PageEpochRead read);

    List<PageEpochRead> reads();

    boolean readsFinal();

    /** The reads with their final slot ranges, once the request reads no more. */
    void finalReads(List<PageEpochRead> finals);

    /** Ends the request normally. */
    void finish(FinishReason reason, long nowNanos);
}
