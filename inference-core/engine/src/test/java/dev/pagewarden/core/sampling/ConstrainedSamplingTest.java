package dev.pagewarden.core.sampling;

import org.junit.jupiter.api.Test;

import java.util.ArrayList;
import java.util.BitSet;
import java.util.List;
import java.util.Map;

import static org.assertj.core.api.Assertions.assertThat;

/** A token constraint masks after every other control, and its state advances with each token drawn or skipped. */
class ConstrainedSamplingTest {

    /** Token 3 must come after token 1, token 1 after anything else; complete after 3. */
    private record Alternating(List<Integer> seen, boolean afterOne, boolean done) implements TokenConstraint.State {
        @Override
        public BitSet allowed() {
            BitSet b = new BitSet();
            if (!done) {
                b.set(afterOne ? 3 : 1);
                if (!afterOne) {
                    b.set(2);
                }
            }
            return b;
        }

        @Override
        public boolean complete() {
            return done;
        }

        @Override
        public TokenConstraint.State advance(int token) {
            assertThat(allowed().get(token)).as("token %d allowed", token).isTrue();
            seen.add(token);
            return new Alternating(seen, token == 1, token == 3);
        }
    }

    @Test
    void greedyTakesTheBestAllowedTokenEvenAgainstABias() {
        List<Integer> seen = new ArrayList<>();
        SamplingParams p = SamplingParams.greedy().withLogitBias(Map.of(0, 100f))
                .withConstraint(() -> new Alternating(seen, false, false));
        Sampler s = new Sampler(p);
        assertThat(s.constraintComplete()).isFalse();
        assertThat(s.sample(new float[]{9f, 1f, 2f, 8f})).as("0 is banned, 3 not yet allowed").isEqualTo(2);
        assertThat(s.sample(new float[]{9f, 5f, 2f, 8f})).isEqualTo(1);
        assertThat(s.constraintComplete()).isFalse();
        assertThat(s.sample(new float[]{9f, 5f, 2f, 1f})).isEqualTo(3);
        assertThat(s.constraintComplete()).isTrue();
        assertThat(seen).containsExactly(2, 1, 3);
    }

    @Test
    void drawsOnlyAllowedTokensAndTheDistributionIsRenormalizedOverThem() {
        List<Integer> seen = new ArrayList<>();
        SamplingParams p = new SamplingParams(1f, 1f, 9).withConstraint(() -> new Alternating(seen, false, false));
        Sampler s = new Sampler(p);
        float[] d = s.distribution(new float[]{0f, 0f, 0f, 0f});
        assertThat(d).containsExactly(0f, 0.5f, 0.5f, 0f);
        for (int i = 0; i < 50 && !s.constraintComplete(); i++) {
            s.sample(new float[]{3f, 0f, 0f, 3f});
        }
        assertThat(seen).doesNotContain(0).endsWith(3);
        // a token another sampler drew advances the state too
        Sampler skipping = new Sampler(SamplingParams.greedy().withConstraint(() -> new Alternating(new ArrayList<>(), false, false)));
        skipping.skipDraw(1);
        assertThat(skipping.sample(new float[]{9f, 9f, 9f, 0f})).isEqualTo(3);
    }
}
