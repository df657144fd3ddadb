package dev.pagewarden.platform.completion;

import dev.pagewarden.platform.error.ApiError;
import dev.pagewarden.platform.error.ApiException;
import dev.pagewarden.platform.http.RequestIds;
import dev.pagewarden.platform.tenant.TenantPrincipal;
import org.springframework.http.MediaType;
import org.springframework.http.ResponseEntity;
import org.springframework.security.core.annotation.AuthenticationPrincipal;
import org.springframework.web.bind.annotation.PostMapping;
import org.springframework.web.bind.annotation.RequestBody;
import org.springframework.web.bind.annotation.RestController;
import org.springframework.web.server.ServerWebExchange;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;
import tools.jackson.databind.json.JsonMapper;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * {@code POST /v1/completions} and {@code POST /v1/chat/completions}, OpenAI-compatible. A
 * non-streaming response carries its isolation receipt in the {@code X-Pagewarden-Receipt} header
 * and the {@code pagewarden_receipt} field; a stream carries it in its final chunk. A failure after
 * a stream began ends it with an error event, then {@code [DONE]} - never a normal-looking end.
 */
@RestController
class CompletionController {
    static final String RECEIPT_HEADER = "X-Pagewarden-Receipt";

    private final RequestParser parser;
    private final InferenceService inference;
    private final JsonMapper json;

    CompletionController(RequestParser parser, InferenceService inference, JsonMapper json) {
        this.parser = parser;
        this.inference = inference;
        this.json = json;
    }

    @PostMapping("/v1/completions")
    Mono<ResponseEntity<?>> completions(@RequestBody(required = false) Mono<byte[]> body,
                                        @AuthenticationPrincipal TenantPrincipal caller, ServerWebExchange exchange) {
        return run(CompletionRequest.Kind.COMPLETION, body, caller, exchange);
    }

    @PostMapping("/v1/chat/completions")
    Mono<ResponseEntity<?>> chat(@RequestBody(required = false) Mono<byte[]> body,
                                 @AuthenticationPrincipal TenantPrincipal caller, ServerWebExchange exchange) {
        return run(CompletionRequest.Kind.CHAT, body, caller, exchange);
    }

    private Mono<ResponseEntity<?>> run(CompletionRequest.Kind kind, Mono<byte[]> body, TenantPrincipal caller,
                                        ServerWebExchange exchange) {
        String httpId = RequestIds.of(exchange);
        long created = System.currentTimeMillis() / 1000;
        return body.defaultIfEmpty(new byte[0])
                .map(bytes -> parser.parse(kind, bytes))
                .flatMap(request -> inference.generate(caller, request, httpId)
                        .map(generation -> request.stream()
                                ? stream(request, generation, created)
                                : collect(request, generation, created)))
                .flatMap(m -> m);
    }

    private Mono<ResponseEntity<?>> collect(CompletionRequest request, InferenceService.Generation generation,
                                           long created) {
        return generation.events().collectList().map(events -> {
            int n = request.n();
            StringBuilder[] texts = new StringBuilder[n];
            StringBuilder[] reasoning = new StringBuilder[n];
            List<List<GenerationEvent.TokenLogprob>> logprobs = new ArrayList<>(n);
            for (int i = 0; i < n; i++) {
                texts[i] = new StringBuilder();
                reasoning[i] = new StringBuilder();
                logprobs.add(new ArrayList<>());
            }
            GenerationEvent.Done[] dones = new GenerationEvent.Done[n];
            for (GenerationEvent e : events) {
                switch (e) {
                    case GenerationEvent.Delta d -> {
                        texts[d.index()].append(d.text());
                        reasoning[d.index()].append(d.reasoning());
                        logprobs.get(d.index()).addAll(d.logprobs());
                    }
                    case GenerationEvent.Done d -> dones[d.index()] = d;
                }
            }
            if (Arrays.asList(dones).contains(null)) {
                throw ApiException.serverError("internal_error", "request " + request.kind().idPrefix + generation.publicId()
                        + " ended without a result");
            }
            List<Map<String, Object>> choices = new ArrayList<>(n);
            for (int i = 0; i < n; i++) {
                Map<String, Object> choice = new LinkedHashMap<>();
                choice.put("index", i);
                boolean called = false;
                if (request.kind() == CompletionRequest.Kind.CHAT) {
                    Map<String, Object> message = ToolCalling.message(generation.tools(), texts[i].toString());
                    called = message.containsKey("tool_calls");
                    ReasoningContent.addTo(message, reasoning[i].toString());
                    choice.put("message", message);
                } else {
                    choice.put("text", texts[i].toString());
                }
                choice.put("logprobs", logprobs(request, logprobs.get(i), 0));
                choice.put("finish_reason", ToolCalling.finishReason(called, dones[i].finishReason()));
                if (n > 1) {
                    choice.put("pagewarden_receipt", dones[i].receipt()); // each choice ran as its own request
                }
                choices.add(choice);
            }
            GenerationEvent.Done done = dones[0];
            Map<String, Object> response = envelope(request, generation.publicId(), created, request.kind().object);
            response.put("choices", choices);
            response.put("usage", usage(done.promptTokens(), Arrays.stream(dones).mapToInt(GenerationEvent.Done::completionTokens).sum(),
                    done.cachedTokens()));
            response.put("pagewarden_receipt", done.receipt());
            ResponseEntity.BodyBuilder ok = ResponseEntity.ok().contentType(MediaType.APPLICATION_JSON);
            if (done.receipt() != null) {
                ok.header(RECEIPT_HEADER, done.receipt());
            }
            return ok.body(response);
        });
    }

