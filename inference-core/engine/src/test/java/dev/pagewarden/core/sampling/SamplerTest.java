package dev.pagewarden.core.sampling;

import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

class SamplerTest {

    @Test
    void greedyTakesTheLowestIndexOfTheMaximum() {
        assertThat(Sampler.argmax(new float[]{0f, 3f, 1f, 3f})).isEqualTo(1);
        assertThat(new Sampler(SamplingParams.greedy()).sample(new float[]{-5f, -1f, -2f})).isEqualTo(1);
    }

    @Test
    void topPNeverPicksOutsideTheNucleus() {
        // probabilities after softmax ~ 0.64, 0.24, 0.09, 0.03: top_p 0.7 keeps the first two only
        float[] logits = {3f, 2f, 1f, 0f};
        Sampler s = new Sampler(new SamplingParams(1f, 0.7f, 123));
        int[] counts = new int[4];
        for (int i = 0; i < 2000; i++) {
            counts[s.sample(logits)]++;
        }
        assertThat(counts[2]).isZero();
        assertThat(counts[3]).isZero();
        assertThat(counts[0]).isGreaterThan(counts[1]).isPositive();
        assertThat(counts[1]).isPositive();
    }

    @Test
    void sameSeedSameSequence() {
        float[] logits = {0.1f, 0.2f, 0.3f, 0.4f, 0.5f};
        Sampler a = new Sampler(new SamplingParams(1f, 1f, 99));
        Sampler b = new Sampler(new SamplingParams(1f, 1f, 99));
        Sampler c = new Sampler(new SamplingParams(1f, 1f, 100));
        StringBuilder sa = new StringBuilder();
        StringBuilder sb = new StringBuilder();
        StringBuilder sc = new StringBuilder();
        for (int i = 0; i < 64; i++) {
            sa.append(a.sample(logits));
            sb.append(b.sample(logits));
            sc.append(c.sample(logits));
        }
        assertThat(sa.toString()).isEqualTo(sb.toString()).isNotEqualTo(sc.toString());
    }

    @Test
    void multinomialFollowsTheDistribution() {
        float[] logits = {(float) Math.log(0.5), (float) Math.log(0.25), (float) Math.log(0.25)};
        Sampler s = new Sampler(new SamplingParams(1f, 1f, 5));
        int[] counts = new int[3];
        int n = 20000;
        for (int i = 0; i < n; i++) {
            counts[s.sample(logits)]++;
        }
        assertThat(counts[0] / (double) n).isBetween(0.47, 0.53);
        assertThat(counts[1] / (double) n).isBetween(0.22, 0.28);
    }

    /** A sampler that skips the first draw continues exactly like one that drew the first token itself. */
    @Test
    void skippingTheFirstDrawContinuesTheSameSequence() {
        float[] first = {0.4f, 0.1f, 0.3f, 0.2f, 0.0f};
        float[] next = {0.1f, 0.2f, 0.3f, 0.4f, 0.5f};
        for (SamplingParams p : new SamplingParams[] {new SamplingParams(1f, 1f, 7), new SamplingParams(0.8f, 0.9f, 8),
                SamplingParams.greedy(), new SamplingParams(1f, 1f, 9).withPenalties(0.5f, 0.5f, 1.3f)}) {
            Sampler drewIt = new Sampler(p);
            Sampler skipped = new Sampler(p);
            skipped.skipDraw(drewIt.sample(first));
            for (int i = 0; i < 64; i++) {
                assertThat(skipped.sample(next)).as("%s draw %d", p, i).isEqualTo(drewIt.sample(next));
            }
        }
        // and without the skip the sequence differs: the draw is really consumed
        Sampler drewIt = new Sampler(new SamplingParams(1f, 1f, 7));
        Sampler fresh = new Sampler(new SamplingParams(1f, 1f, 7));
        drewIt.sample(first);
        StringBuilder a = new StringBuilder();
        StringBuilder b = new StringBuilder();
        for (int i = 0; i < 64; i++) {
            a.append(drewIt.sample(next));
            b.append(fresh.sample(next));
        }
        assertThat(a.toString()).isNotEqualTo(b.toString());
    }
}
