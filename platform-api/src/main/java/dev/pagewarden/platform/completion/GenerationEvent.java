package dev.pagewarden.platform.completion;

/** What a running generation tells the API layer, in order: deltas, then exactly one Done. */
sealed interface GenerationEvent {

    /** New text for the client (never empty). */
    record Delta(String text) implements GenerationEvent {
    }

    /**
     * The end: why, token counts (of the prompt, those whose KV came from the prefix cache) and the compact signed
     * receipt (null when the engine signs none).
     */
    record Done(long requestId, String finishReason, int promptTokens, int completionTokens, String receipt,
                int cachedTokens) implements GenerationEvent {
    }
}
