package dev.pagewarden.platform.completion;

import dev.pagewarden.platform.error.ApiException;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;

/** What a running generation tells the API layer, in order: deltas, then exactly one Done. */
sealed interface GenerationEvent {

    /** New text for the client (never empty). */
    record Delta(String text) implements GenerationEvent {
    }

    /**
     * The end: why, token counts and the compact signed receipt (null when the engine signs none).
     */
    record Done(long requestId, String finishReason, int promptTokens, int completionTokens, String receipt)
            implements GenerationEvent {
    }

    /** A whole generation: its text joined and its end. */
    record Collected(String text, Done done) {
    }

    /** Waits for the whole generation; {@code shownId} names the request if it ended without a Done. */
    static Mono<Collected> collect(Flux<GenerationEvent> events, String shownId) {
        return events.collectList().map(list -> {
            StringBuilder text = new StringBuilder();
            Done done = null;
            for (GenerationEvent e : list) {
                switch (e) {
                    case Delta d -> text.append(d.text());
                    case Done d -> done = d;
                }
            }
            if (done == null) {
                throw ApiException.serverError("internal_error", "request " + shownId + " ended without a result");
            }
            return new Collected(text.toString(), done);
        });
    }
}
