package dev.pagewarden.platform.completion;

import dev.pagewarden.platform.error.ApiException;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;

import java.util.List;

/**
 * What a running generation tells the API layer, per choice ({@code index}) and in order within each: deltas,
 * then exactly one Done. Choices of one request interleave.
 */
sealed interface GenerationEvent {
    int index();

    /**
     * New text for the client, and the log probabilities of the tokens generated since the last delta (empty when
     * the request asked for none). The text is empty only when it carries log probabilities or reasoning.
     *
     * @param reasoning new text of a thinking model's think span (chat's {@code reasoning_content}); empty when none
     */
    record Delta(int index, String text, List<TokenLogprob> logprobs, String reasoning) implements GenerationEvent {
        Delta(int index, String text, List<TokenLogprob> logprobs) {
            this(index, text, logprobs, "");
        }
    }

    /**
     * The end: why, token counts (of the prompt, those whose KV came from the prefix cache) and the compact signed
     * receipt (null when the engine signs none).
     */
    record Done(int index, long requestId, String finishReason, int promptTokens, int completionTokens, String receipt,
                int cachedTokens) implements GenerationEvent {
    }

    /**
     * One generated token's log probability and its UTF-8 bytes, with the most likely alternatives (most likely
     * first; empty for an alternative itself).
     */
    record TokenLogprob(String token, float logprob, byte[] bytes, List<TokenLogprob> top) {
    }

    /** A whole single-choice generation: its text joined and its end. */
    record Collected(String text, Done done) {
    }

    /** Waits for the whole generation of a one-choice request; {@code shownId} names it if it ended without a Done. */
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
