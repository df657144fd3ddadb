package dev.pagewarden.platform.security;

import dev.pagewarden.core.testing.ManualClock;
import dev.pagewarden.incident.AdminProperties;
import org.junit.jupiter.api.Test;

import java.time.Duration;
import java.time.Instant;
import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;

/** The lockout arithmetic on a clock the test moves. */
class AuthThrottleTest {

    private final ManualClock clock = new ManualClock(Instant.parse("2026-12-01T12:00:00Z"));
    private final AuthThrottle throttle = new AuthThrottle(new AdminProperties(null, Duration.ofMinutes(30),
            Duration.ofMinutes(10), Duration.ofMinutes(5), 4, Duration.ofSeconds(1), Duration.ofSeconds(60),
            new AdminProperties.Throttle(3, 5, Duration.ofMinutes(15), Duration.ofMinutes(1), Duration.ofMinutes(5))), clock);

    private static List<AuthThrottle.Key> keys(String account, String address) {
        return List.of(new AuthThrottle.Key("login", AuthThrottle.Scope.ACCOUNT, account),
                new AuthThrottle.Key("login", AuthThrottle.Scope.ADDRESS, address));
    }

    @Test
    void pastTheLimitEveryAttemptIsRefusedUntilTheLockoutEndsAndEachLockoutDoubles() {
        for (int i = 0; i < 3; i++) {
            assertThat(throttle.attempt(keys("alice", "a1")).allowed()).isTrue();
        }
        AuthThrottle.Decision fourth = throttle.attempt(keys("alice", "a2"));
        assertThat(fourth.retryAfter()).isEqualTo(Duration.ofMinutes(1));
        assertThat(fourth.lockedNow()).extracting(AuthThrottle.Key::value).containsExactly("alice");
        clock.advance(Duration.ofSeconds(59));
        AuthThrottle.Decision during = throttle.attempt(keys("alice", "a3"));
        assertThat(during.retryAfter()).isEqualTo(Duration.ofSeconds(1));
        assertThat(during.lockedNow()).isEmpty();
        clock.advance(Duration.ofSeconds(1));
        for (int i = 0; i < 3; i++) {
            assertThat(throttle.attempt(keys("alice", "a4")).allowed()).isTrue();
        }
        assertThat(throttle.attempt(keys("alice", "a5")).retryAfter()).isEqualTo(Duration.ofMinutes(2));
        clock.advance(Duration.ofMinutes(2));
        for (int i = 0; i < 3; i++) {
            throttle.attempt(keys("alice", "a6"));
        }
        assertThat(throttle.attempt(keys("alice", "a7")).retryAfter()).isEqualTo(Duration.ofMinutes(4));
        clock.advance(Duration.ofMinutes(4));
        for (int i = 0; i < 3; i++) {
            throttle.attempt(keys("alice", "a8"));
        }
        assertThat(throttle.attempt(keys("alice", "a9")).retryAfter()).as("capped").isEqualTo(Duration.ofMinutes(5));
        // quiet for the maximum lockout after it ended: forgiven, back to the first lockout
        clock.advance(Duration.ofMinutes(10));
        for (int i = 0; i < 3; i++) {
            throttle.attempt(keys("alice", "b1"));
        }
        assertThat(throttle.attempt(keys("alice", "b2")).retryAfter()).isEqualTo(Duration.ofMinutes(1));
    }

    @Test
    void anAddressIsLimitedAcrossAccountsAndSuccessesGiveTheirStrikeBack() {
        for (int i = 0; i < 5; i++) {
            assertThat(throttle.attempt(keys("user" + i, "198.51.100.7")).allowed()).isTrue();
        }
        AuthThrottle.Decision sixth = throttle.attempt(keys("bob", "198.51.100.7"));
        assertThat(sixth.allowed()).isFalse();
        assertThat(sixth.lockedNow()).extracting(AuthThrottle.Key::scope).containsExactly(AuthThrottle.Scope.ADDRESS);
        assertThat(throttle.attempt(keys("bob", "198.51.100.8")).allowed()).as("bob elsewhere").isTrue();

        // a user who gets in is not counted: many right logins never lock
        for (int i = 0; i < 10; i++) {
            List<AuthThrottle.Key> k = keys("carol", "203.0.113.1");
            assertThat(throttle.attempt(k).allowed()).isTrue();
            throttle.succeeded(k);
        }
        // failures older than the window are forgotten
        throttle.attempt(keys("dave", "203.0.113.2"));
        throttle.attempt(keys("dave", "203.0.113.2"));
        clock.advance(Duration.ofMinutes(16));
        for (int i = 0; i < 3; i++) {
            assertThat(throttle.attempt(keys("dave", "203.0.113.2")).allowed()).isTrue();
        }
    }
}
