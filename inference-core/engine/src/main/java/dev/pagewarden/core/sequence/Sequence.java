package dev.pagewarden.core.sequence;

import dev.pagewarden.core.kv.PageRef;
import dev.pagewarden.core.receipt.PageEpochRead;
import dev.pagewarden.core.receipt.Receipt;
import dev.pagewarden.core.receipt.ReceiptIssuer;
import dev.pagewarden.core.receipt.ReusedPage;
import dev.pagewarden.core.request.FinishReason;
import dev.pagewarden.core.request.GenerationRequest;
import dev.pagewarden.core.request.GenerationResult;
import dev.pagewarden.core.request.RequestAbortedException;
import dev.pagewarden.core.request.RequestControl;
import dev.pagewarden.core.request.RequestFailedException;
import dev.pagewarden.core.request.RequestRejectedException;
import dev.pagewarden.core.request.RequestState;
import dev.pagewarden.core.request.TokenListener;
import dev.pagewarden.core.sampling.Sampler;
import dev.pagewarden.core.sampling.TokenLogprobs;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.CompletableFuture;

/**
 * The engine's record of one request as it moves admission -> prefill -> transfer -> decode. Each
 * stage owns it while it holds it, and sees it only through its own view ({@link AdmissionView},
 * {@link PrefillView}, {@link IntakeView}, {@link DecodeView}); the application holds a
 * {@link dev.pagewarden.core.request.RequestHandle} over its {@link RequestControl} side. The state
 * machine in {@link RequestState} guards every move.
 */
public final class Sequence implements RequestControl, AdmissionView, PrefillView, IntakeView, DecodeView {
    private final long id;
    private final GenerationRequest request;
    private final Sampler sampler;
    private final TokenListener listener;
    private final CompletableFuture<GenerationResult> result = new CompletableFuture<>();
    private final long submittedNanos;

    private volatile RequestState state = new RequestState.Queued();
    private volatile String abortReason;
    private volatile boolean stopRequested;
    private volatile Runnable abortHook = () -> { };
    /** Lab ground truth: slots read whose data another tenant wrote last; and whether a detector flagged this request. */
    private volatile boolean detected;

    private List<PageRef> decodePages = List.of();
    private List<PageRef> prefillPages = List.of();
    private int transferGeneration;
    /** Decode pages whose first read has been recorded in the lineage. */
    private int boundPages;
    /** Positions [0, readEnd) the decode's steps have attended to so far (the last step's end). */
    private int readEnd;
    /** Whether {@link #reads} hold the final slot ranges (the request's reads are over). */
    private boolean readsFinal;
    /**
     * Page epochs the decode read, in page-table order (entry i is page i of the decode pages): with the
     * slots cached at the first read until {@link #finalReads}, then with the final range (the
     * receipt's reads). Only the decode thread touches it.
     */
    private final List<PageEpochRead> reads = new ArrayList<>();
    /** Final reads of the page epochs earlier decode pages held (before each preemption); the receipt names them too. */
    private final List<PageEpochRead> earlierReads = new ArrayList<>();
    /** Order of first admission (1, 2, ...): the most recently admitted running request is the one preempted. */
    private long admissionOrder;
    private int preemptions;
    private volatile ReceiptIssuer receipts;
    private int[] output = new int[8];
    private int outputCount;
    /** The token the next decode step feeds (the last one sampled). */
    private int pendingToken = -1;
    private long reservedNanos;
    private long prefillNanos;
    private volatile List<ReusedPage> reusedPages = List.of();
    /** -1 until the first prefill says how many prompt tokens came from the prefix cache. */
    private int cachedPromptTokens = -1;
    private long firstTokenNanos;

    public Sequence(long id, GenerationRequest request, TokenListener listener, long nowNanos) {
        this.id = id;
        this.request = request;
        this.sampler = new Sampler(request.sampling(), request.promptTokens());
        this.listener = listener;
        this.submittedNanos = nowNanos;
    }

    @Override
    public long id() {
        return id;
    }

    @Override
    public String tenant() {
        return request.tenant();
    }

    @Override
    public GenerationRequest request() {
        return request;
    }

    @Override
    public Sampler sampler() {
        return sampler;
    }

    @Override
    public CompletableFuture<GenerationResult> result() {
        return result;
    }

    @Override
    public RequestState state() {
        return state;
    }

    @Override
    /** Moves along the lifecycle graph; an illegal move is a bug and throws. */
    public synchronized void moveTo(RequestState next) {
        if (!state.canMoveTo(next)) {
            throw new IllegalStateException("request " + id + ": illegal transition " + state + " -> " + next);
        }
        state = next;
    }

