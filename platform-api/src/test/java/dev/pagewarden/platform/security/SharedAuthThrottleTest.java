package dev.pagewarden.platform.security;

import dev.pagewarden.core.testing.ManualClock;
import dev.pagewarden.db.embedded.EmbeddedPostgresServer;
import dev.pagewarden.db.schema.Migrations;
import dev.pagewarden.incident.AdminProperties;
import dev.pagewarden.platform.database.BoundedCalls;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.postgresql.ds.PGSimpleDataSource;

import javax.sql.DataSource;
import java.net.ServerSocket;
import java.net.Socket;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.Callable;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Two replicas' {@link AuthThrottle}s over one real PostgreSQL: guesses spread over both count against one limit
 * and one lockout (that doubles as on one replica); parallel guesses on both never overtake the count; a success
 * on one gives the strike back on the other. With the database gone or frozen each answers within the timeout
 * and allows only its share of the limit (fail closed).
 */
class SharedAuthThrottleTest {
    @TempDir
    Path tmp;

    private final ManualClock clock = new ManualClock(Instant.parse("2026-12-01T12:00:00Z"));
    // 4 failures per account, 6 per address, within 15 min; lockouts of 1, 2, 4 ... up to 5 min
    private final AdminProperties properties = new AdminProperties(null, Duration.ofMinutes(30),
            Duration.ofMinutes(10), Duration.ofMinutes(5), 4, Duration.ofSeconds(1), Duration.ofSeconds(60),
            new AdminProperties.Throttle(4, 6, Duration.ofMinutes(15), Duration.ofMinutes(1), Duration.ofMinutes(5)));

    private AuthThrottle replica(DataSource ds) {
        return new AuthThrottle(properties, clock, new SharedStrikes(ds, new BoundedCalls("the shared login throttle",
                "this replica counts alone", "throttle-db", AuthThrottle.SHARED_TIMEOUT, null)), 2);
    }

    private static List<AuthThrottle.Key> keys(String account, String address) {
        return List.of(new AuthThrottle.Key("login", AuthThrottle.Scope.ACCOUNT, account),
                new AuthThrottle.Key("login", AuthThrottle.Scope.ADDRESS, address));
    }

    @Test
    void guessesOnBothReplicasCountAgainstOneLimitAndOneLockoutAndFailClosedWithoutTheDatabase() throws Exception {
        EmbeddedPostgresServer pg = EmbeddedPostgresServer.start(
                EmbeddedPostgresServer.Config.defaults().withDataDirectory(tmp.resolve("pg")));
        try (pg) {
            Migrations.migrate(pg.dataSource());
            try (AuthThrottle a = replica(pg.dataSource()); AuthThrottle b = replica(pg.dataSource())) {
                AuthThrottle[] both = {a, b};
                for (int i = 0; i < 4; i++) {
                    assertThat(both[i % 2].attempt(keys("alice", "a" + i)).allowed()).as("guess %d", i).isTrue();
                }
                AuthThrottle.Decision fifth = a.attempt(keys("alice", "a4"));
                assertThat(fifth.retryAfter()).as("the 5th guess over both replicas locks").isEqualTo(Duration.ofMinutes(1));
                assertThat(fifth.lockedNow()).extracting(AuthThrottle.Key::value).containsExactly("alice");
                clock.advance(Duration.ofSeconds(20));
                assertThat(b.attempt(keys("alice", "a5")).retryAfter()).as("locked on the other replica too")
                        .isEqualTo(Duration.ofSeconds(40));
                clock.advance(Duration.ofSeconds(40));
                for (int i = 0; i < 4; i++) {
                    assertThat(both[i % 2].attempt(keys("alice", "b" + i)).allowed()).isTrue();
                }
                assertThat(b.attempt(keys("alice", "b4")).retryAfter()).as("the second lockout doubles, on either")
                        .isEqualTo(Duration.ofMinutes(2));

                // 40 parallel guesses for one account, half on each replica: exactly the limit gets through
                clock.advance(Duration.ofMinutes(30));
                ExecutorService pool = Executors.newFixedThreadPool(8);
                try {
                    List<Future<Boolean>> guesses = new ArrayList<>();
                    for (int i = 0; i < 40; i++) {
                        AuthThrottle on = both[i % 2];
                        String address = "198.51.100." + i;
                        guesses.add(pool.submit((Callable<Boolean>) () -> on.attempt(keys("bob", address)).allowed()));
                    }
                    int allowed = 0;
                    for (Future<Boolean> g : guesses) {
                        allowed += g.get() ? 1 : 0;
                    }
                    assertThat(allowed).as("guesses let through of 40 parallel ones on two replicas").isEqualTo(4);
                } finally {
                    pool.shutdownNow();
                }

                // an address's strikes: a right login on A gives one back for B (in the background)
                for (int i = 0; i < 6; i++) {
                    assertThat(both[i % 2].attempt(keys("carol" + i, "203.0.113.9")).allowed()).isTrue();
                }
                a.succeeded(keys("carol5", "203.0.113.9"));
                long deadline = System.nanoTime() + Duration.ofSeconds(5).toNanos();
                boolean refunded = false;
                while (!refunded && System.nanoTime() < deadline) {
                    var before = countFailures(pg.dataSource(), "203.0.113.9");
                    refunded = before == 5;
                    if (!refunded) {
                        Thread.sleep(20);
                    }
                }
                assertThat(refunded).as("the address's count went from 6 to 5 in PostgreSQL").isTrue();
                assertThat(b.attempt(keys("dave", "203.0.113.9")).allowed()).as("the refunded strike, used on B").isTrue();
                assertThat(b.attempt(keys("erin", "203.0.113.9")).allowed()).as("then the address is over").isFalse();

                // the database gone: each replica answers within the timeout and allows its half of the limit
                pg.close();
                clock.advance(Duration.ofHours(1));
                long worst = 0;
                int allowedDown = 0;
                for (int i = 0; i < 6; i++) {
                    long t0 = System.nanoTime();
                    allowedDown += a.attempt(keys("frank", "192.0.2." + i)).allowed() ? 1 : 0;
                    worst = Math.max(worst, System.nanoTime() - t0);
                }
                assertThat(allowedDown).as("replica A's half of 4 guesses while PostgreSQL is gone").isEqualTo(2);
                assertThat(Duration.ofNanos(worst)).as("no attempt waits past the shared timeout (+ scheduling slack)")
                        .isLessThan(AuthThrottle.SHARED_TIMEOUT.plusSeconds(2));
            }
        }
    }

