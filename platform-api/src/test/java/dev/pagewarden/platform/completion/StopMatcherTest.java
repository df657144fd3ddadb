package dev.pagewarden.platform.completion;

import org.junit.jupiter.api.Test;

import java.util.List;
import java.util.Random;

import static org.assertj.core.api.Assertions.assertThat;

class StopMatcherTest {

    /**
     * What the client must see, however the text was cut into pieces: the text before the stop
     * sequence that is complete first (smallest end; ties: earliest start), as generation sees it.
     */
    private static String expected(String text, List<String> stops) {
        for (int end = 1; end <= text.length(); end++) {
            int best = -1;
            for (String s : stops) {
                int at = end - s.length();
                if (at >= 0 && text.startsWith(s, at) && text.indexOf(s) == at && (best < 0 || at < best)) {
                    best = at;
                }
            }
            if (best >= 0) {
                return text.substring(0, best);
            }
        }
        return text;
    }

    @Test
    void anySplitOfTheTextGivesTheSameOutputAsTheNaiveCut() {
        Random random = new Random(7);
        String alphabet = "ab \n.";
        for (int trial = 0; trial < 2000; trial++) {
            StringBuilder text = new StringBuilder();
            for (int i = 0; i < 30; i++) {
                text.append(alphabet.charAt(random.nextInt(alphabet.length())));
            }
            int from = 5 + random.nextInt(20);
            // one stop taken from the text itself (so it often matches), one that may or may not occur
            List<String> stops = List.of(text.substring(from, from + 1 + random.nextInt(4)), "b.a");
            StopMatcher m = new StopMatcher(stops);
            StringBuilder out = new StringBuilder();
            int pos = 0;
            while (pos < text.length()) {
                int len = 1 + random.nextInt(4);
                String piece = text.substring(pos, Math.min(text.length(), pos + len));
                pos += piece.length();
                out.append(m.accept(piece));
            }
            out.append(m.finish());
            assertThat(out.toString()).as("text '%s' stops %s", text, stops).isEqualTo(expected(text.toString(), stops));
            assertThat(m.matched()).isEqualTo(expected(text.toString(), stops).length() < text.length());
        }
    }

    @Test
    void withoutStopsEverythingPassesAtOnce() {
        StopMatcher m = new StopMatcher(List.of());
        assertThat(m.accept("hello")).isEqualTo("hello");
        assertThat(m.finish()).isEmpty();
    }

    @Test
    void aPossibleStartIsHeldBackUntilItIsNot() {
        StopMatcher m = new StopMatcher(List.of("END"));
        assertThat(m.accept("the E")).isEqualTo("the ");
        assertThat(m.accept("N")).isEmpty();
        assertThat(m.accept("d")).isEqualTo("ENd");
        assertThat(m.accept(" END and more")).isEqualTo(" ");
        assertThat(m.matched()).isTrue();
        assertThat(m.accept("ignored")).isEmpty();
    }
}
