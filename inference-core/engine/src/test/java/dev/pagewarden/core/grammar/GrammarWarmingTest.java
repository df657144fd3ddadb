package dev.pagewarden.core.grammar;

import dev.pagewarden.core.sampling.TokenConstraint;
import dev.pagewarden.core.testing.RealModelTest;
import dev.pagewarden.core.tokenizer.TextTokenizer;
import org.junit.jupiter.api.Test;

import java.util.ArrayList;
import java.util.BitSet;
import java.util.List;
import java.util.SplittableRandom;

import static org.assertj.core.api.Assertions.assertThat;

/** Masks computed ahead by the background warming are the ones a request would compute itself, and come first. */
class GrammarWarmingTest extends RealModelTest {
    private static final String SCHEMA = "{\"type\":\"object\",\"properties\":{\"name\":{\"type\":\"string\","
            + "\"maxLength\":6},\"tags\":{\"type\":\"array\",\"items\":{\"enum\":[\"a\",\"bc\"]},\"maxItems\":3},"
            + "\"n\":{\"type\":\"number\"}},\"required\":[\"name\",\"tags\"]}";

    @Test
    void warmingComputesTheStatesNearestTheStartAheadAndTheirMasksAreThoseComputedOnDemand() throws Exception {
        TextTokenizer tok = model.tokenizer();
        JsonGrammar grammar = JsonGrammar.compile(SCHEMA);
        TokenConstraint warm = new GrammarConstraints(tok, 40).constraint(grammar);
        GrammarConstraints.awaitWarm(warm);
        assertThat(GrammarConstraints.computedStates(warm)).as("the budget").isEqualTo(40);
        TokenConstraint cold = new GrammarConstraints(tok, 0).constraint(grammar);
        GrammarConstraints.awaitWarm(cold);
        assertThat(GrammarConstraints.computedStates(cold)).isZero();

        // the start and every state one token after it were warmed: reading them computes nothing new
        TokenConstraint.State start = warm.start();
        BitSet first = start.allowed();
        for (int t = first.nextSetBit(0); t >= 0; t = first.nextSetBit(t + 1)) {
            start.advance(t).allowed();
        }
        assertThat(GrammarConstraints.computedStates(warm)).isEqualTo(40);

        SplittableRandom rnd = new SplittableRandom(11);
        for (int w = 0; w < 20; w++) {
            TokenConstraint.State a = warm.start();
            TokenConstraint.State b = cold.start();
            for (int step = 0; step < 60 && !a.complete(); step++) {
                assertThat(a.allowed()).isEqualTo(b.allowed());
                assertThat(a.complete()).isEqualTo(b.complete());
                List<Integer> ok = new ArrayList<>();
                a.allowed().stream().forEach(ok::add);
                int pick = ok.get(rnd.nextInt(ok.size()));
                a = a.advance(pick);
                b = b.advance(pick);
            }
            assertThat(a.complete()).isEqualTo(b.complete());
        }
    }
}
