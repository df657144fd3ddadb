package dev.pagewarden.platform.completion;

import dev.pagewarden.core.request.GenerationRequest;
import dev.pagewarden.core.request.PrefixCaching;
import dev.pagewarden.core.request.GenerationResult;
import dev.pagewarden.core.request.InvalidRequestException;
import dev.pagewarden.core.request.RequestAbortedException;
import dev.pagewarden.core.cluster.ClusterEngine;
import dev.pagewarden.core.request.RequestFailedException;
import dev.pagewarden.core.request.RequestHandle;
import dev.pagewarden.core.request.RequestRejectedException;
import dev.pagewarden.core.request.TokenListener;
import dev.pagewarden.core.request.ValidRequest;
import dev.pagewarden.core.grammar.GrammarConstraints;
import dev.pagewarden.core.grammar.JsonGrammar;
import dev.pagewarden.core.sampling.SamplingParams;
import dev.pagewarden.core.sampling.TokenConstraint;
import dev.pagewarden.core.sampling.TokenLogprobs;
import dev.pagewarden.core.template.ChatTemplate;
import dev.pagewarden.core.tools.ToolCallParser;
import dev.pagewarden.core.template.ReasoningSplitter;
import dev.pagewarden.core.tokenizer.TextTokenizer;
import dev.pagewarden.core.tokenizer.Utf8StreamDecoder;
import dev.pagewarden.platform.audit.RequestRecord;
import dev.pagewarden.platform.audit.RequestRecorder;
import dev.pagewarden.platform.engine.EngineHost;
import dev.pagewarden.platform.engine.ServedModel;
import dev.pagewarden.platform.engine.TokenGate;
import dev.pagewarden.platform.error.ApiException;
import dev.pagewarden.platform.completion.Draining;
import dev.pagewarden.platform.http.PublicRequestIds;
import dev.pagewarden.platform.tenant.QuotaExceededException;
import dev.pagewarden.platform.tenant.Quotas;
import dev.pagewarden.platform.tenant.TenantPrincipal;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.MeterRegistry;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.springframework.stereotype.Service;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;
import reactor.core.publisher.Sinks;
import reactor.core.scheduler.Schedulers;

import java.nio.charset.StandardCharsets;
import java.security.SecureRandom;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.WeakHashMap;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;

/**
 * One tenant request through the engine: model check, tokenization, tenant limits, then
 * admission -> prefill -> transfer -> decode, with the tokens streamed back as text. Runs the
 * engine side off the event loop; a cancelled subscription (client gone) aborts the request in the
 * engine through its normal abort path, so its pages take the deferred-release route.
 */
@Service
public class InferenceService {
    private static final Logger LOG = LoggerFactory.getLogger(InferenceService.class);
    /** Response formats compiled per model vocabulary (weak: a model that is replaced takes its masks along). */
    private static final Map<TextTokenizer, GrammarConstraints> GRAMMARS =
            Collections.synchronizedMap(new WeakHashMap<>());
    private static final SecureRandom SEEDS = new SecureRandom();
    private static final Duration RECORD_WAIT = Duration.ofMillis(500);

    private final EngineHost host;
    private final Quotas quotas;
    private final RequestRecorder recorder;
    private final TokenGate gate;
    private final Draining draining;
    private final PublicRequestIds ids;
    private final Counter disconnects;
    private final Map<Long, RequestHandle> running = new ConcurrentHashMap<>();

    public InferenceService(EngineHost host, Quotas quotas, RequestRecorder recorder, TokenGate gate, Draining draining,
                            PublicRequestIds ids, MeterRegistry registry) {
        this.ids = ids;
        this.disconnects = Counter.builder("pagewarden.client.disconnects")
                .description("requests aborted because their client went away").register(registry);
        this.host = host;
        this.quotas = quotas;
        this.recorder = recorder;
        this.gate = gate;
        this.draining = draining;
    }

    /** Requests inside the engine right now (for graceful shutdown). */
    public int running() {
        return running.size();
    }

    /** Aborts every running request through the engine's normal abort path; returns how many. */
    public int abortAll(String reason) {
        List<RequestHandle> handles = List.copyOf(running.values());
        handles.forEach(h -> h.abort(reason));
        return handles.size();
    }