    @Override
    /**
     * Asks for an abort. The stage that holds the request acts on it at its next boundary; the hook
     * lets the stages that wait on someone else (admission queue, transfer) act at once.
     */
    public void requestAbort(String reason) {
        synchronized (this) {
            if (abortReason != null || state.isTerminal()) {
                return;
            }
            abortReason = reason;
        }
        abortHook.run();
    }

    public void abortHook(Runnable hook) {
        this.abortHook = hook;
    }

    @Override
    public void markDetected() {
        detected = true;
    }

    @Override
    public boolean detected() {
        return detected;
    }

    @Override
    /** Asks decode to finish this request normally (STOP) right after the token being emitted: a stop string matched. */
    public void requestStop() {
        stopRequested = true;
    }

    @Override
    public boolean stopRequested() {
        return stopRequested;
    }

    @Override
    public boolean abortRequested() {
        return abortReason != null;
    }

    public String abortReason() {
        return abortReason;
    }

    @Override
    public List<PageRef> decodePages() {
        return decodePages;
    }

    @Override
    public void decodePages(List<PageRef> pages, long nowNanos) {
        this.decodePages = List.copyOf(pages);
        if (preemptions == 0) { // the queue time the result reports is the first one
            this.reservedNanos = nowNanos;
        }
    }

    @Override
    /** Decode grew the page table by one page (the request reached the end of its pages). */
    public synchronized void addDecodePage(PageRef page) {
        List<PageRef> grown = new ArrayList<>(decodePages.size() + 1);
        grown.addAll(decodePages);
        grown.add(page);
        decodePages = List.copyOf(grown);
    }

    @Override
    public long admissionOrder() {
        return admissionOrder;
    }

    @Override
    /** Set once, at the first admission: a re-queued request keeps its place among the others. */
    public void admissionOrder(long order) {
        if (admissionOrder == 0) {
            admissionOrder = order;
        }
    }

    @Override
    public int preemptions() {
        return preemptions;
    }

    @Override
    /**
     * Its decode pages were taken for other requests (the caller has released them and finished their
     * reads): keeps the tokens generated and streamed so far, keeps the reads for the receipt, and waits
     * to be re-prefilled from {@link #prefillTokens}.
     */
    public void preempt() {
        if (!readsFinal && !reads.isEmpty()) {
            throw new IllegalStateException("request " + id + ": preempted before its reads were finished");
        }
        earlierReads.addAll(reads);
        reads.clear();
        readsFinal = false;
        boundPages = 0;
        readEnd = 0;
        preemptions++;
        moveTo(new RequestState.Preempted(preemptions));
    }

    @Override
    /** What prefill writes into the KV: the prompt, then every generated token but the pending one. */
    public int[] prefillTokens() {
        int[] prompt = request.promptTokens();
        int generated = Math.max(0, outputCount - 1);
        if (generated == 0) {
            return prompt;
        }
        int[] all = Arrays.copyOf(prompt, prompt.length + generated);
        System.arraycopy(output, 0, all, prompt.length, generated);
        return all;
    }

    @Override
    public int prefillLength() {
        return cachedPositions();
    }

    @Override
    /** Hands the decode pages to whoever now answers for them (deferral, quarantine) so nobody frees them twice. */
    public synchronized List<PageRef> takeDecodePages() {
        List<PageRef> pages = decodePages;
        decodePages = List.of();
        return pages;
    }

    @Override
    public synchronized List<PageRef> takePrefillPages() {
        List<PageRef> pages = prefillPages;
        prefillPages = List.of();
        return pages;
    }

    public List<PageRef> prefillPages() {
        return prefillPages;
    }

    @Override
    public void prefillPages(List<PageRef> pages) {
        this.prefillPages = List.copyOf(pages);
    }

    @Override
    public int boundPages() {
        return boundPages;
    }

    @Override
    public void boundPages(int pages) {
        this.boundPages = pages;
    }

    @Override
    /** Records a page epoch the decode read for the first time (with its BIND_READ lineage event id). */
    public void recordRead(PageEpochRead read) {
        reads.add(read);
    }

    @Override
    public List<PageEpochRead> reads() {
        return List.copyOf(reads);
    }

    @Override
    public int readEnd() {
        return readEnd;
    }

    @Override
    /** A decode step attended to positions [0, end). */
    public void readEnd(int end) {
        this.readEnd = end;
    }

    @Override
    public boolean readsFinal() {
        return readsFinal;
    }

    @Override
    /** The reads with their final slot ranges, once the request reads no more (same page epochs, same order). */
    public void finalReads(List<PageEpochRead> finals) {
        if (finals.size() != reads.size()) {
            throw new IllegalArgumentException("request " + id + ": " + finals.size() + " final reads for "
                    + reads.size() + " page epochs read");
        }
        reads.clear();
        reads.addAll(finals);
        readsFinal = true;
    }

