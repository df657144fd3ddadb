package dev.pagewarden.platform.completion;

import dev.pagewarden.core.grammar.JsonGrammar;

import java.util.List;
import java.util.Map;

/**
 * A validated completion or chat request. Exactly one of {@code prompt}, {@code promptTokens} and
 * {@code messages} is set.
 *
 * @param maxTokens null: not given (InferenceService#maxTokens has the default)
 * @param seed      null: a fresh random seed (sampling only)
 * @param n         how many choices, each its own engine request
 * @param controls  the logit controls and log probabilities beyond temperature and top_p
 * @param promptCacheKey OpenAI's {@code prompt_cache_key}; null when not given
 * @param cacheSalt      vLLM's {@code cache_salt}; null when not given
 * @param tools          the functions the model may call and how; null when the request names none
 * @param thinking       the chat template variables and reasoning effort ({@link Thinking#NONE}: none)
 */
record CompletionRequest(Kind kind, String model, String prompt, int[] promptTokens, List<ChatMessage> messages,
                         Integer maxTokens, float temperature, float topP, Long seed, List<String> stop,
                         boolean stream, boolean includeUsage, String user, int n, Controls controls,
                         String promptCacheKey, String cacheSalt, ToolRequest tools, Thinking thinking) {

    CompletionRequest(Kind kind, String model, String prompt, int[] promptTokens, List<ChatMessage> messages,
                      Integer maxTokens, float temperature, float topP, Long seed, List<String> stop, boolean stream,
                      boolean includeUsage, String user, int n, Controls controls, String promptCacheKey,
                      String cacheSalt) {
        this(kind, model, prompt, promptTokens, messages, maxTokens, temperature, topP, seed, stop, stream,
                includeUsage, user, n, controls, promptCacheKey, cacheSalt, null, Thinking.NONE);
    }

    /**
     * @param logprobs alternatives per token to return with the chosen token's log probability; -1: no log
     *                 probabilities (chat: {@code logprobs} false; completions: {@code logprobs} absent)
     * @param format   the JSON the answer must be ({@code response_format} json_object or json_schema); null: text
     */
    record Controls(float presencePenalty, float frequencyPenalty, float repetitionPenalty, int topK, float minP,
                    Map<Integer, Float> logitBias, int logprobs, JsonGrammar format) {
        static final Controls NONE = new Controls(0f, 0f, 1f, 0, 0f, Map.of(), -1, null);
    }

    enum Kind {
        COMPLETION("text_completion", "cmpl-", "prompt"),
        CHAT("chat.completion", "chatcmpl-", "messages"),
        /** {@code POST /v1/responses}: a chat underneath (messages from input and instructions). */
        RESPONSE("response", "resp_", "input");

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
