package dev.pagewarden.core.sampling;

/**
 * How tokens are chosen. {@code temperature == 0} is greedy (argmax, ties to the lowest id).
 * Same seed, same prompt, same parameters: same output. {@code ignoreEos} keeps generating through
 * stop tokens until max tokens (benchmarks on random-weight models need that).
 */
public record SamplingParams(float temperature, float topP, long seed, boolean ignoreEos) {

    public SamplingParams(float temperature, float topP, long seed) {
        this(temperature, topP, seed, false);
    }

    public SamplingParams {
        if (!(temperature >= 0f) || !Float.isFinite(temperature)) {
            throw new IllegalArgumentException("temperature must be a finite number >= 0, got " + temperature);
        }
        if (!(topP > 0f && topP <= 1f)) {
            throw new IllegalArgumentException("top_p must be in (0, 1], got " + topP);
        }
    }

    public static SamplingParams greedy() {
        return new SamplingParams(0f, 1f, 0L, false);
    }

    public boolean isGreedy() {
        return temperature == 0f;
    }
}
