package dev.pagewarden.core.engine;

import org.junit.jupiter.api.Test;

import java.util.HashSet;
import java.util.Set;

import static org.assertj.core.api.Assertions.assertThat;

class RequestIdSourceTest {

    /** A million ids: every one inside the block, none repeated, almost never one after the other. */
    @Test
    void keyedIdsAreUniqueAndLeaveTheBlockAlone() {
        long base = 3L << 32;
        RequestIdSource ids = new RequestIdSource(base, 0x1234_5678_9ABCL);
        Set<Long> seen = new HashSet<>();
        int consecutive = 0;
        long previous = -1;
        for (int i = 0; i < 1 << 20; i++) {
            long id = ids.next();
            assertThat(id >>> 32).isEqualTo(3L);
            assertThat(seen.add(id)).as("id %d repeated after %d requests", id, i).isTrue();
            if (id == previous + 1) {
                consecutive++;
            }
            previous = id;
        }
        // a random permutation makes a consecutive pair about once in 2^32 draws
        assertThat(consecutive).isLessThan(3);
    }

    @Test
    void theSameKeyGivesTheSameIdsAndAnotherKeyOthers() {
        RequestIdSource a = new RequestIdSource(0, 42), b = new RequestIdSource(0, 42), c = new RequestIdSource(0, 43);
        long[] first = {a.next(), a.next(), a.next()};
        assertThat(new long[]{b.next(), b.next(), b.next()}).isEqualTo(first);
        assertThat(new long[]{c.next(), c.next(), c.next()}).isNotEqualTo(first);
    }

    @Test
    void keyZeroCountsFromTheBase() {
        RequestIdSource ids = new RequestIdSource(9L << 32, 0);
        assertThat(ids.next()).isEqualTo((9L << 32) + 1);
        assertThat(ids.next()).isEqualTo((9L << 32) + 2);
    }
}