    /**
     * A request the engine accepted: its id and prompt size (choice 0's, for n choices), and its events (per choice
     * Deltas, then Done; or an {@link ApiException} error). Cancelling {@code events} aborts the request in the engine.
     * {@code tools} reads the calls out of the output; null when the request offers no tools.
     */
    record Generation(long requestId, String publicId, int promptTokens, Flux<GenerationEvent> events,
                      ToolCallParser tools) {
    }

    /**
     * Runs {@code request} for {@code caller}. The Mono fails with an {@link ApiException} when the
     * request is refused before it starts (bad model, limits, admission), so that the API can still
     * answer with an error status; failures after that arrive through the events.
     */
    Mono<Generation> generate(TenantPrincipal caller, CompletionRequest request, String httpRequestId) {
        return Mono.fromCallable(() -> start(caller, request, httpRequestId)).subscribeOn(Schedulers.boundedElastic());
    }

    /**
     * The request's max_tokens, or when it has none the one default: 16 for a completion (as OpenAI); for a chat,
     * what the tenant's limits leave after the prompt - the engine's window, the tenant's maximum context and its
     * tokens per minute (a request is charged prompt + max_tokens), whichever is smallest. At least one, so that a
     * prompt already over a limit is refused by that limit's own check.
     */
    static int maxTokens(CompletionRequest request, TenantPrincipal caller, int window, int promptTokens) {
        if (request.maxTokens() != null) {
            return request.maxTokens();
        }
        return switch (request.kind()) {
            case COMPLETION -> 16;
            case CHAT, RESPONSE -> {
                long limit = window;
                if (caller.limits().maxContext() != null) {
                    limit = Math.min(limit, caller.limits().maxContext());
                }
                long left = limit - promptTokens;
                if (caller.limits().tokensPerMinute() != null) {
                    // the prompt is charged once, every choice's max_tokens
                    left = Math.min(left, (caller.limits().tokensPerMinute() - promptTokens) / request.n());
                }
                yield (int) Math.max(1, left);
            }
        };
    }

    private Generation start(TenantPrincipal caller, CompletionRequest request, String httpRequestId) {
        Instant received = Instant.now();
        refuseWhileDraining();
        ServedModel model = host.requireServing(request.model());
        Prompt rendered = tokenize(model, request);
        int[] prompt = rendered.tokens();
        int maxTokens = maxTokens(request, caller, model.contextWindow(), prompt.length);
        int n = request.n();
        List<ValidRequest> checked = new ArrayList<>(n);
        long seed = request.seed() != null ? request.seed() : SEEDS.nextLong();
        for (int i = 0; i < n; i++) {
            checked.add(check(caller, request, model, prompt, maxTokens, seed + i));
        }
        checkTenantContext(caller, request, prompt.length, maxTokens);
        // n choices: the prompt once and every choice's max_tokens, as usage counts them
        Group group = new Group(n, prompt.length, charge(caller, (long) prompt.length + (long) n * maxTokens));
        List<Run> runs = new ArrayList<>(n);
        List<RequestHandle> handles = new ArrayList<>(n);
        for (int i = 0; i < n; i++) {
            Run run = new Run(caller, model, request, httpRequestId, received, prompt.length, group, i);
            run.thinking = rendered.chat() == null ? null : Thinking.splitter(model.chatTemplate(), rendered.chat());
            RequestHandle handle;
            try {
                handle = submit(run, checked.get(i));
            } catch (ApiException e) {
                refuseChoices(group, handles, n - i);
                throw e;
            }
            LOG.info("[{}] request {} ({}) tenant={} model={} prompt_tokens={} max_tokens={} stream={}{}", httpRequestId,
                    run.id, run.shown, caller.tenantId(), model.id(), prompt.length, maxTokens, request.stream(),
                    n > 1 ? " choice=" + i + "/" + n : "");
            if (handle.result().isCompletedExceptionally()) {
                refuseChoices(group, handles, n - i - 1);
                throw refusedAtAdmission(run, handle.result().exceptionNow());
            }
            running.put(run.id, handle);
            runs.add(run);
            handles.add(handle);
            handle.result().whenComplete((result, failure) -> {
                running.remove(run.id);
                if (failure == null) {
                    finished(run, result);
                } else {
                    failed(run, failure);
                }
            });
        }
        group.handles = List.copyOf(handles);
        Flux<GenerationEvent> events = group.sink.flux().doOnCancel(() -> {
            runs.forEach(r -> r.clientGone.set(true));
            handles.forEach(h -> h.abort("client disconnected"));
            disconnects.increment();
            LOG.info("[{}] request {}: client disconnected, aborting in the engine", httpRequestId, runs.getFirst().id);
        });
        Run first = runs.getFirst();
        return new Generation(first.id, first.publicId, prompt.length, events,
                ToolCalling.parser(model.chatTemplate(), request));
    }

