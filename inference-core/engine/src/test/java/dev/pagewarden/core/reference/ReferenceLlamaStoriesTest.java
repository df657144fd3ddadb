package dev.pagewarden.core.reference;

import dev.pagewarden.core.model.Llama2cLoader;
import dev.pagewarden.core.model.LlamaWeights;
import dev.pagewarden.core.testing.TestModels;
import dev.pagewarden.core.tokenizer.Tokenizer;
import dev.pagewarden.core.tokenizer.TokenizerBin;
import org.junit.jupiter.api.Test;

import java.lang.foreign.Arena;
import java.util.Arrays;
import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;

/** The reference forward pass on the real stories260K checkpoint: greedy text must be a story. */
class ReferenceLlamaStoriesTest {
    /** Greedy ids after BOS + "Once upon a time", 100 steps, as this reference computes them. */
    static final int[] GOLDEN = {
            432, 383, 286, 261, 376, 298, 315, 421, 395, 317, 426, 338, 401, 396, 267, 337, 410, 408, 419, 292,
            411, 322, 265, 282, 295, 433, 426, 385, 328, 432, 358, 394, 261, 370, 432, 352, 266, 268, 388, 426,
            338, 391, 266, 267, 337, 335, 312, 432, 398, 312, 286, 267, 414, 270, 333, 415, 426, 13, 438, 310,
            439, 419, 357, 336, 432, 313, 438, 310, 432, 278, 316, 439, 419, 298, 414, 267, 265, 282, 295, 433,
            426, 436, 317, 286, 296, 418, 269, 279, 292, 416, 439, 413, 409, 416, 327, 263, 415, 294, 267, 400};

    @Test
    void greedyContinuationOfOnceUponATimeIsAStory() {
        Tokenizer tok = new Tokenizer(TokenizerBin.read(TestModels.tok512()));
        try (Arena arena = Arena.ofConfined()) {
            LlamaWeights weights = Llama2cLoader.load(TestModels.stories260K(), arena);
            ReferenceLlama model = new ReferenceLlama(weights);
            int[] prompt = tok.encode("Once upon a time", true, false);
            List<ReferenceLlama.Step> steps = ReferenceLlama.greedySteps(model, prompt, 100);
            int[] generated = steps.stream().mapToInt(ReferenceLlama.Step::token).toArray();

            int[] all = Arrays.copyOf(prompt, prompt.length + generated.length);
            System.arraycopy(generated, 0, all, prompt.length, generated.length);
            String text = tok.decode(all);
            ReferenceLlama.Step closest = steps.stream()
                    .min((a, b) -> Double.compare(a.margin(), b.margin())).orElseThrow();
            System.out.println("stories260K greedy: " + text);
            System.out.println("generated ids: " + Arrays.toString(generated));
            System.out.println("smallest top-2 margin: " + closest);

            assertThat(text).startsWith("Once upon a time, there was a little girl named Lily. "
                    + "She loved to play outside in the park. One day, she saw a big, red ball.");
            assertThat(text.split("Lily", -1).length - 1).as("mentions of Lily").isGreaterThanOrEqualTo(3);
            // the full golden continuation: float engines must reproduce it unless a step is a near-tie
            assertThat(generated).containsExactly(GOLDEN);
            assertThat(closest.margin()).as("no step of this prompt is a near-tie").isGreaterThan(0.01);
        }
    }
}
