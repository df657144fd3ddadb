package dev.pagewarden.core.grammar;

import dev.pagewarden.core.sampling.TokenConstraint;
import dev.pagewarden.core.testing.RealModelTest;
import dev.pagewarden.core.testing.TinyBpeTokenizer;
import dev.pagewarden.core.tokenizer.HfTokenizer;
import dev.pagewarden.core.tokenizer.TextTokenizer;
import dev.pagewarden.core.tokenizer.TokenType;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.BitSet;
import java.util.List;
import java.util.SplittableRandom;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * Token masks over real vocabularies (stories260K's SentencePiece tok512, a byte-level BPE) against an independent
 * oracle: a regular expression for the schema's whole language, asked whether the text so far plus the token can
 * still be completed ({@link Matcher#hitEnd}).
 */
class GrammarConstraintsTest extends RealModelTest {
    private static final String SCHEMA = "{\"type\":\"object\",\"properties\":{\"name\":{\"type\":\"string\","
            + "\"maxLength\":4},\"n\":{\"type\":\"integer\"},\"ok\":{\"enum\":[\"yes\",\"no\"]}},\"required\":[\"name\",\"n\"]}";
    /** The same language (ASCII strings suffice: the tokens are walked with their text). */
    private static final Pattern LANGUAGE = Pattern.compile(
            "\\{\"name\":\"([^\"\\\\\\x00-\\x1f]|\\\\[\"\\\\/bfnrt]){0,4}\",\"n\":-?(0|[1-9][0-9]{0,14})(,\"ok\":(\"yes\"|\"no\"))?}",
            Pattern.DOTALL);

    private static boolean couldComplete(String text) {
        Matcher m = LANGUAGE.matcher(text);
        return m.matches() || m.hitEnd();
    }

    @Test
    void masksOverTheSentencePieceVocabularyMatchTheOracleAlongRandomWalks() {
        walk(model.tokenizer(), 40);
    }

    @Test
    void masksOverAByteLevelVocabularyMatchTheOracleAlongRandomWalks(@TempDir Path dir) throws Exception {
        TinyBpeTokenizer.write(dir);
        walk(HfTokenizer.load(dir).build(), 40);
    }

    private static void walk(TextTokenizer tok, int walks) {
        GrammarConstraints constraints = new GrammarConstraints(tok);
        TokenConstraint c = constraints.constraint(JsonGrammar.compile(SCHEMA));
        assertThat(constraints.constraint(JsonGrammar.compile(SCHEMA))).as("cached by the schema's text").isSameAs(c);
        SplittableRandom rnd = new SplittableRandom(7);
        int completed = 0;
        for (int w = 0; w < walks; w++) {
            TokenConstraint.State s = c.start();
            StringBuilder text = new StringBuilder();
            for (int step = 0; step < 200 && !s.complete(); step++) {
                BitSet allowed = s.allowed();
                List<Integer> ok = new ArrayList<>();
                for (int id = 0; id < tok.vocabSize(); id++) {
                    TokenType t = tok.type(id);
                    String piece = new String(tok.bytes(id), StandardCharsets.UTF_8);
                    boolean text0 = t != TokenType.CONTROL && t != TokenType.UNKNOWN && t != TokenType.UNUSED
                            && tok.bytes(id).length > 0 && !piece.contains("\uFFFD");
                    if (text0) {
                        assertThat(allowed.get(id)).as("%s + token %d %s", text, id, piece)
                                .isEqualTo(couldComplete(text + piece));
                    } else if (t == TokenType.CONTROL || tok.bytes(id).length == 0) {
                        assertThat(allowed.get(id)).as("token %d", id).isFalse();
                    }
                    if (allowed.get(id) && text0) {
                        ok.add(id);
                    }
                }
                assertThat(ok).as("after %s", text).isNotEmpty();
                int pick = ok.get(rnd.nextInt(ok.size()));
                text.append(new String(tok.bytes(pick), StandardCharsets.UTF_8));
                s = s.advance(pick);
            }
            if (s.complete()) {
                completed++;
                assertThat(LANGUAGE.matcher(text).matches()).as(text.toString()).isTrue();
                assertThat(s.allowed().isEmpty()).as("nothing after the end").isTrue();
            }
        }
        assertThat(completed).isGreaterThan(walks / 2);
        int control = -1;
        for (int id = 0; id < tok.vocabSize() && control < 0; id++) {
            if (tok.type(id) == TokenType.CONTROL) {
                control = id;
            }
        }
        // masks are computed once per state: two requests in the same state share one
        int open = c.start().allowed().nextSetBit(0);
        assertThat(c.start().advance(open).allowed()).isSameAs(c.start().advance(open).allowed());
        int refused = control;
        assertThatThrownBy(() -> c.start().advance(refused)).isInstanceOf(IllegalArgumentException.class);
    }
}
