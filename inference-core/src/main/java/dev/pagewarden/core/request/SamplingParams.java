package dev.pagewarden.core.request;

/**
 * How tokens are chosen. {@code temperature == 0} is greedy (argmax, ties to the lowest id).
 * Same seed, same prompt, same parameters: same output.
 */
public record SamplingParams(float temperature, float topP, long seed) {
    public SamplingParams {
        if (!(temperature >= 0f) || !Float.isFinite(temperature)) {
            throw new IllegalArgumentException("temperature must be a finite number >= 0, got " + temperature);
        }
        if (!(topP > 0f && topP <= 1f)) {
            throw new IllegalArgumentException("top_p must be in (0, 1], got " + topP);
        }
    }

    public static SamplingParams greedy() {
        return new SamplingParams(0f, 1f, 0L);
    }

    public boolean isGreedy() {
        return temperature == 0f;
    }
}