    /**
     * A choice was refused before it started: the choices already submitted are aborted, and the charge is kept
     * whole (as for a single request refused at admission) once every choice has ended.
     */
    private static void refuseChoices(Group group, List<RequestHandle> submitted, int notStarted) {
        group.keepCharge();
        submitted.forEach(h -> h.abort("another choice of the request was refused"));
        for (int i = 0; i < notStarted; i++) {
            group.ended(0);
        }
    }

    private void refuseWhileDraining() {
        if (draining.active()) {
            throw ApiException.unavailable("overloaded", "the server is shutting down; retry on another instance",
                    Duration.ofSeconds(5));
        }
    }

    /** The engine checks the request's values (one place, once): before any quota is charged. */
    private static ValidRequest check(TenantPrincipal caller, CompletionRequest request, ServedModel model, int[] prompt,
                                      int maxTokens, long seed) {
        CompletionRequest.Controls c = request.controls();
        try {
            return model.engine().validate(new GenerationRequest(caller.tenantId(), prompt, maxTokens,
                    new SamplingParams(request.temperature(), request.topP(), seed, false, c.topK(), c.minP(),
                            c.presencePenalty(), c.frequencyPenalty(), c.repetitionPenalty(), c.logitBias(), c.logprobs(),
                            constraint(model, ToolCalling.grammar(model.chatTemplate(), request))),
                    caller.limits().weight(), caching(caller, request)));
        } catch (InvalidRequestException e) {
            throw ToolCalling.inToolTerms(request, ApiException.invalid(e.param(), e.getMessage()));
        }
    }

    /** The response format over the model's vocabulary (masks cached per model and schema); null for text. */
    private static TokenConstraint constraint(ServedModel model, JsonGrammar format) {
        if (format == null) {
            return null;
        }
        if (model.tokenizer() == null) {
            throw ApiException.invalid("response_format", "response_format needs the model's tokenizer; this model "
                    + "has none");
        }
        return GRAMMARS.computeIfAbsent(model.tokenizer(), GrammarConstraints::new).constraint(format);
    }

    /**
     * The request's prefix cache scope: the tenant, narrowed by its prompt_cache_key and cache_salt (both, when both
     * are given); off when the tenant switched the cache off. The template part of the key tells a chat's rendered
     * prompt from a completion's.
     */
    static PrefixCaching caching(TenantPrincipal caller, CompletionRequest request) {
        if (!caller.prefixCache()) {
            return PrefixCaching.OFF;
        }
        String key = request.promptCacheKey();
        String salt = request.cacheSalt();
        String scope = key == null && salt == null ? null
                : (key == null ? "-" : key.length() + ":" + key) + "|" + (salt == null ? "-" : salt.length() + ":" + salt);
        return PrefixCaching.on(scope, request.kind().object);
    }

    private static void checkTenantContext(TenantPrincipal caller, CompletionRequest request, int promptTokens,
                                           int maxTokens) {
        Integer tenantMax = caller.limits().maxContext();
        if (tenantMax != null && promptTokens + maxTokens > tenantMax) {
            throw ApiException.contextLengthExceeded(request.kind().promptParam, "This request needs " + promptTokens
                    + " prompt + " + maxTokens + " completion tokens = " + (promptTokens + maxTokens) + ", more than your "
                    + "tenant's maximum context of " + tenantMax + " tokens. Shorten the prompt or lower max_tokens.");
        }
    }

