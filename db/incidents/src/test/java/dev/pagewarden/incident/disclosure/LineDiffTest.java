package dev.pagewarden.incident.disclosure;

import org.junit.jupiter.api.Test;

import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;

class LineDiffTest {
    private static List<String> unified(String before, String after) {
        return LineDiff.of(before, after).stream().map(l -> l.kind().sign() + l.text()).toList();
    }

    @Test
    void marksRemovedAndAddedLinesAndKeepsTheRest() {
        assertThat(unified("a\nb\nc\nd", "a\nB\nc\nd\ne")).containsExactly(" a", "-b", "+B", " c", " d", "+e");
    }

    @Test
    void sameTextIsUnchanged() {
        List<LineDiff.Line> diff = LineDiff.of("x\ny", "x\ny");
        assertThat(LineDiff.unchanged(diff)).isTrue();
        assertThat(diff).extracting(LineDiff.Line::text).containsExactly("x", "y");
        assertThat(LineDiff.unchanged(LineDiff.of("x", "y"))).isFalse();
    }

    @Test
    void emptyAndWindowsLineEndings() {
        assertThat(unified("", "one\ntwo")).containsExactly("+one", "+two");
        assertThat(unified("one\r\ntwo", "")).containsExactly("-one", "-two");
        assertThat(unified("one\r\ntwo", "one\ntwo")).containsExactly(" one", " two");
    }

    @Test
    void aLineMovedIsOneRemovalAndOneAddition() {
        assertThat(unified("a\nb\nc", "b\nc\na")).containsExactly("-a", " b", " c", "+a");
    }

    @Test
    void hugeRewritesStayBounded() {
        String before = "x\n".repeat(3000) + "end", after = "y\n".repeat(3000) + "end";
        List<LineDiff.Line> diff = LineDiff.of(before, after);
        assertThat(diff).hasSize(6001);
        assertThat(diff.getLast()).isEqualTo(new LineDiff.Line(LineDiff.Kind.SAME, "end"));
        assertThat(diff).filteredOn(l -> l.kind() == LineDiff.Kind.REMOVED).hasSize(3000);
    }
}