    /** Wires the issuer that signs this request's receipt when it finishes (none: no receipt). */
    public void receipts(ReceiptIssuer issuer) {
        this.receipts = issuer;
    }

    @Override
    public int transferGeneration() {
        return transferGeneration;
    }

    @Override
    public int nextTransferGeneration() {
        return ++transferGeneration;
    }

    @Override
    public void prefillNanos(long nanos) {
        this.prefillNanos = nanos;
    }

    public long prefillNanos() {
        return prefillNanos;
    }

    /**
     * Cached prefix pages a prefill reused. A re-prefill after a preemption may reuse some again: the receipt names
     * every reuse (each has its own lineage event), the usage counts the first prefill's.
     */
    @Override
    public synchronized void reusedPages(List<ReusedPage> pages) {
        if (cachedPromptTokens < 0) {
            cachedPromptTokens = pages.stream().mapToInt(r -> r.positionTo() - r.positionFrom()).sum();
        }
        List<ReusedPage> all = new ArrayList<>(reusedPages);
        all.addAll(pages);
        this.reusedPages = List.copyOf(all);
    }

    /** Every cached prefix page its prefills reused, in order. */
    public List<ReusedPage> reusedPages() {
        return reusedPages;
    }

    /** Prompt tokens whose KV came from the prefix cache (at the request's first prefill). */
    public synchronized int cachedPromptTokens() {
        return Math.max(0, cachedPromptTokens);
    }

    @Override
    public int pendingToken() {
        return pendingToken;
    }

    @Override
    public void pendingToken(int token) {
        this.pendingToken = token;
    }

    @Override
    /** Positions already in the KV cache: the prompt plus every generated token but the pending one. */
    public int cachedPositions() {
        return request.promptLength() + Math.max(0, outputCount - 1);
    }

    @Override
    public int outputCount() {
        return outputCount;
    }

    @Override
    /** Appends a generated token and streams it to the listener. */
    public void emit(int token, long nowNanos) {
        emit(token, sampler.lastLogprobs(), nowNanos);
    }

    /** Appends a token another process sampled, with the log probabilities it gave (null: none). */
    public void emit(int token, TokenLogprobs lp, long nowNanos) {
        if (outputCount == 0) {
            firstTokenNanos = nowNanos;
        }
        if (outputCount == output.length) {
            output = Arrays.copyOf(output, output.length * 2);
        }
        output[outputCount++] = token;
        try {
            listener.onToken(id, token, lp != null && lp.chosen().token() == token ? lp : null);
        } catch (RuntimeException e) {
            // A broken consumer (say, a closed connection) ends its own request, never the batch.
            requestAbort("token listener failed: " + e);
        }
    }

    /** Every page epoch its decode read, before each preemption and since: what its receipt names. */
    public List<PageEpochRead> allReads() {
        if (earlierReads.isEmpty()) {
            return List.copyOf(reads);
        }
        List<PageEpochRead> all = new ArrayList<>(earlierReads);
        all.addAll(reads);
        return List.copyOf(all);
    }

    public GenerationResult toResult(FinishReason reason, long nowNanos) {
        int[] tokens = Arrays.copyOf(output, outputCount);
        ReceiptIssuer issuer = receipts;
        Receipt receipt = issuer == null ? null : issuer.issue(id, tenant(), allReads(), reusedPages, tokens);
        return new GenerationResult(id, tokens, reason, reservedNanos - submittedNanos,
                prefillNanos, outputCount == 0 ? 0 : firstTokenNanos - submittedNanos, nowNanos - submittedNanos, receipt,
                cachedPromptTokens());
    }

    @Override
    /** Ends the request normally. */
    public void finish(FinishReason reason, long nowNanos) {
        moveTo(new RequestState.Finished(reason));
        result.complete(toResult(reason, nowNanos));
    }

    @Override
    /** Ends the request as aborted; the caller has already dealt with its pages. */
    public void abortNow() {
        String reason = abortReason == null ? "aborted" : abortReason;
        moveTo(new RequestState.Aborted(reason));
        result.completeExceptionally(new RequestAbortedException("request " + id + " aborted: " + reason));
    }

    @Override
    /** Ends the request with an error the API reports under {@code code}. */
    public void fail(String code, String message) {
        moveTo(new RequestState.Failed(code, message));
        result.completeExceptionally(new RequestFailedException(code, message));
    }

    @Override
    /** Refuses the request before any page was reserved for it. */
    public void reject(String code, String message) {
        moveTo(new RequestState.Rejected(code, message));
        result.completeExceptionally(new RequestRejectedException(code, message));
    }
}
