package dev.pagewarden.core.tokenizer;

import org.junit.jupiter.api.Test;

import java.util.List;
import java.util.Random;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/** The algorithm on hand-made vocabularies; expected ids are worked out in the comments. */
class TokenizerTest {
    // ids of the extras below, in the standard layout (extras start at 259)
    private static final int SPACE = 259, A = 260, B = 261, C = 262, AB = 263, BC = 264, SPACE_A = 265;

    private static SyntheticVocab base(float abScore, float bcScore) {
        return new SyntheticVocab()
                .piece(" ", -10).piece("a", -10).piece("b", -10).piece("c", -10)
                .piece("ab", abScore).piece("bc", bcScore).piece(" a", -20);
    }

    private static int byteId(int b) {
        return b + 3;
    }

    @Test
    void higherScoringMergeWins() {
        // " abc" starts as [" ", a, b, c]; of the mergeable pairs "ab" and "bc", bc scores higher.
        // After that, " a" + "bc" is not a piece, so " a" (scored lowest) merges last: [" a", bc].
        assertThat(base(-5, -1).tokenizer().encode("abc", false, false)).containsExactly(SPACE_A, BC);
        // With ab preferred, "ab" is taken first, which leaves " " alone: [" ", ab, c].
        assertThat(base(-1, -5).tokenizer().encode("abc", false, false)).containsExactly(SPACE, AB, C);
    }

    @Test
    void mergesRepeatUntilNoPairIsAPiece() {
        // " abc": bc (-1) first, then a+bc = "abc" (-3) beats " a" (-20), then " "+"abc" = " abc" (-4).
        Tokenizer t = base(-5, -1).piece("abc", -3).piece(" abc", -4).tokenizer();
        assertThat(t.encode("abc", false, false)).containsExactly(SyntheticVocab.FIRST_EXTRA + 8);
    }

    @Test
    void tiesGoToTheLeftmostPair() {
        // equal scores: the leftmost pair "ab" merges, then "bc" is no longer available
        assertThat(base(-3, -3).tokenizer().encode("abc", false, false)).containsExactly(SPACE, AB, C);
        // " aaa" -> [" ", a, a, a]; "aa" can merge at two places; the left one wins, then " a" is gone
        Tokenizer t = new SyntheticVocab().piece(" ", -10).piece("a", -10).piece("aa", -1).tokenizer();
        assertThat(t.encode("aaa", false, false)).containsExactly(SPACE, SPACE + 2, SPACE + 1);
        // C's '>' sees -0.0 and 0.0 as equal, so this is a tie as well, still won by "ab"
        assertThat(base(-0f, 0f).tokenizer().encode("abc", false, false)).containsExactly(SPACE, AB, C);
    }

    @Test
    void piecesScoredAtOrBelowMinusTenBillionNeverMerge() {
        // llama2.c's best-score search starts at -1e10 and only accepts strictly higher scores
        assertThat(base(-1e10f, -2e10f).tokenizer().encode("abc", false, false)).containsExactly(SPACE_A, B, C);
    }

    @Test
    void dummyPrefixAndSpecialTokens() {
        Tokenizer t = base(-5, -1).tokenizer();
        assertThat(t.encode("a", false, false)).containsExactly(SPACE_A);
        assertThat(t.encode("a", true, false)).containsExactly(1, SPACE_A);
        assertThat(t.encode("a", true, true)).containsExactly(1, SPACE_A, 2);
        assertThat(t.encode("a", false, true)).containsExactly(SPACE_A, 2);
        // no dummy prefix for the empty text: BOS only, as llama2.c
        assertThat(t.encode("", true, false)).containsExactly(1);
        assertThat(t.encode("", true, true)).containsExactly(1, 2);
        assertThat(t.encode("", false, false)).isEmpty();
        // text that starts with a space gets a second one: [" ", " a"]
        assertThat(t.encode(" a", false, false)).containsExactly(SPACE, SPACE_A);
    }

    @Test
    void missingCodePointsFallBackToTheirUtf8Bytes() {
        Tokenizer t = base(-5, -1).tokenizer();
        // é = C3 A9
        assertThat(t.encode("é", false, false)).containsExactly(SPACE, byteId(0xC3), byteId(0xA9));
        // U+1F600 = F0 9F 98 80, a surrogate pair in Java
        assertThat(t.encode("\uD83D\uDE00", false, false))
                .containsExactly(SPACE, byteId(0xF0), byteId(0x9F), byteId(0x98), byteId(0x80));
        // a newline is not a piece here either
        assertThat(t.encode("a\nb", false, false)).containsExactly(SPACE_A, byteId('\n'), B);
    }

    @Test
    void bytePiecesAreLookedUpNotAssumedAtOffsetThree() {
        Tokenizer t = base(-5, -1).bytesLast().tokenizer();
        int firstByte = 3 + 7; // after the specials and the seven extras
        assertThat(t.piece(firstByte)).isEqualTo("<0x00>");
        assertThat(t.encode("é", false, false)).containsExactly(3, firstByte + 0xC3, firstByte + 0xA9);
        assertThat(t.decode(t.encode("é", true, false))).isEqualTo("é");
    }

    @Test
    void missingBytePieceIsAClearError() {
        Tokenizer t = base(-5, -1).noBytes().tokenizer();
        assertThat(t.encode("abc", false, false)).hasSize(2); // ASCII is fine without bytes
        assertThatThrownBy(() -> t.encode("é", false, false))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("U+00E9").hasMessageContaining("<0xC3>");
    }