    private Quotas.Permit charge(TenantPrincipal caller, long tokens) {
        try {
            return quotas.acquire(caller, tokens);
        } catch (QuotaExceededException e) {
            throw ApiException.rateLimited(e.getMessage(), e.retryAfter());
        }
    }

    /** Hands the request to the engine; its tokens become text events, and a matched stop string stops it. */
    private RequestHandle submit(Run run, ValidRequest checked) {
        AtomicReference<RequestHandle> handleRef = new AtomicReference<>();
        AtomicBoolean stopPending = new AtomicBoolean();
        RequestHandle handle;
        try {
            handle = run.model.engine().submit(checked, new TokenListener() {
                @Override
                public void onToken(long id, int token) {
                    onToken(id, token, null);
                }

                @Override
                public void onToken(long id, int token, TokenLogprobs logprobs) {
                    gate.beforeToken(id, run.index.getAndIncrement());
                    if (logprobs != null) {
                        run.logprobs.add(logprob(run.model.tokenizer(), logprobs));
                    }
                    String text = run.stops.accept(run.decoder.accept(token));
                    if (!text.isEmpty()) {
                        run.delta(text);
                    }
                    if (run.stops.matched()) {
                        RequestHandle h = handleRef.get();
                        if (h != null) {
                            h.stop();
                        } else {
                            stopPending.set(true);
                        }
                    }
                }
            });
        } catch (InvalidRequestException e) {
            throw ApiException.invalid(e.param(), e.getMessage());
        }
        handleRef.set(handle);
        if (stopPending.get()) {
            handle.stop();
        }
        run.started(handle.id(), ids.next());
        return handle;
    }

    /** A token's log probabilities as the API shows them: the token's text and bytes, and its alternatives'. */
    private static GenerationEvent.TokenLogprob logprob(TextTokenizer tokenizer, TokenLogprobs lp) {
        List<GenerationEvent.TokenLogprob> top = new ArrayList<>(lp.top().size());
        for (TokenLogprobs.Logprob alt : lp.top()) {
            top.add(tokenLogprob(tokenizer, alt, List.of()));
        }
        return tokenLogprob(tokenizer, lp.chosen(), top);
    }

    private static GenerationEvent.TokenLogprob tokenLogprob(TextTokenizer tokenizer, TokenLogprobs.Logprob lp,
                                                             List<GenerationEvent.TokenLogprob> top) {
        byte[] bytes = tokenizer.bytes(lp.token());
        return new GenerationEvent.TokenLogprob(new String(bytes, StandardCharsets.UTF_8), lp.logprob(),
                bytes, top);
    }

    /** Refused by admission before any page was reserved: still time for an error status. */
    private ApiException refusedAtAdmission(Run run, Throwable cause) {
        run.group.keepCharge();
        run.group.ended(0);
        ApiException error = toApi(cause, run.shown, run.request.kind());
        record(run, new Ending("REJECTED", error.error().code(), 0, null, Instant.now(), null, null), () -> { });
        LOG.info("[{}] request {} refused: {}", run.httpRequestId, run.id, error.getMessage());
        return error;
    }

    private void finished(Run run, GenerationResult result) {
        Instant finished = Instant.now();
        String tail = run.stops.accept(run.decoder.finish()) + run.stops.finish();
        if (!tail.isEmpty() || !run.logprobs.isEmpty() || run.thinking != null) {
            run.delta(tail, true);
        }
        String reason = run.stops.matched() ? "stop" : switch (result.finishReason()) {
            case STOP -> "stop";
            case LENGTH -> "length";
        };
        String receipt = result.receipt() == null ? null : result.receipt().toCompact();
        int generated = result.outputTokens().length;
        run.group.ended(generated);
        LOG.info("[{}] request {} finished ({}) completion_tokens={}", run.httpRequestId, run.id, reason, generated);
        GenerationEvent.Done done = new GenerationEvent.Done(run.choice, run.id, reason, run.promptTokens, generated,
                receipt, result.cachedTokens());
        // the record first, so that the audit endpoint knows the id as soon as the client does
        record(run, new Ending("FINISHED", null, generated, result, finished, reason, receipt), () -> {
            run.group.sink.next(done);
            run.group.choiceDone();
        });
    }

