package dev.pagewarden.platform.completion;

import dev.pagewarden.platform.error.ApiError;
import dev.pagewarden.platform.error.ApiException;
import dev.pagewarden.platform.http.RequestIds;
import dev.pagewarden.platform.tenant.TenantPrincipal;
import org.springframework.http.HttpStatus;
import org.springframework.http.MediaType;
import org.springframework.http.ResponseEntity;
import org.springframework.security.core.annotation.AuthenticationPrincipal;
import org.springframework.web.bind.annotation.DeleteMapping;
import org.springframework.web.bind.annotation.GetMapping;
import org.springframework.web.bind.annotation.PathVariable;
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
 * {@code POST /v1/responses}, OpenAI's Responses API for text: the request runs as a chat through
 * {@link InferenceService} (same template, limits, request row - with the {@code resp_} prefix - and receipt), and
 * the answer is a response object or its typed event stream. The receipt travels as for chat: the
 * {@code X-Pagewarden-Receipt} header and {@code pagewarden_receipt} field, and in a stream the
 * {@code pagewarden_receipt} of the terminal event's response. Nothing is stored, so the endpoints that read a stored
 * response answer 404 saying so.
 */
@RestController
class ResponsesController {
    private final ResponsesParser parser;
    private final InferenceService inference;
    private final JsonMapper json;

    ResponsesController(ResponsesParser parser, InferenceService inference, JsonMapper json) {
        this.parser = parser;
        this.inference = inference;
        this.json = json;
    }

    @PostMapping("/v1/responses")
    Mono<ResponseEntity<?>> create(@RequestBody(required = false) Mono<byte[]> body,
                                   @AuthenticationPrincipal TenantPrincipal caller, ServerWebExchange exchange) {
        String httpId = RequestIds.of(exchange);
        long created = System.currentTimeMillis() / 1000;
        return body.defaultIfEmpty(new byte[0])
                .map(parser::parse)
                .flatMap(request -> inference.generate(caller, request.chat(), httpId)
                        .onErrorMap(ApiException.class, ResponsesController::inResponseTerms)
                        .flatMap(generation -> {
                            Shape shape = new Shape(request, CompletionRequest.Kind.RESPONSE.idPrefix
                                    + generation.publicId(), generation.publicId(), created);
                            if (generation.tools() != null) {
                                return request.chat().stream()
                                        ? Mono.just(ResponseToolStream.stream(shape, generation, json))
                                        : collectWithTools(shape, generation);
                            }
                            return request.chat().stream() ? stream(shape, generation) : collect(shape, generation);
                        }));
    }

    /** The engine checks the chat's max_tokens: a refusal of it names the field this request sent. */
    private static ApiException inResponseTerms(ApiException e) {
        ApiError error = e.error();
        if (e.status() != HttpStatus.BAD_REQUEST || !"max_tokens".equals(error.param())) {
            return e;
        }
        return ApiException.invalid("max_output_tokens", error.code(),
                error.message().replace("max_tokens", "max_output_tokens"));
    }

    @GetMapping({"/v1/responses/{id}", "/v1/responses/{id}/input_items"})
    Mono<ResponseEntity<?>> retrieve(@PathVariable String id) {
        return Mono.error(notStored(id));
    }

    @DeleteMapping("/v1/responses/{id}")
    Mono<ResponseEntity<?>> delete(@PathVariable String id) {
        return Mono.error(notStored(id));
    }

    @PostMapping("/v1/responses/{id}/cancel")
    Mono<ResponseEntity<?>> cancel(@PathVariable String id) {
        return Mono.error(notStored(id));
    }

    private static ApiException notStored(String id) {
        return ApiException.notFound("response_id", "not_found", "Response '" + id + "' cannot be retrieved: responses "
                + "are not stored here (store: false), so there is nothing to read, list, cancel or delete. Its request "
                + "record and isolation receipt are at GET /v1/audit/requests/" + id + ".");
    }

    private Mono<ResponseEntity<?>> collect(Shape shape, InferenceService.Generation generation) {
        return GenerationEvent.collect(generation.events(), shape.id).map(c -> {
            Map<String, Object> response = shape.response(status(c.done()), List.of(shape.message(c.text(),
                    status(c.done()))), c.done(), null);
            ResponseEntity.BodyBuilder ok = ResponseEntity.ok().contentType(MediaType.APPLICATION_JSON);
            if (c.done().receipt() != null) {
                ok.header(CompletionController.RECEIPT_HEADER, c.done().receipt());
            }
            return ok.body(response);
        });
    }

