package dev.pagewarden.cuda;

import org.junit.jupiter.api.Test;

import java.util.ArrayList;
import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/** The captured-graph cache: least recently used out first, everything that leaves it freed exactly once. */
class GraphCacheTest {

    @Test
    void evictsTheLeastRecentlyUsedAndFreesIt() {
        List<String> freed = new ArrayList<>();
        GraphCache<Integer, String> c = new GraphCache<>(3, freed::add);
        c.put(1, "g1");
        c.put(2, "g2");
        c.put(3, "g3");
        assertThat(c.get(1)).isEqualTo("g1"); // 1 is now the most recent: 2 is the eldest
        c.put(4, "g4");
        assertThat(freed).containsExactly("g2");
        assertThat(c.get(2)).isNull();
        assertThat(c.size()).isEqualTo(3);
        c.put(5, "g5");
        assertThat(freed).containsExactly("g2", "g3");
        assertThat(c.get(1)).isEqualTo("g1");
        assertThat(c.get(4)).isEqualTo("g4");
        assertThat(c.get(5)).isEqualTo("g5");
    }

    @Test
    void clearFreesEveryGraphOnceAndEmptiesTheCache() {
        List<String> freed = new ArrayList<>();
        GraphCache<Integer, String> c = new GraphCache<>(2, freed::add);
        c.put(1, "g1");
        c.put(2, "g2");
        c.clear();
        assertThat(freed).containsExactlyInAnyOrder("g1", "g2");
        assertThat(c.size()).isZero();
        c.clear();
        assertThat(freed).hasSize(2);
        c.put(1, "again");
        assertThat(c.get(1)).isEqualTo("again");
    }

    @Test
    void aShapeIsCapturedOnceAndACacheHoldsAtLeastOne() {
        GraphCache<Integer, String> c = new GraphCache<>(1, g -> { });
        c.put(7, "g");
        assertThatThrownBy(() -> c.put(7, "h")).isInstanceOf(IllegalStateException.class).hasMessageContaining("7");
        assertThatThrownBy(() -> new GraphCache<Integer, String>(0, g -> { }))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("at least one");
    }
}
