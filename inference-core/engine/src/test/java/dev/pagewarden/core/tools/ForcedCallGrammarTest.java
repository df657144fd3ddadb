package dev.pagewarden.core.tools;

import dev.pagewarden.core.grammar.GrammarConstraints;
import dev.pagewarden.core.grammar.JsonGrammar;
import dev.pagewarden.core.sampling.TokenConstraint;
import dev.pagewarden.core.testing.RealModelTest;
import dev.pagewarden.core.tokenizer.TextTokenizer;

import java.nio.charset.StandardCharsets;
import java.util.BitSet;
import java.util.List;
import java.util.Set;
import java.util.SplittableRandom;

import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * A forced call's grammar over a real vocabulary: random walks through its masks always end in text that the
 * family's parser reads as exactly one call to one of the tools, with arguments of the tool's schema.
 */
class ForcedCallGrammarTest extends RealModelTest {
    private static final String WEATHER = "{\"type\":\"object\",\"properties\":{\"city\":{\"type\":\"string\","
            + "\"maxLength\":5},\"unit\":{\"enum\":[\"c\",\"f\"]}},\"required\":[\"city\"],\"additionalProperties\":false}";
    private static final String ADD = "{\"type\":\"object\",\"properties\":{\"a\":{\"type\":\"integer\"}},"
            + "\"required\":[\"a\"],\"additionalProperties\":false}";

    @Test
    void everyFamilysForcedCallParsesAsOneCallWithArgumentsOfItsSchema() {
        TextTokenizer tok = model.tokenizer();
        GrammarConstraints constraints = new GrammarConstraints(tok);
        List<ToolSpec> tools = List.of(new ToolSpec("get_weather", JsonGrammar.compile(WEATHER)),
                new ToolSpec("add", JsonGrammar.compile(ADD)));
        SplittableRandom rnd = new SplittableRandom(11);
        for (ToolFormat format : ToolFormat.values()) {
            TokenConstraint c = constraints.constraint(format.forcedCall(tools));
            ToolCallParser parser = new ToolCallParser(format, Set.of("get_weather", "add"));
            int completed = 0;
            for (int walk = 0; walk < 12; walk++) {
                TokenConstraint.State s = c.start();
                StringBuilder text = new StringBuilder();
                for (int step = 0; step < 300 && !s.complete(); step++) {
                    BitSet allowed = s.allowed();
                    assertThat(allowed.isEmpty()).as("%s after %s", format, text).isFalse();
                    int[] ids = allowed.stream().toArray();
                    int pick = ids[rnd.nextInt(ids.length)];
                    text.append(new String(tok.bytes(pick), StandardCharsets.UTF_8));
                    s = s.advance(pick);
                }
                if (!s.complete()) {
                    continue;
                }
                completed++;
                ToolCallParser.Parsed p = parser.parse(text.toString());
                assertThat(p.calls()).as("%s: %s", format, text).hasSize(1);
                assertThat(p.content()).as(text.toString()).isNull();
                String args = p.calls().getFirst().arguments();
                if (p.calls().getFirst().name().equals("add")) {
                    assertThat(args).matches("\\{\"a\":-?\\d+}");
                } else {
                    assertThat(args).startsWith("{\"city\":\"");
                }
            }
            assertThat(completed).as(format.name()).isGreaterThan(6);
        }
    }
}