    private Mono<ResponseEntity<?>> stream(CompletionRequest request, InferenceService.Generation generation,
                                           long created) {
        String id = generation.publicId();
        String object = request.kind() == CompletionRequest.Kind.CHAT ? "chat.completion.chunk" : "text_completion";
        boolean chat = request.kind() == CompletionRequest.Kind.CHAT;
        int n = request.n();
        Flux<String> first = chat
                ? Flux.range(0, n).map(i -> data(chunk(request, id, created, object, i,
                        Map.of("role", "assistant", "content", ""), null, null)))
                : Flux.empty();
        // per choice: the characters sent so far (the legacy text_offset); over all: completion tokens, choices done
        int[] offsets = new int[n];
        int[] completionTokens = new int[1];
        int[] done = new int[1];
        // with tools offered, each choice's text passes through a call reader: what may begin a call waits
        ToolCalling.Deltas[] tools = new ToolCalling.Deltas[generation.tools() == null ? 0 : n];
        for (int i = 0; i < tools.length; i++) {
            tools[i] = new ToolCalling.Deltas(generation.tools());
        }
        Flux<String> body = generation.events().concatMap(e -> switch (e) {
            case GenerationEvent.Delta d -> {
                Object logprobs = logprobs(request, d.logprobs(), offsets[d.index()]);
                offsets[d.index()] += d.logprobs().stream().mapToInt(t -> t.token().length()).sum();
                if (tools.length > 0) {
                    List<String> out = new ArrayList<>();
                    if (!d.reasoning().isEmpty()) {
                        out.add(data(chunk(request, id, created, object, d.index(),
                                ReasoningContent.delta("", d.reasoning()), null, null)));
                    }
                    out.addAll(toolChunks(request, id, created, object, d.index(), tools[d.index()].accept(d.text()),
                            logprobs));
                    yield Flux.fromIterable(out);
                }
                yield Flux.just(data(chunk(request, id, created, object, d.index(),
                        chat ? ReasoningContent.delta(d.text(), d.reasoning()) : d.text(), logprobs, null)));
            }
            case GenerationEvent.Done d -> {
                List<String> out = new ArrayList<>();
                String reason = d.finishReason();
                if (tools.length > 0) {
                    out.addAll(toolChunks(request, id, created, object, d.index(), tools[d.index()].finish(), null));
                    reason = ToolCalling.finishReason(tools[d.index()].called(), reason);
                }
                Map<String, Object> last = chunk(request, id, created, object, d.index(), chat ? Map.of() : "", null,
                        reason);
                last.put("pagewarden_receipt", d.receipt());
                out.add(data(last));
                completionTokens[0] += d.completionTokens();
                if (request.includeUsage() && ++done[0] == n) {
                    Map<String, Object> usage = envelope(request, id, created, object);
                    usage.put("choices", List.of());
                    usage.put("usage", usage(d.promptTokens(), completionTokens[0], d.cachedTokens()));
                    out.add(data(usage));
                }
                yield Flux.fromIterable(out);
            }
        }).onErrorResume(t -> {
            ApiException api = t instanceof ApiException a ? a
                    : InferenceService.internalError(request.kind().idPrefix + id, t);
            ApiError error = api.error();
            return Flux.just(data(error.body()));
        }).concatWith(Flux.just("[DONE]"));
        return Mono.just(ResponseEntity.ok().contentType(MediaType.TEXT_EVENT_STREAM)
                .header("Cache-Control", "no-cache").body(new EventStream(Flux.concat(first, body))));
    }

