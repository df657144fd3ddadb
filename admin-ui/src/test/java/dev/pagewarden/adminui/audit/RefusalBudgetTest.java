package dev.pagewarden.adminui.audit;

import org.junit.jupiter.api.Test;

import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.time.ZoneId;

import static org.assertj.core.api.Assertions.assertThat;

/** Unauthenticated refusals: a row each up to the budget per minute; the rest counted into the next row. */
class RefusalBudgetTest {

    /** A clock the test moves by hand. */
    static final class ManualClock extends Clock {
        Instant now = Instant.parse("2026-01-01T00:00:00Z");

        @Override
        public ZoneId getZone() {
            return ZoneId.of("UTC");
        }

        @Override
        public Clock withZone(ZoneId zone) {
            return this;
        }

        @Override
        public Instant instant() {
            return now;
        }
    }

    @Test
    void floodIsCappedPerMinuteAndTheLeftOutAreCounted() {
        ManualClock clock = new ManualClock();
        RefusalBudget budget = new RefusalBudget(3, clock);
        assertThat(budget.admit()).isZero();
        assertThat(budget.admit()).isZero();
        assertThat(budget.admit()).isZero();
        for (int i = 0; i < 500; i++) {
            assertThat(budget.admit()).isEqualTo(-1);
        }
        clock.now = clock.now.plus(Duration.ofMinutes(1));
        assertThat(budget.admit()).as("the first row of the next minute says how many were left out").isEqualTo(500);
        assertThat(budget.admit()).isZero();
    }
}