    /** Output items for the text outside calls (a message, when there is any) and one function_call item per call. */
    private Mono<ResponseEntity<?>> collectWithTools(Shape shape, InferenceService.Generation generation) {
        return GenerationEvent.collect(generation.events(), shape.id).map(c -> {
            String status = status(c.done());
            dev.pagewarden.core.tools.ToolCallParser.Parsed parsed = generation.tools().parse(c.text());
            List<Map<String, Object>> output = new java.util.ArrayList<>();
            if (parsed.content() != null) {
                output.add(shape.message(parsed.content(), status));
            }
            parsed.calls().forEach(call -> output.add(Shape.functionCall(ToolCalling.callId(), call.name(),
                    call.arguments(), "completed")));
            Map<String, Object> response = shape.response(status, output, c.done(), null);
            ResponseEntity.BodyBuilder ok = ResponseEntity.ok().contentType(MediaType.APPLICATION_JSON);
            if (c.done().receipt() != null) {
                ok.header(CompletionController.RECEIPT_HEADER, c.done().receipt());
            }
            return ok.body(response);
        });
    }

    /**
     * The typed events in OpenAI's order: created, in_progress, the message item and its text part added, the text
     * deltas, then text, part and item done and the terminal event ({@code response.completed}, or
     * {@code response.incomplete} when max_output_tokens ended it). A failure after the stream began sends an
     * {@code error} event and {@code response.failed}: never a normal-looking end.
     */
    private Mono<ResponseEntity<?>> stream(Shape shape, InferenceService.Generation generation) {
        Events out = new Events(json);
        StringBuilder text = new StringBuilder();
        Flux<ResponseEventStream.Event> opening = Flux.defer(() -> {
            Map<String, Object> created = shape.response("in_progress", List.of(), null, null);
            Map<String, Object> item = shape.item("in_progress", List.of());
            return Flux.just(out.event("response.created", Map.of("response", created)),
                    out.event("response.in_progress", Map.of("response", created)),
                    out.event("response.output_item.added", Map.of("output_index", 0, "item", item)),
                    out.event("response.content_part.added", shape.part(Map.of("part", Shape.text("")))));
        });
        Flux<ResponseEventStream.Event> body = generation.events().concatMap(e -> switch (e) {
            case GenerationEvent.Delta d -> {
                text.append(d.text());
                yield Flux.just(out.event("response.output_text.delta",
                        shape.part(Map.of("delta", d.text(), "logprobs", List.of()))));
            }
            case GenerationEvent.Done d -> {
                String status = status(d);
                Map<String, Object> message = shape.message(text.toString(), status);
                yield Flux.just(out.event("response.output_text.done",
                                shape.part(Map.of("text", text.toString(), "logprobs", List.of()))),
                        out.event("response.content_part.done", shape.part(Map.of("part", Shape.text(text.toString())))),
                        out.event("response.output_item.done", Map.of("output_index", 0, "item", message)),
                        out.event("response." + status, Map.of("response", shape.response(status, List.of(message), d, null))));
            }
        }).onErrorResume(t -> {
            ApiError error = (t instanceof ApiException a ? a : InferenceService.internalError(shape.id, t)).error();
            Map<String, Object> failure = new LinkedHashMap<>();
            failure.put("code", error.code());
            failure.put("message", error.message());
            failure.put("param", error.param());
            return Flux.just(out.event("error", failure), out.event("response.failed", Map.of("response",
                    shape.response("failed", List.of(), null, Map.of("code", error.code(), "message", error.message())))));
        });
        return Mono.just(ResponseEntity.ok().contentType(MediaType.TEXT_EVENT_STREAM)
                .header("Cache-Control", "no-cache").body(new ResponseEventStream(Flux.concat(opening, body))));
    }

    /** completed, or incomplete when the output hit max_output_tokens (or the context). */
    static String status(GenerationEvent.Done done) {
        return "length".equals(done.finishReason()) ? "incomplete" : "completed";
    }