    @Test
    void aDatabaseThatNeverAnswersCostsAnAttemptAtMostTheTimeoutAndTheShareApplies() throws Exception {
        try (ServerSocket silent = new ServerSocket(0)) {
            List<Socket> held = new ArrayList<>();
            Thread.ofPlatform().daemon().start(() -> {
                try {
                    while (true) {
                        held.add(silent.accept());
                    }
                } catch (java.io.IOException closed) {
                    // the test is over
                }
            });
            PGSimpleDataSource frozen = new PGSimpleDataSource();
            frozen.setUrl("jdbc:postgresql://127.0.0.1:" + silent.getLocalPort() + "/postgres");
            frozen.setUser("postgres");
            try (AuthThrottle a = replica(frozen)) {
                long t0 = System.nanoTime();
                assertThat(a.attempt(keys("grace", "192.0.2.50")).allowed()).isTrue();
                assertThat(a.attempt(keys("grace", "192.0.2.51")).allowed()).isTrue();
                AuthThrottle.Decision third = a.attempt(keys("grace", "192.0.2.52"));
                assertThat(third.allowed()).as("half of 4 on this replica, then locked").isFalse();
                assertThat(third.lockedNow()).extracting(AuthThrottle.Key::value).containsExactly("grace");
                assertThat(Duration.ofNanos(System.nanoTime() - t0)).as("the first waits the timeout, the rest not at all")
                        .isLessThan(AuthThrottle.SHARED_TIMEOUT.plusSeconds(2));
            }
            for (Socket s : held) {
                s.close();
            }
        }
    }

    @Test
    void oddNamesAndSubMicrosecondClocksCountInPostgreSqlAndLockoutsEndOnTime() throws Exception {
        EmbeddedPostgresServer pg = EmbeddedPostgresServer.start(
                EmbeddedPostgresServer.Config.defaults().withDataDirectory(tmp.resolve("pg")));
        // nanoseconds PostgreSQL cannot keep (it rounds to microseconds)
        ManualClock fine = new ManualClock(Instant.parse("2026-12-01T12:00:00.000000700Z"));
        try (pg) {
            Migrations.migrate(pg.dataSource());
            try (AuthThrottle a = new AuthThrottle(properties, fine, new SharedStrikes(pg.dataSource(),
                    new BoundedCalls("the shared login throttle", "this replica counts alone", "throttle-db",
                            Duration.ofSeconds(30), null)), 2)) {
                // a typed name with NUL (refused by PostgreSQL text) and one that looks like its escaped form
                String nul = "mal\0lory", lookalike = "mal\\0lory";
                for (int i = 0; i < 4; i++) {
                    assertThat(a.attempt(keys(nul, "198.51.100." + i)).allowed()).as("guess %d", i).isTrue();
                    fine.advance(Duration.ofNanos(333));
                }
                assertThat(a.attempt(keys(lookalike, "198.51.100.9")).allowed()).as("a distinct account").isTrue();
                AuthThrottle.Decision fifth = a.attempt(keys(nul, "198.51.100.4"));
                assertThat(fifth.retryAfter()).as("counted in PostgreSQL with the full limit, not 1/2 alone")
                        .isEqualTo(Duration.ofMinutes(1));
                assertThat(countAccounts(pg.dataSource())).isEqualTo(2);
                fine.advance(Duration.ofMinutes(1));
                assertThat(a.attempt(keys(nul, "198.51.100.5")).allowed()).as("the lockout ends when it said").isTrue();
            }
        }
    }

    private static int countAccounts(DataSource ds) throws Exception {
        try (var c = ds.getConnection(); var st = c.prepareStatement(
                "SELECT count(*) FROM auth_throttle WHERE kind = 'login' AND scope = 'account'");
             var rs = st.executeQuery()) {
            rs.next();
            return rs.getInt(1);
        }
    }

    private static int countFailures(DataSource ds, String address) throws Exception {
        try (var c = ds.getConnection(); var st = c.prepareStatement(
                "SELECT failures FROM auth_throttle WHERE kind = 'login' AND scope = 'address' AND value = ?")) {
            st.setString(1, address);
            try (var rs = st.executeQuery()) {
                return rs.next() ? rs.getInt(1) : -1;
            }
        }
    }
}