    private void failed(Run run, Throwable failure) {
        Instant finished = Instant.now();
        int generated = run.index.get();
        run.group.ended(generated);
        Throwable cause = failure instanceof java.util.concurrent.CompletionException ce && ce.getCause() != null
                ? ce.getCause() : failure;
        boolean clientGone = run.clientGone.get();
        ApiException error = clientGone && cause instanceof RequestAbortedException
                ? ApiException.serverError("client_disconnected", "request " + run.shown + " aborted: client disconnected")
                : toApi(cause, run.shown, run.request.kind());
        String status = switch (cause) {
            case RequestRejectedException r -> "REJECTED";
            case RequestAbortedException a -> "ABORTED";
            default -> "FAILED";
        };
        if (clientGone) {
            LOG.info("[{}] request {} aborted: client disconnected after {} tokens", run.httpRequestId, run.id, generated);
        } else {
            LOG.warn("[{}] request {} ended with {}: {}", run.httpRequestId, run.id, error.error().code(), error.getMessage());
        }
        // one choice failing fails the request with its error: the other choices stop too
        ApiException shown = run.group.firstError(error);
        run.group.handles.stream().filter(h -> h.id() != run.id).forEach(h -> h.abort("another choice of the request failed"));
        record(run, new Ending(status, error.error().code(), generated, null, finished, null, null),
                () -> run.group.sink.error(shown));
    }

    /** One request on its way: who asked what, what it was charged, and what its tokens have become so far. */
    private static final class Run {
        final TenantPrincipal caller;
        final ServedModel model;
        final CompletionRequest request;
        final String httpRequestId;
        final Instant received;
        final int promptTokens;
        final Group group;
        /** Which of the request's choices this is. */
        final int choice;
        final Utf8StreamDecoder decoder;
        final StopMatcher stops;
        /** Log probabilities of the tokens not yet sent with a delta (decode thread only). */
        final List<GenerationEvent.TokenLogprob> logprobs = new ArrayList<>();
        /** Tokens the engine has emitted. */
        final AtomicInteger index = new AtomicInteger();
        final AtomicBoolean clientGone = new AtomicBoolean();
        /** The engine's id, the public one, and the public one as the tenant sees it (never the engine's sequential id). */
        long id;
        String publicId;
        String shown;

        Run(TenantPrincipal caller, ServedModel model, CompletionRequest request, String httpRequestId, Instant received,
            int promptTokens, Group group, int choice) {
            this.caller = caller;
            this.model = model;
            this.request = request;
            this.httpRequestId = httpRequestId;
            this.received = received;
            this.promptTokens = promptTokens;
            this.group = group;
            this.choice = choice;
            this.decoder = model.tokenizer().streamDecoder();
            this.stops = new StopMatcher(request.stop());
        }

        void started(long id, String publicId) {
            this.id = id;
            this.publicId = publicId;
            this.shown = request.kind().idPrefix + publicId;
        }

        /** Splits a thinking model's output into reasoning and answer (chats only); null when its template does not think. */
        ReasoningSplitter thinking;

        /** Sends text with the log probabilities gathered since the last delta. */
        void delta(String text) {
            delta(text, false);
        }

        /**
         * Sends text (its reasoning apart, for a thinking model; Responses leave reasoning out) with the log
         * probabilities gathered since the last delta; {@code last}: the output ends here.
         */
        void delta(String text, boolean last) {
            String reasoning = "";
            if (thinking != null) {
                ReasoningSplitter.Part part = thinking.accept(text);
                ReasoningSplitter.Part end = last ? thinking.finish() : ReasoningSplitter.Part.EMPTY;
                text = part.content() + end.content();
                reasoning = request.kind() == CompletionRequest.Kind.RESPONSE ? "" : part.reasoning() + end.reasoning();
                if (text.isEmpty() && reasoning.isEmpty() && logprobs.isEmpty()) {
                    return;
                }
            }
            group.sink.next(new GenerationEvent.Delta(choice, text, List.copyOf(logprobs), reasoning));
            logprobs.clear();
        }
    }