    @Test
    void badInputIsRejected() {
        Tokenizer t = base(-5, -1).tokenizer();
        assertThatThrownBy(() -> t.encode("a\uD800b", false, false))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("unpaired surrogate");
        assertThatThrownBy(() -> t.encode(null, true, false)).isInstanceOf(NullPointerException.class);
        int size = t.vocabSize();
        assertThatThrownBy(() -> t.decode(1, size))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("token id " + size).hasMessageContaining(size + " tokens");
        assertThatThrownBy(() -> t.decode(new int[]{A, -1})).hasMessageContaining("token id -1");
        assertThatThrownBy(() -> new Tokenizer(new Vocabulary(List.of("a"), new float[]{0}, 1, 0)))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("BOS id 1");
    }

    @Test
    void decodeFollowsLlama2cRules() {
        Tokenizer t = base(-5, -1).tokenizer();
        assertThat(t.decode(1, SPACE_A)).isEqualTo("a");     // leading space dropped after BOS
        assertThat(t.decode(A, SPACE_A)).isEqualTo(" a");    // kept elsewhere
        assertThat(t.decode(1, AB)).isEqualTo("ab");
        assertThat(t.decode(A, byteId('\n'))).isEqualTo("\n"); // <0x0A> is the byte itself
        assertThat(t.decodeBytes(A, byteId(0xC3))).containsExactly((byte) 0xC3);
        assertThat(t.decode(A, byteId(0xC3))).isEqualTo("\uFFFD"); // half a character is no text
        assertThat(t.decode(A, 1)).isEqualTo("<s>");           // the primitive prints specials verbatim
    }

    @Test
    void sequenceDecodeJoinsSplitCharactersAndSkipsSpecials() {
        Tokenizer t = base(-5, -1).tokenizer();
        assertThat(t.decode(new int[]{1, SPACE, byteId(0xC3), byteId(0xA9), A, 2})).isEqualTo("éa");
        assertThat(t.decode(new int[]{SPACE, byteId(0xC3), byteId(0xA9)})).isEqualTo(" é");
        // a character cut off at the end, or a stray continuation byte, becomes U+FFFD
        assertThat(t.decode(new int[]{A, byteId(0xE6), byteId(0x97)})).isEqualTo("a\uFFFD");
        assertThat(t.decode(new int[]{byteId(0xA9), A})).isEqualTo("\uFFFDa");
    }

    @Test
    void streamDecoderEmitsTextAsSoonAsACharacterIsComplete() {
        Tokenizer t = base(-5, -1).tokenizer();
        Tokenizer.StreamDecoder d = t.streamDecoder();
        assertThat(d.accept(1)).isEmpty();
        assertThat(d.accept(SPACE_A)).isEqualTo("a");
        // 日 = E6 97 A5
        assertThat(d.accept(byteId(0xE6))).isEmpty();
        assertThat(d.accept(byteId(0x97))).isEmpty();
        assertThat(d.accept(byteId(0xA5))).isEqualTo("日");
        // U+1F600 needs two Java chars
        for (int b : new int[]{0xF0, 0x9F, 0x98}) {
            assertThat(d.accept(byteId(b))).isEmpty();
        }
        assertThat(d.accept(byteId(0x80))).isEqualTo("\uD83D\uDE00");
        // an unfinished character followed by ASCII: the bad byte is replaced, the ASCII kept
        assertThat(d.accept(byteId(0xE6))).isEmpty();
        assertThat(d.accept(B)).isEqualTo("\uFFFDb");
        assertThat(d.accept(byteId(0xC3))).isEmpty();
        assertThat(d.finish()).isEqualTo("\uFFFD");
        assertThat(d.finish()).isEmpty();
    }

    @Test
    void roundTripsThroughBytesAndPieces() {
        Tokenizer t = base(-5, -1).piece("abc", -3).piece("é", -7).tokenizer();
        for (String s : List.of("abc", "a b c", "cab  bca", "é", "héllo", "日本", "\uD83D\uDE00!", "x\ny\r\n\tz", "0123",
                "\uD836\uDC00" /* U+1D800: its low 16 bits look like a surrogate */)) {
            assertThat(t.decode(t.encode(s, true, true))).as(s).isEqualTo(s);
            assertThat(t.decode(t.encode(s, false, false))).as(s).isEqualTo(" " + s); // no BOS: prefix kept
        }
    }

    @Test
    void agreesWithAPlainTranscriptionOfLlama2cOnRandomText() {
        Random rnd = new Random(42);
        String alphabet = "ab c";
        for (int trial = 0; trial < 200; trial++) {
            // random pieces over a tiny alphabet, so merges collide, tie and chain a lot
            SyntheticVocab sv = new SyntheticVocab().piece(" ", -50).piece("a", -50).piece("b", -50).piece("c", -50);
            for (int p = 0; p < 25; p++) {
                sv.piece(randomString(rnd, alphabet, 2 + rnd.nextInt(3)), -rnd.nextInt(6)); // few distinct scores: ties
            }
            Vocabulary v = sv.build();
            Tokenizer t = new Tokenizer(v);
            String text = randomString(rnd, alphabet + "é", rnd.nextInt(30));
            boolean bos = rnd.nextBoolean();
            assertThat(t.encode(text, bos, false)).as("%s in %s", text, v.tokens().subList(259, v.size()))
                    .containsExactly(NaiveEncoder.encode(v, text, bos, false));
        }
    }

    private static String randomString(Random rnd, String alphabet, int length) {
        StringBuilder sb = new StringBuilder();
        for (int i = 0; i < length; i++) {
            sb.append(alphabet.charAt(rnd.nextInt(alphabet.length())));
        }
        return sb.toString();
    }
}
