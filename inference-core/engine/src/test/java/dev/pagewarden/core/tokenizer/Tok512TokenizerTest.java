package dev.pagewarden.core.tokenizer;

import dev.pagewarden.core.testing.TestModels;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;

/** The tokenizer on the real 512-token vocabulary of stories260K. */
class Tok512TokenizerTest {
    private static Vocabulary vocab;
    private static Tokenizer tok;

    @BeforeAll
    static void load() {
        vocab = TokenizerBin.read(TestModels.tok512());
        tok = new Tokenizer(vocab);
    }

    @Test
    void encodesKnownPrompts() {
        // ids cross-checked with an independent transcription of run.c's encode
        assertThat(tok.encode("Once upon a time", true, false)).containsExactly(1, 403, 407, 261, 378);
        assertThat(tok.encode("Hello, world!\nThe end.", true, true))
                .containsExactly(1, 346, 306, 414, 432, 263, 304, 341, 443, 13, 434, 260, 344, 264, 426, 2);
        // é is a piece here; 日本 and the emoji fall back to bytes (byte + 3)
        assertThat(tok.encode("héllo 日本 \uD83D\uDE00", true, false)).containsExactly(
                1, 270, 485, 306, 414, 410, 233, 154, 168, 233, 159, 175, 410, 243, 162, 155, 131);
        assertThat(tok.encode("", true, false)).containsExactly(1);
    }

    @Test
    void piecesOfTheStandardLayout() {
        assertThat(tok.vocabSize()).isEqualTo(512);
        assertThat(tok.bos()).isEqualTo(1);
        assertThat(tok.eos()).isEqualTo(2);
        assertThat(tok.piece(403)).isEqualTo(" Once");
        assertThat(tok.piece(13)).isEqualTo("<0x0A>");
        assertThat(tok.decode(1, 403)).isEqualTo("Once");
        assertThat(tok.decode(403, 407)).isEqualTo(" upon");
        assertThat(tok.decode(426, 13)).isEqualTo("\n");
    }

    @Test
    void roundTrips() {
        List<String> texts = List.of("Once upon a time", "Lily and Ben went to the park.", "a", " leading space",
                "trailing space ", "two  spaces", "Hello, world!\nThe end.", "line1\n\nline3\r\n", "\ttab",
                "digits 0123456789 and 3.14", "punctuation: ;:'\"!?()[]{}<>/\\|@#$%^&*-_=+`~",
                "héllo", "naïve café", "日本", "emoji \uD83D\uDE00\uD83C\uDF89", "mixed é日\uD83D\uDE00x",
                "<0x41> looks like a byte piece but is text", "\u00A0nbsp", "ALL CAPS", "x");
        for (String s : texts) {
            int[] ids = tok.encode(s, true, true);
            assertThat(tok.decode(ids)).as(s).isEqualTo(s);
            assertThat(ids[0]).isEqualTo(1);
            assertThat(ids[ids.length - 1]).isEqualTo(2);
            assertThat(tok.encode(s, true, false)).containsExactly(NaiveEncoder.encode(vocab, s, true, false));
            assertThat(tok.decode(tok.encode(s, false, false))).as(s).isEqualTo(" " + s);
        }
    }

    @Test
    void streamingGivesTheSameTextAsWholeDecoding() {
        String s = "Lily saw 日本 and \uD83D\uDE00 and café.";
        int[] ids = tok.encode(s, true, false);
        Tokenizer.StreamDecoder d = tok.streamDecoder();
        StringBuilder sb = new StringBuilder();
        for (int id : ids) {
            String piece = d.accept(id);
            assertThat(piece).doesNotContain("\uFFFD");
            sb.append(piece);
        }
        assertThat(sb.append(d.finish()).toString()).isEqualTo(s);
    }

    @Test
    void longTextEncodesQuickly() {
        String story = "Once upon a time, there was a little girl named Lily. She loved to play outside. ".repeat(200);
        long start = System.nanoTime();
        int[] ids = tok.encode(story, true, false);
        long ms = (System.nanoTime() - start) / 1_000_000;
        assertThat(tok.decode(ids)).isEqualTo(story);
        assertThat(ms).as("encode of %d chars took %d ms", story.length(), ms).isLessThan(2_000);
    }
}
