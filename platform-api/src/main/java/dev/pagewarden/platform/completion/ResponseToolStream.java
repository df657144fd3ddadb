package dev.pagewarden.platform.completion;

import dev.pagewarden.core.tools.ToolCallStream;
import dev.pagewarden.platform.error.ApiError;
import dev.pagewarden.platform.error.ApiException;
import org.springframework.http.MediaType;
import org.springframework.http.ResponseEntity;
import reactor.core.publisher.Flux;
import tools.jackson.databind.json.JsonMapper;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * A Responses stream when tools are offered: text opens a message item when it comes (text that may begin a call
 * waits until it is known not to), and each call is a {@code function_call} item: {@code response.output_item.added}
 * (empty arguments), {@code response.function_call_arguments.delta} and {@code .done}, then
 * {@code response.output_item.done}. The terminal event lists every item in order.
 */
final class ResponseToolStream {
    private final ResponsesController.Shape shape;
    private final ResponsesController.Events out;
    private final ToolCallStream calls;
    /** The output items in order; an open item's place holds null until it is done. */
    private final List<Map<String, Object>> items = new ArrayList<>();
    private final StringBuilder text = new StringBuilder();
    private int message = -1;
    private int messages;
    private String callId;
    private String callName;
    private int call = -1;

    private ResponseToolStream(ResponsesController.Shape shape, ResponsesController.Events out, ToolCallStream calls) {
        this.shape = shape;
        this.out = out;
        this.calls = calls;
    }

    static ResponseEntity<?> stream(ResponsesController.Shape shape, InferenceService.Generation generation,
                                    JsonMapper json) {
        ResponseToolStream s = new ResponseToolStream(shape, new ResponsesController.Events(json),
                new ToolCallStream(generation.tools()));
        Flux<ResponseEventStream.Event> opening = Flux.defer(() -> {
            Map<String, Object> created = shape.response("in_progress", List.of(), null, null);
            return Flux.just(s.out.event("response.created", Map.of("response", created)),
                    s.out.event("response.in_progress", Map.of("response", created)));
        });
        Flux<ResponseEventStream.Event> body = generation.events().concatMap(e -> switch (e) {
            case GenerationEvent.Delta d -> Flux.fromIterable(s.apply(s.calls.accept(d.text())));
            case GenerationEvent.Done d -> {
                List<ResponseEventStream.Event> events = s.apply(s.calls.finish());
                String status = ResponsesController.status(d);
                events.addAll(s.closeMessage(status));
                events.add(s.out.event("response." + status, Map.of("response",
                        shape.response(status, List.copyOf(s.items), d, null))));
                yield Flux.fromIterable(events);
            }
        }).onErrorResume(t -> {
            ApiError error = (t instanceof ApiException a ? a : InferenceService.internalError(shape.id(), t)).error();
            Map<String, Object> failure = new LinkedHashMap<>();
            failure.put("code", error.code());
            failure.put("message", error.message());
            failure.put("param", error.param());
            return Flux.just(s.out.event("error", failure), s.out.event("response.failed", Map.of("response",
                    shape.response("failed", List.of(), null, Map.of("code", error.code(), "message", error.message())))));
        });
        return ResponseEntity.ok().contentType(MediaType.TEXT_EVENT_STREAM).header("Cache-Control", "no-cache")
                .body(new ResponseEventStream(Flux.concat(opening, body)));
    }

    private List<ResponseEventStream.Event> apply(List<ToolCallStream.Event> events) {
        List<ResponseEventStream.Event> sent = new ArrayList<>();
        for (ToolCallStream.Event e : events) {
            switch (e) {
                case ToolCallStream.Event.Text t -> {
                    if (t.text().isEmpty()) {
                        continue;
                    }
                    if (message < 0) {
                        message = items.size();
                        items.add(null);
                        messages++;
                        sent.add(out.event("response.output_item.added", Map.of("output_index", message,
                                "item", messageItem("in_progress", List.of()))));
                        sent.add(out.event("response.content_part.added", part(Map.of("part",
                                ResponsesController.Shape.text("")))));
                    }
                    text.append(t.text());
                    sent.add(out.event("response.output_text.delta", part(Map.of("delta", t.text(),
                            "logprobs", List.of()))));
                }
                case ToolCallStream.Event.CallStart c -> {
                    sent.addAll(closeMessage("completed"));
                    callId = ToolCalling.callId();
                    callName = c.name();
                    call = items.size();
                    items.add(null);
                    sent.add(out.event("response.output_item.added", Map.of("output_index", call, "item",
                            ResponsesController.Shape.functionCall(callId, callName, "", "in_progress"))));
                }
                case ToolCallStream.Event.Arguments a -> {
                    Map<String, Object> done = ResponsesController.Shape.functionCall(callId, callName, a.fragment(),
                            "completed");
                    String itemId = (String) done.get("id");
                    sent.add(out.event("response.function_call_arguments.delta", Map.of("item_id", itemId,
                            "output_index", call, "delta", a.fragment())));
                    sent.add(out.event("response.function_call_arguments.done", Map.of("item_id", itemId,
                            "output_index", call, "arguments", a.fragment())));
                    sent.add(out.event("response.output_item.done", Map.of("output_index", call, "item", done)));
                    items.set(call, done);
                }
            }
        }
        return sent;
    }

    /** Ends the open message item, if any. */
    private List<ResponseEventStream.Event> closeMessage(String status) {
        if (message < 0) {
            return new ArrayList<>();
        }
        String all = text.toString();
        Map<String, Object> item = messageItem(status, List.of(ResponsesController.Shape.text(all)));
        List<ResponseEventStream.Event> sent = new ArrayList<>(List.of(
                out.event("response.output_text.done", part(Map.of("text", all, "logprobs", List.of()))),
                out.event("response.content_part.done", part(Map.of("part", ResponsesController.Shape.text(all)))),
                out.event("response.output_item.done", Map.of("output_index", message, "item", item))));
        items.set(message, item);
        message = -1;
        text.setLength(0);
        return sent;
    }

    private String messageId() {
        return "msg_" + shape.publicId() + (messages > 1 ? "_" + messages : "");
    }

    private Map<String, Object> messageItem(String status, List<Map<String, Object>> content) {
        Map<String, Object> m = shape.item(status, content);
        m.put("id", messageId());
        return m;
    }

    private Map<String, Object> part(Map<String, Object> fields) {
        Map<String, Object> m = new LinkedHashMap<>();
        m.put("item_id", messageId());
        m.put("output_index", message);
        m.put("content_index", 0);
        m.putAll(fields);
        return m;
    }
}
