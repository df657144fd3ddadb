package dev.pagewarden.platform.completion;

import java.util.List;

/**
 * A validated completion or chat request. Exactly one of {@code prompt}, {@code promptTokens} and
 * {@code messages} is set.
 *
 * @param maxTokens null: not given (InferenceService#maxTokens has the default)
 * @param seed      null: a fresh random seed (sampling only)
 * @param promptCacheKey OpenAI's {@code prompt_cache_key}; null when not given
 * @param cacheSalt      vLLM's {@code cache_salt}; null when not given
 */
record CompletionRequest(Kind kind, String model, String prompt, int[] promptTokens, List<ChatMessage> messages,
                         Integer maxTokens, float temperature, float topP, Long seed, List<String> stop,
                         boolean stream, boolean includeUsage, String user, String promptCacheKey, String cacheSalt) {

    enum Kind {
        COMPLETION("text_completion", "cmpl-", "prompt"),
        CHAT("chat.completion", "chatcmpl-", "messages");

        final String object;
        final String idPrefix;
        /** The field that holds the prompt: what a context-length error names as its param. */
        final String promptParam;

        Kind(String object, String idPrefix, String promptParam) {
            this.object = object;
            this.idPrefix = idPrefix;
            this.promptParam = promptParam;
        }
    }
}
