package dev.pagewarden.incident.audit;

import dev.pagewarden.core.testing.ManualClock;
import org.junit.jupiter.api.Test;

import java.time.Duration;
import java.time.Instant;

import static org.assertj.core.api.Assertions.assertThat;

/** Unauthenticated refusals: a row each up to the budget per minute; the rest counted into the next row. */
class RefusalBudgetTest {


    @Test
    void floodIsCappedPerMinuteAndTheLeftOutAreCounted() {
        ManualClock clock = new ManualClock(Instant.parse("2026-01-01T00:00:00Z"));
        RefusalBudget budget = new RefusalBudget(3, clock);
        assertThat(budget.admit()).isZero();
        assertThat(budget.admit()).isZero();
        assertThat(budget.admit()).isZero();
        for (int i = 0; i < 500; i++) {
            assertThat(budget.admit()).isEqualTo(-1);
        }
        clock.advance(Duration.ofMinutes(1));
        assertThat(budget.admit()).as("the first row of the next minute says how many were left out").isEqualTo(500);
        assertThat(budget.admit()).isZero();
    }
}