    /** A choice's tool-aware deltas as chunks; the log probabilities ride on the first (or on an empty one). */
    private List<String> toolChunks(CompletionRequest request, String id, long created, String object, int index,
                                    List<Map<String, Object>> deltas, Object logprobs) {
        List<String> out = new ArrayList<>(deltas.size() + 1);
        if (deltas.isEmpty() && logprobs != null) {
            out.add(data(chunk(request, id, created, object, index, Map.of("content", ""), logprobs, null)));
        }
        for (int i = 0; i < deltas.size(); i++) {
            out.add(data(chunk(request, id, created, object, index, deltas.get(i), i == 0 ? logprobs : null, null)));
        }
        return out;
    }

    private Map<String, Object> chunk(CompletionRequest request, String id, long created, String object, int index,
                                      Object content, Object logprobs, String finishReason) {
        Map<String, Object> choice = new LinkedHashMap<>();
        choice.put("index", index);
        if (request.kind() == CompletionRequest.Kind.CHAT) {
            choice.put("delta", content);
        } else {
            choice.put("text", content);
        }
        choice.put("logprobs", logprobs);
        choice.put("finish_reason", finishReason);
        Map<String, Object> m = envelope(request, id, created, object);
        m.put("choices", List.of(choice));
        return m;
    }

    private static Map<String, Object> envelope(CompletionRequest request, String id, long created, String object) {
        Map<String, Object> m = new LinkedHashMap<>();
        m.put("id", request.kind().idPrefix + id);
        m.put("object", object);
        m.put("created", created);
        m.put("model", request.model());
        return m;
    }

    /** Usage of a request: the prompt once (and its tokens from the prefix cache), the tokens of every choice. */
    private static Map<String, Object> usage(int promptTokens, int completionTokens, int cachedTokens) {
        Map<String, Object> usage = new LinkedHashMap<>();
        usage.put("prompt_tokens", promptTokens);
        usage.put("completion_tokens", completionTokens);
        usage.put("total_tokens", promptTokens + completionTokens);
        // prompt tokens whose KV came from the tenant's prefix cache (0 on a miss, always present, as OpenAI's)
        usage.put("prompt_tokens_details", Map.of("cached_tokens", cachedTokens));
        return usage;
    }

    /**
     * Log probabilities in OpenAI's shape: chat's {@code {"content": [...], "refusal": null}}, or the legacy
     * completions' parallel lists with {@code text_offset} counted from {@code offset}. Null when the request asked
     * for none.
     */
    private static Object logprobs(CompletionRequest request, List<GenerationEvent.TokenLogprob> tokens, int offset) {
        if (request.controls().logprobs() < 0) {
            return null;
        }
        if (request.kind() == CompletionRequest.Kind.CHAT) {
            List<Map<String, Object>> content = new ArrayList<>(tokens.size());
            for (GenerationEvent.TokenLogprob t : tokens) {
                Map<String, Object> entry = chatLogprob(t);
                entry.put("top_logprobs", t.top().stream().map(CompletionController::chatLogprob).toList());
                content.add(entry);
            }
            Map<String, Object> out = new LinkedHashMap<>();
            out.put("content", content);
            out.put("refusal", null);
            return out;
        }
        List<String> texts = new ArrayList<>(tokens.size());
        List<Float> values = new ArrayList<>(tokens.size());
        List<Map<String, Float>> top = new ArrayList<>(tokens.size());
        List<Integer> offsets = new ArrayList<>(tokens.size());
        int at = offset;
        for (GenerationEvent.TokenLogprob t : tokens) {
            texts.add(t.token());
            values.add(t.logprob());
            // the alternatives and, as OpenAI's legacy API, the chosen token too
            Map<String, Float> alternatives = new LinkedHashMap<>();
            t.top().forEach(a -> alternatives.put(a.token(), a.logprob()));
            alternatives.putIfAbsent(t.token(), t.logprob());
            top.add(alternatives);
            offsets.add(at);
            at += t.token().length();
        }
        Map<String, Object> out = new LinkedHashMap<>();
        out.put("tokens", texts);
        out.put("token_logprobs", values);
        out.put("top_logprobs", top);
        out.put("text_offset", offsets);
        return out;
    }

    private static Map<String, Object> chatLogprob(GenerationEvent.TokenLogprob t) {
        Map<String, Object> entry = new LinkedHashMap<>();
        entry.put("token", t.token());
        entry.put("logprob", t.logprob());
        int[] bytes = new int[t.bytes().length];
        for (int i = 0; i < bytes.length; i++) {
            bytes[i] = t.bytes()[i] & 0xff;
        }
        entry.put("bytes", bytes);
        return entry;
    }

    private String data(Object payload) {
        return json.writeValueAsString(payload);
    }
}
