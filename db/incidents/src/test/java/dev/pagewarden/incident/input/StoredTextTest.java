package dev.pagewarden.incident.input;

import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/** Stored text: no NUL or other control characters (line breaks and tabs only where multi-line), valid UTF-16, a cap. */
class StoredTextTest {

    @Test
    void controlCharactersAreRefusedNamingTheFieldAndPosition() {
        assertThatThrownBy(() -> StoredText.requireLine("name", "ac\u0000me", 200))
                .isInstanceOfSatisfying(InvalidTextException.class, e -> assertThat(e.field()).isEqualTo("name"))
                .hasMessageContaining("U+0000").hasMessageContaining("position 2");
        for (String bad : new String[]{"a\u0007b", "a\u001bb", "a\u007fb", "a\u0085b", "a\nb", "a\tb"}) {
            assertThatThrownBy(() -> StoredText.line("name", bad, 200)).as(bad).isInstanceOf(InvalidTextException.class);
        }
        assertThatThrownBy(() -> StoredText.requireMultiline("note", "line\u0000", 4000))
                .hasMessageContaining("note must not contain control characters");
    }

    @Test
    void multiLineTextKeepsLineBreaksAndTabs() {
        assertThat(StoredText.requireMultiline("note", " first\r\n\tsecond \n", 4000)).isEqualTo("first\r\n\tsecond");
    }

    @Test
    void loneSurrogatesAreRefusedButPairsAreFine() {
        assertThatThrownBy(() -> StoredText.line("name", "a\uD800b", 200)).hasMessageContaining("lone surrogate");
        assertThatThrownBy(() -> StoredText.line("name", "ab\uDC00", 200)).hasMessageContaining("lone surrogate");
        assertThatThrownBy(() -> StoredText.line("name", "ab\uD83D", 200)).hasMessageContaining("lone surrogate");
        assertThat(StoredText.line("name", "caf\u00e9 \uD83D\uDE00", 200)).isEqualTo("caf\u00e9 \uD83D\uDE00");
    }

    @Test
    void lengthAndBlanknessAreChecked() {
        assertThatThrownBy(() -> StoredText.line("name", "x".repeat(201), 200)).hasMessageContaining("at most 200");
        assertThatThrownBy(() -> StoredText.requireLine("name", "  ", 200)).hasMessageContaining("required");
        assertThatThrownBy(() -> StoredText.requireLine("name", null, 200)).hasMessageContaining("required");
        assertThat(StoredText.line("name", null, 200)).isNull();
        assertThat(StoredText.requireLine("name", "  acme ", 200)).isEqualTo("acme");
    }
}
