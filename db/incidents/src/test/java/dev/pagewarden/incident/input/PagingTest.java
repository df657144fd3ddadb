package dev.pagewarden.incident.input;

import org.junit.jupiter.api.Test;

import java.util.List;
import java.util.stream.IntStream;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

class PagingTest {
    @Test
    void absentParametersMeanTheFirstPageOfTheDefaultSize() {
        assertThat(Paging.of(null, null)).isEqualTo(new Paging(1, Paging.DEFAULT_SIZE));
        assertThat(new Paging(3, 10).offset()).isEqualTo(20);
    }

    @Test
    void pagesOutsideTheLimitsAreRefused() {
        assertThatThrownBy(() -> Paging.of(0, null)).hasMessageContaining("'page'");
        assertThatThrownBy(() -> Paging.of(1, Paging.MAX_SIZE + 1)).hasMessageContaining("'size'");
        assertThatThrownBy(() -> Paging.of(1, 0)).hasMessageContaining("'size'");
    }

    @Test
    void slicesAListAndSaysWhereItIs() {
        List<Integer> all = IntStream.rangeClosed(1, 23).boxed().toList();
        Paging.Page<Integer> last = new Paging(3, 10).slice(all);
        assertThat(last.rows()).containsExactly(21, 22, 23);
        assertThat(last.total()).isEqualTo(23);
        assertThat(last.pages()).isEqualTo(3);
        assertThat(last.hasNext()).isFalse();
        assertThat(last.hasPrevious()).isTrue();
        assertThat(last.firstShown()).isEqualTo(21);
        assertThat(last.lastShown()).isEqualTo(23);
        Paging.Page<Integer> first = new Paging(1, 10).slice(all);
        assertThat(first.rows()).hasSize(10).startsWith(1);
        assertThat(first.hasPrevious()).isFalse();
        assertThat(first.hasNext()).isTrue();
        Paging.Page<Integer> beyond = new Paging(9, 10).slice(all);
        assertThat(beyond.rows()).isEmpty();
        assertThat(beyond.firstShown()).isZero();
        assertThat(new Paging(1, 10).slice(List.of()).pages()).as("an empty list is one empty page").isEqualTo(1);
    }

    @Test
    void likePatternsTakeWildcardsLiterally() {
        assertThat(LikePattern.contains("50%_off\\")).isEqualTo("%50\\%\\_off\\\\%");
    }

    @Test
    void timesAreIsoOrTheBrowsersLocalFormAndBlankIsNoBound() {
        assertThat(Times.parseOptional("from", " ")).isNull();
        assertThat(Times.parseOptional("from", "2026-11-30T05:00")).isEqualTo(java.time.Instant.parse("2026-11-30T05:00:00Z"));
        assertThatThrownBy(() -> Times.parseOptional("to", "yesterday")).hasMessageContaining("'to' is not a time");
    }
}