    /** Numbers one stream's events in order, each payload led by its type and sequence number. */
    static final class Events {
        private final JsonMapper json;
        private int sequence;

        Events(JsonMapper json) {
            this.json = json;
        }

        ResponseEventStream.Event event(String type, Map<String, Object> fields) {
            Map<String, Object> payload = new LinkedHashMap<>();
            payload.put("type", type);
            payload.put("sequence_number", sequence++);
            payload.putAll(fields);
            return new ResponseEventStream.Event(type, json.writeValueAsString(payload));
        }
    }

    /** The objects of one response: the response, its one message item and its text part, as OpenAI shapes them. */
    record Shape(ResponsesParser.ResponseRequest request, String id, String publicId, long createdAt) {

        Map<String, Object> response(String status, List<Map<String, Object>> output, GenerationEvent.Done done,
                                     Map<String, Object> error) {
            CompletionRequest chat = request.chat();
            Map<String, Object> r = new LinkedHashMap<>();
            r.put("id", id);
            r.put("object", "response");
            r.put("created_at", createdAt);
            r.put("status", status);
            r.put("background", false);
            r.put("error", error);
            r.put("incomplete_details", "incomplete".equals(status) ? Map.of("reason", "max_output_tokens") : null);
            r.put("instructions", request.instructions());
            r.put("max_output_tokens", chat.maxTokens());
            r.put("metadata", request.metadata());
            r.put("model", chat.model());
            r.put("output", output);
            r.put("parallel_tool_calls", request.parallelToolCalls());
            r.put("previous_response_id", null);
            Map<String, Object> reasoning = new LinkedHashMap<>();
            reasoning.put("effort", chat.thinking().effort());
            reasoning.put("summary", null);
            r.put("reasoning", reasoning);
            r.put("service_tier", "default");
            r.put("store", false);
            r.put("temperature", chat.temperature());
            r.put("text", Map.of("format", request.textFormat()));
            r.put("tool_choice", request.toolChoice());
            r.put("tools", request.tools());
            r.put("top_p", chat.topP());
            r.put("truncation", "disabled");
            r.put("usage", done == null ? null : usage(done));
            r.put("user", chat.user());
            if (done != null) {
                r.put("pagewarden_receipt", done.receipt());
            }
            return r;
        }

        Map<String, Object> message(String text, String status) {
            return item(status, List.of(text(text)));
        }

        Map<String, Object> item(String status, List<Map<String, Object>> content) {
            Map<String, Object> m = new LinkedHashMap<>();
            m.put("id", "msg_" + publicId);
            m.put("type", "message");
            m.put("status", status);
            m.put("role", "assistant");
            m.put("content", content);
            return m;
        }

        /** A function_call output item: {@code id} is the item's, {@code callId} the one a result names. */
        static Map<String, Object> functionCall(String callId, String name, String arguments, String status) {
            Map<String, Object> m = new LinkedHashMap<>();
            m.put("id", "fc_" + callId.substring("call_".length()));
            m.put("type", "function_call");
            m.put("status", status);
            m.put("arguments", arguments);
            m.put("call_id", callId);
            m.put("name", name);
            return m;
        }

        static Map<String, Object> text(String text) {
            Map<String, Object> part = new LinkedHashMap<>();
            part.put("type", "output_text");
            part.put("text", text);
            part.put("annotations", List.of());
            part.put("logprobs", List.of());
            return part;
        }

        /** An event about the message's one text part: where it is, then {@code fields}. */
        Map<String, Object> part(Map<String, Object> fields) {
            Map<String, Object> m = new LinkedHashMap<>();
            m.put("item_id", "msg_" + publicId);
            m.put("output_index", 0);
            m.put("content_index", 0);
            m.putAll(fields);
            return m;
        }

        private static Map<String, Object> usage(GenerationEvent.Done d) {
            Map<String, Object> usage = new LinkedHashMap<>();
            usage.put("input_tokens", d.promptTokens());
            usage.put("input_tokens_details", Map.of("cached_tokens", d.cachedTokens()));
            usage.put("output_tokens", d.completionTokens());
            usage.put("output_tokens_details", Map.of("reasoning_tokens", 0));
            usage.put("total_tokens", d.promptTokens() + d.completionTokens());
            return usage;
        }
    }
}