    /**
     * The choices of one request: one charge to the tenant's limits, settled when the last choice ends with the
     * prompt once and every choice's tokens; one stream of events, complete when every choice is done.
     */
    private static final class Group {
        final Emitter sink = new Emitter();
        private final Quotas.Permit permit;
        private int running;
        private int undone;
        private long generated;
        private boolean keepCharge;
        private final long promptTokens;
        /** The engine handles of the choices, once all are submitted. */
        volatile List<RequestHandle> handles = List.of();

        Group(int n, long promptTokens, Quotas.Permit permit) {
            this.promptTokens = promptTokens;
            this.running = n;
            this.undone = n;
            this.permit = permit;
        }

        private ApiException error;

        /** The error the request ends with: the first choice's to fail. */
        synchronized ApiException firstError(ApiException e) {
            if (error == null) {
                error = e;
            }
            return error;
        }

        /** A refusal before the request ran: the whole charge stays, as for a single request. */
        synchronized void keepCharge() {
            keepCharge = true;
        }

        /** A choice ended having generated {@code tokens}. */
        void ended(int tokens) {
            boolean last;
            boolean keep;
            synchronized (this) {
                generated += tokens;
                last = --running == 0;
                keep = keepCharge;
            }
            if (last) {
                permit.release(keep ? Long.MAX_VALUE : promptTokens + generated);
            }
        }

        /** A choice's Done was sent: the stream ends after the last. */
        void choiceDone() {
            boolean last;
            synchronized (this) {
                last = --undone == 0;
            }
            if (last) {
                sink.complete();
            }
        }
    }

    /**
     * How a request ended, as its audit row says: its status and error code, the tokens generated, and for a finished
     * one its result, finish reason and receipt.
     */
    private record Ending(String status, String errorCode, int generated, GenerationResult result, Instant finished,
                          String finishReason, String receipt) {
    }

    /** The events of one request; emitted from engine threads (decode, prefill), so serialized here. */
    private static final class Emitter {
        private final Sinks.Many<GenerationEvent> sink = Sinks.many().unicast().onBackpressureBuffer();

        synchronized void next(GenerationEvent e) {
            sink.tryEmitNext(e);
        }

        synchronized void complete() {
            sink.tryEmitComplete();
        }

        synchronized void error(Throwable t) {
            sink.tryEmitError(t);
        }

        Flux<GenerationEvent> flux() {
            return sink.asFlux();
        }
    }

    /** A prompt's tokens; for a chat, its rendering too (null otherwise), where a think span may have been opened. */
    private record Prompt(int[] tokens, List<ChatTemplate.Segment> chat) {
        Prompt(int[] tokens) {
            this(tokens, null);
        }
    }

    /**
     * The prompt's tokens. Client text is never parsed for control tokens: a completion prompt is read
     * as plain text, and a chat is rendered by the model's own template into template and client
     * segments, of which only the template's may spell control tokens (a client's {@code <|im_end|>}
     * stays text and cannot end its turn).
     */
    private static Prompt tokenize(ServedModel model, CompletionRequest request) {
        TextTokenizer tokenizer = model.tokenizer();
        if (request.promptTokens() != null) {
            int[] tokens = request.promptTokens();
            for (int i = 0; i < tokens.length; i++) {
                if (tokens[i] < 0 || tokens[i] >= tokenizer.vocabSize()) {
                    throw ApiException.invalid("prompt", "prompt[" + i + "] = " + tokens[i]
                            + " is not a token id of this model (vocabulary of " + tokenizer.vocabSize() + ")");
                }
            }
            return new Prompt(tokens.clone());
        }
        if (request.messages() == null) {
            return new Prompt(tokenizer.encode(request.prompt(), tokenizer.addBos(), false));
        }
        List<ChatTemplate.Segment> segments;
        try {
            segments = ToolCalling.segments(model.chatTemplate(), request);
        } catch (InvalidRequestException e) {
            // the template refused this conversation (raise_exception): the request's fault, not the server's
            throw ApiException.invalid(e.param(), e.getMessage());
        }
        int[] body = tokenizer.encodeSpans(segments.stream()
                .map(s -> new TextTokenizer.Span(s.text(), !s.fromUser())).toList());
        // the model wants BOS first: add it unless its template already wrote it
        if (tokenizer.addBos() && tokenizer.bos() >= 0 && (body.length == 0 || body[0] != tokenizer.bos())) {
            int[] withBos = new int[body.length + 1];
            withBos[0] = tokenizer.bos();
            System.arraycopy(body, 0, withBos, 1, body.length);
            return new Prompt(withBos, segments);
        }
        return new Prompt(body, segments);
    }

