package dev.pagewarden.platform.database;

import org.junit.jupiter.api.Test;

import java.util.concurrent.atomic.AtomicLong;

import static org.assertj.core.api.Assertions.assertThat;

class DatabaseAvailabilityTest {
    private final AtomicLong now = new AtomicLong(1_000);
    private final DatabaseAvailability db = new DatabaseAvailability(now::get);

    @Test
    void upLetsEveryCallerThrough() {
        assertThat(db.tryAcquire()).isTrue();
        assertThat(db.tryAcquire()).isTrue();
        assertThat(db.knownDown()).isFalse();
    }

    @Test
    void aFailureSkipsCallersForTheCooldownThenLetsOneProbeAtATime() {
        db.failed(new RuntimeException("connection refused"));
        assertThat(db.knownDown()).isTrue();
        assertThat(db.lastError()).isEqualTo("connection refused");
        assertThat(db.tryAcquire()).as("inside the cool-down").isFalse();

        now.addAndGet(DatabaseAvailability.COOLDOWN.toNanos());
        assertThat(db.tryAcquire()).as("the probe").isTrue();
        assertThat(db.tryAcquire()).as("a second caller while the probe runs").isFalse();

        db.failed(new RuntimeException("still down"));
        assertThat(db.tryAcquire()).as("a failed probe starts a new cool-down").isFalse();
        now.addAndGet(DatabaseAvailability.COOLDOWN.toNanos());
        assertThat(db.tryAcquire()).isTrue();
        db.succeeded();
        assertThat(db.knownDown()).isFalse();
        assertThat(db.tryAcquire()).isTrue();
        assertThat(db.tryAcquire()).isTrue();
    }

    @Test
    void aFailureNobodyProbedSinceStopsCountingForReportsAfterTheWindow() {
        db.failed(new RuntimeException("down"));
        assertThat(db.failedWithin(java.time.Duration.ofSeconds(30))).isTrue();
        now.addAndGet(java.time.Duration.ofSeconds(31).toNanos());
        assertThat(db.failedWithin(java.time.Duration.ofSeconds(30))).isFalse();
        assertThat(db.knownDown()).as("callers still probe before trusting it again").isTrue();
    }

    @Test
    void refusingOnlyDuringTheCooldown() {
        assertThat(db.refusing()).isFalse();
        db.failed(new RuntimeException("down"));
        assertThat(db.refusing()).isTrue();
        now.addAndGet(DatabaseAvailability.COOLDOWN.toNanos());
        assertThat(db.refusing()).as("time for a probe").isFalse();
        assertThat(db.knownDown()).isTrue();
    }

    @Test
    void anAbandonedProbeFreesTheSlot() {
        db.failed(new RuntimeException("down"));
        now.addAndGet(DatabaseAvailability.COOLDOWN.toNanos());
        assertThat(db.tryAcquire()).isTrue();
        db.abandon();
        assertThat(db.tryAcquire()).isTrue();
        assertThat(db.knownDown()).isTrue();
    }
}
