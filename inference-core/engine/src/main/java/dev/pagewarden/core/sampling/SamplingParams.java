package dev.pagewarden.core.sampling;

import java.util.Map;
import java.util.TreeMap;

/**
 * How tokens are chosen. {@code temperature == 0} is greedy (argmax, ties to the lowest id).
 * Same seed, same prompt, same parameters: same output. {@code ignoreEos} keeps generating through
 * stop tokens until max tokens (benchmarks on random-weight models need that).
 *
 * <p>The logit controls ({@link Sampler} applies them in its documented order):
 * {@code logitBias} token id to a bias in [-100, 100] added to its logit; {@code repetitionPenalty} (> 0, 1 off)
 * for every token in the prompt or the output; {@code presencePenalty} and {@code frequencyPenalty} in [-2, 2] (0 off)
 * for the tokens of the output; {@code topK} (0 off, else >= 1), {@code minP} in [0, 1] (0 off).
 * {@code logprobs}: -1 returns none; k >= 0 returns the chosen token's log probability and the k most likely
 * alternatives' (at most {@link #MAX_LOGPROBS}).
 * {@code constraint}: the tokens allowed next (structured outputs), applied after all other controls; null: any.
 */
public record SamplingParams(float temperature, float topP, long seed, boolean ignoreEos, int topK, float minP,
                             float presencePenalty, float frequencyPenalty, float repetitionPenalty,
                             Map<Integer, Float> logitBias, int logprobs, TokenConstraint constraint) {
    public static final int MAX_LOGPROBS = 20;

    public SamplingParams(float temperature, float topP, long seed, boolean ignoreEos, int topK, float minP,
                          float presencePenalty, float frequencyPenalty, float repetitionPenalty,
                          Map<Integer, Float> logitBias, int logprobs) {
        this(temperature, topP, seed, ignoreEos, topK, minP, presencePenalty, frequencyPenalty, repetitionPenalty,
                logitBias, logprobs, null);
    }

    public SamplingParams(float temperature, float topP, long seed) {
        this(temperature, topP, seed, false);
    }

    public SamplingParams(float temperature, float topP, long seed, boolean ignoreEos) {
        this(temperature, topP, seed, ignoreEos, 0, 0f, 0f, 0f, 1f, Map.of(), -1);
    }

    public SamplingParams {
        if (!(temperature >= 0f) || !Float.isFinite(temperature)) {
            throw new IllegalArgumentException("temperature must be a finite number >= 0, got " + temperature);
        }
        if (!(topP > 0f && topP <= 1f)) {
            throw new IllegalArgumentException("top_p must be in (0, 1], got " + topP);
        }
        if (topK < 0) {
            throw new IllegalArgumentException("top_k must be 0 (off) or at least 1, got " + topK);
        }
        if (!(minP >= 0f && minP <= 1f)) {
            throw new IllegalArgumentException("min_p must be between 0 and 1, got " + minP);
        }
        if (!(presencePenalty >= -2f && presencePenalty <= 2f)) {
            throw new IllegalArgumentException("presence_penalty must be between -2 and 2, got "
                    + presencePenalty);
        }
        if (!(frequencyPenalty >= -2f && frequencyPenalty <= 2f)) {
            throw new IllegalArgumentException("frequency_penalty must be between -2 and 2, got "
                    + frequencyPenalty);
        }
        if (!(repetitionPenalty > 0f) || !Float.isFinite(repetitionPenalty)) {
            throw new IllegalArgumentException("repetition_penalty must be a finite number > 0, got "
                    + repetitionPenalty);
        }
        if (logprobs < -1 || logprobs > MAX_LOGPROBS) {
            throw new IllegalArgumentException("at most " + MAX_LOGPROBS + " log probabilities per token, got "
                    + logprobs);
        }
        logitBias = Map.copyOf(logitBias == null ? Map.of() : logitBias);
        for (Map.Entry<Integer, Float> e : logitBias.entrySet()) {
            if (e.getKey() < 0 || !(e.getValue() >= -100f && e.getValue() <= 100f)) {
                throw new IllegalArgumentException("logit_bias maps token ids >= 0 to a bias between -100 "
                        + "and 100, got " + e.getKey() + ": " + e.getValue());
            }
        }
    }

    public static SamplingParams greedy() {
        return new SamplingParams(0f, 1f, 0L, false);
    }

    public boolean isGreedy() {
        return temperature == 0f;
    }

    /** These parameters with {@code top_k} and {@code min_p} (0 = off). */
    public SamplingParams withFilters(int topK, float minP) {
        return new SamplingParams(temperature, topP, seed, ignoreEos, topK, minP, presencePenalty, frequencyPenalty,
                repetitionPenalty, logitBias, logprobs, constraint);
    }

    /** These parameters with the penalties (0, 0, 1 = off). */
    public SamplingParams withPenalties(float presence, float frequency, float repetition) {
        return new SamplingParams(temperature, topP, seed, ignoreEos, topK, minP, presence, frequency, repetition,
                logitBias, logprobs, constraint);
    }

    public SamplingParams withLogitBias(Map<Integer, Float> bias) {
        return new SamplingParams(temperature, topP, seed, ignoreEos, topK, minP, presencePenalty, frequencyPenalty,
                repetitionPenalty, bias, logprobs, constraint);
    }

    /** These parameters returning log probabilities: {@code top} alternatives per token (-1: none). */
    public SamplingParams withLogprobs(int top) {
        return new SamplingParams(temperature, topP, seed, ignoreEos, topK, minP, presencePenalty, frequencyPenalty,
                repetitionPenalty, logitBias, top, constraint);
    }

    /** These parameters with another seed (choice i of a request with n choices samples with seed + i). */
    public SamplingParams withSeed(long newSeed) {
        return new SamplingParams(temperature, topP, newSeed, ignoreEos, topK, minP, presencePenalty, frequencyPenalty,
                repetitionPenalty, logitBias, logprobs, constraint);
    }

    /** These parameters with the tokens restricted by {@code c} (null: no restriction). */
    public SamplingParams withConstraint(TokenConstraint c) {
        return new SamplingParams(temperature, topP, seed, ignoreEos, topK, minP, presencePenalty, frequencyPenalty,
                repetitionPenalty, logitBias, logprobs, c);
    }

    /** Whether the logits change before temperature: bias or any penalty. */
    boolean adjustsLogits() {
        return presencePenalty != 0f || frequencyPenalty != 0f || repetitionPenalty != 1f || !logitBias.isEmpty();
    }

    /** The bias as sorted ids and values (for a sampler's hot loop). */
    int[] biasIds() {
        return new TreeMap<>(logitBias).keySet().stream().mapToInt(Integer::intValue).toArray();
    }
}