    /** The engine's refusal or failure as the API reports it, naming the request by its public id. */
    static ApiException toApi(Throwable cause, String requestId, CompletionRequest.Kind kind) {
        return switch (cause) {
            case RequestRejectedException r -> switch (r.code()) {
                case "context_length_exceeded" -> ApiException.contextLengthExceeded(kind.promptParam, tenantMessage(r, requestId));
                case "overloaded" -> ApiException.unavailable("overloaded", tenantMessage(r, requestId), Duration.ofSeconds(1));
                case "audit_backpressure" -> ApiException.unavailable("audit_backpressure", tenantMessage(r, requestId),
                        Duration.ofSeconds(5));
                default -> ApiException.unavailable(r.code(), tenantMessage(r, requestId),
                        r.retryable() ? Duration.ofSeconds(1) : null);
            };
            case RequestFailedException f -> switch (f.code()) {
                case "context_length_exceeded" -> ApiException.contextLengthExceeded(kind.promptParam, tenantMessage(f, requestId));
                // the engine node serving it went away: a retry goes to a node that is live
                case ClusterEngine.NODE_LOST -> ApiException.unavailable(f.code(), tenantMessage(f, requestId),
                        Duration.ofSeconds(1));
                // its KV pages went to other requests too often: the engine is busy, a retry later is served
                case "preempted_too_often" -> ApiException.unavailable(f.code(), tenantMessage(f, requestId),
                        Duration.ofSeconds(1));
                default -> ApiException.serverError(f.code(), tenantMessage(f, requestId));
            };
            case RequestAbortedException a -> ApiException.serverError("request_aborted", tenantMessage(a, requestId));
            default -> internalError(requestId, cause);
        };
    }

    /** An unexpected failure: logged with its cause; the tenant gets the request id to quote, never Java internals. */
    static ApiException internalError(String requestId, Throwable cause) {
        LOG.error("request {} failed", requestId, cause);
        return ApiException.serverError("internal_error", "request " + requestId
                + " failed inside the server; quote this id to the operator");
    }

    private static final java.util.regex.Pattern ENGINE_ID = java.util.regex.Pattern.compile("\\brequest \\d+");

    /** The engine names requests by its sequential id ("request 4294967298 aborted: ..."): tenants get the public one. */
    static String tenantMessage(Throwable engineError, String requestId) {
        String message = String.valueOf(engineError.getMessage());
        return ENGINE_ID.matcher(message).replaceAll(java.util.regex.Matcher.quoteReplacement("request " + requestId));
    }

    private void record(Run run, Ending ending, Runnable then) {
        GenerationResult result = ending.result();
        Instant admitted = result == null ? null : run.received.plusNanos(result.queuedNanos());
        Instant firstToken = result == null || result.outputTokens().length == 0 ? null
                : run.received.plusNanos(result.timeToFirstNanos());
        byte[] hash = result == null || result.receipt() == null ? null : result.receipt().digest();
        recorder.record(new RequestRecord(run.id, run.publicId, run.request.kind().idPrefix, run.caller.tenantId(), run.model.id(), run.promptTokens,
                ending.generated(), ending.status(), ending.errorCode(), run.received, admitted, firstToken,
                ending.finished(), hash, ending.finishReason(), run.request.stream(), ending.receipt()))
                // the answer waits for the row briefly at most: with the database away it is retried in the background
                .timeout(RECORD_WAIT)
                .subscribe(r -> then.run(), e -> then.run());
    }
}
