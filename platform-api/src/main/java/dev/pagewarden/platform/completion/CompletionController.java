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
            StringBuilder text = new StringBuilder();
            GenerationEvent.Done done = null;
            for (GenerationEvent e : events) {
                switch (e) {
                    case GenerationEvent.Delta d -> text.append(d.text());
                    case GenerationEvent.Done d -> done = d;
                }
            }
            if (done == null) {
                throw ApiException.serverError("internal_error", "request " + request.kind().idPrefix + generation.publicId()
                        + " ended without a result");
            }
            Map<String, Object> choice = new LinkedHashMap<>();
            choice.put("index", 0);
            if (request.kind() == CompletionRequest.Kind.CHAT) {
                choice.put("message", Map.of("role", "assistant", "content", text.toString()));
            } else {
                choice.put("text", text.toString());
            }
            choice.put("logprobs", null);
            choice.put("finish_reason", done.finishReason());
            Map<String, Object> response = envelope(request, generation.publicId(), created, request.kind().object);
            response.put("choices", List.of(choice));
            response.put("usage", usage(done));
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
        Flux<String> first = chat
                ? Flux.just(data(chunk(request, id, created, object, Map.of("role", "assistant", "content", ""), null)))
                : Flux.empty();
        Flux<String> body = generation.events().concatMap(e -> switch (e) {
            case GenerationEvent.Delta d -> Flux.just(data(chunk(request, id, created, object,
                    chat ? Map.of("content", d.text()) : d.text(), null)));
            case GenerationEvent.Done d -> {
                Map<String, Object> last = chunk(request, id, created, object, chat ? Map.of() : "", d.finishReason());
                last.put("pagewarden_receipt", d.receipt());
                List<String> out = new ArrayList<>();
                out.add(data(last));
                if (request.includeUsage()) {
                    Map<String, Object> usage = envelope(request, id, created, object);
                    usage.put("choices", List.of());
                    usage.put("usage", usage(d));
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

    private Map<String, Object> chunk(CompletionRequest request, String id, long created, String object, Object content,
                                      String finishReason) {
        Map<String, Object> choice = new LinkedHashMap<>();
        choice.put("index", 0);
        if (request.kind() == CompletionRequest.Kind.CHAT) {
            choice.put("delta", content);
        } else {
            choice.put("text", content);
        }
        choice.put("logprobs", null);
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

    private static Map<String, Object> usage(GenerationEvent.Done d) {
        Map<String, Object> usage = new LinkedHashMap<>();
        usage.put("prompt_tokens", d.promptTokens());
        usage.put("completion_tokens", d.completionTokens());
        usage.put("total_tokens", d.promptTokens() + d.completionTokens());
        // prompt tokens whose KV came from the tenant's prefix cache (0 on a miss, always present, as OpenAI's)
        usage.put("prompt_tokens_details", Map.of("cached_tokens", d.cachedTokens()));
        return usage;
    }

    private String data(Object payload) {
        return json.writeValueAsString(payload);
    }
}
