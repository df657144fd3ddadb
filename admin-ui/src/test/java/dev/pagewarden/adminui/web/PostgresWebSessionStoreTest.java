package dev.pagewarden.adminui.web;

import dev.pagewarden.db.schema.Migrations;
import dev.pagewarden.db.testing.TestPostgres;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.springframework.jdbc.core.simple.JdbcClient;
import org.springframework.security.authentication.UsernamePasswordAuthenticationToken;
import org.springframework.security.core.context.SecurityContext;
import org.springframework.security.core.context.SecurityContextImpl;
import org.springframework.security.core.userdetails.User;
import org.springframework.security.web.server.csrf.DefaultCsrfToken;
import org.springframework.web.server.WebSession;
import reactor.core.scheduler.Schedulers;

import javax.sql.DataSource;
import java.net.URI;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.time.ZoneId;
import java.time.ZoneOffset;
import java.util.Map;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Admin sessions in a real PostgreSQL seen through two store instances (two replicas): what one saves the
 * other reads back, a login rotates the id, idle sessions expire, logout deletes the row, and rows holding
 * classes outside the allow-list are refused.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class PostgresWebSessionStoreTest {
    private static final Duration CALL = Duration.ofSeconds(10);
    private TestPostgres pg;
    private DataSource ds;
    private final MovableClock clock = new MovableClock(Instant.parse("2026-12-01T10:00:00Z"));

    @BeforeAll
    void startDatabase() throws Exception {
        pg = TestPostgres.start("sessions");
        ds = pg.dataSource();
        Migrations.migrate(ds);
    }

    @AfterAll
    void stopDatabase() throws Exception {
        pg.close();
    }

    private PostgresWebSessionStore replica() {
        return new PostgresWebSessionStore(ds, clock, Duration.ofMinutes(30), Duration.ofSeconds(3), Schedulers.boundedElastic());
    }

    private static SecurityContext loggedIn(String name) {
        User user = (User) User.withUsername(name).password("{noop}x").roles("VIEWER", "RESPONDER").build();
        return new SecurityContextImpl(UsernamePasswordAuthenticationToken.authenticated(user, null, user.getAuthorities()));
    }

    /** Rows of sessions created at {@code at} (each test starts its sessions at its own time). */
    private long rows(Instant at) {
        return JdbcClient.create(ds).sql("SELECT count(*) FROM admin_sessions WHERE created_at = :t")
                .param("t", java.sql.Timestamp.from(at)).query(Long.class).single();
    }

    @Test
    void aSessionSavedByOneReplicaIsValidOnTheOtherAndLoginRotatesItsId() {
        PostgresWebSessionStore a = replica(), b = replica();
        WebSession s = a.createWebSession().block(CALL);
        s.getAttributes().put("SPRING_SECURITY_CONTEXT", loggedIn("alice"));
        s.getAttributes().put("csrf", new DefaultCsrfToken("X-CSRF-TOKEN", "_csrf", "token-1"));
        s.save().block(CALL);

        WebSession seen = b.retrieveSession(s.getId()).block(CALL);
        assertThat(seen).isNotNull();
        SecurityContext context = seen.getAttribute("SPRING_SECURITY_CONTEXT");
        assertThat(context.getAuthentication().getName()).isEqualTo("alice");
        assertThat(context.getAuthentication().isAuthenticated()).isTrue();
        assertThat(context.getAuthentication().getAuthorities()).extracting(Object::toString)
                .containsExactlyInAnyOrder("ROLE_VIEWER", "ROLE_RESPONDER");
        assertThat(((DefaultCsrfToken) seen.getAttribute("csrf")).getToken()).isEqualTo("token-1");

        // fixation protection: the id changes, the old one is dead on every replica at once
        String before = seen.getId();
        seen.changeSessionId().block(CALL);
        assertThat(seen.getId()).isNotEqualTo(before);
        assertThat(a.retrieveSession(before).block(CALL)).isNull();
        seen.save().block(CALL);
        assertThat(a.retrieveSession(seen.getId()).block(CALL)).isNotNull()
                .satisfies(r -> assertThat(r.getAttributes()).containsKey("SPRING_SECURITY_CONTEXT"));
    }

    @Test
    void idleSessionsExpireAndAreCleanedUp() {
        PostgresWebSessionStore a = replica(), b = replica();
        clock.advance(Duration.ofDays(400)); // apart from the other tests' sessions
        Instant start = clock.instant();
        WebSession idle = a.createWebSession().block(CALL);
        idle.getAttributes().put("SPRING_SECURITY_CONTEXT", loggedIn("bob"));
        idle.save().block(CALL);
        WebSession shortLived = a.createWebSession().block(CALL);
        shortLived.setMaxIdleTime(Duration.ofMinutes(5));
        shortLived.start();
        shortLived.save().block(CALL);
        assertThat(rows(start)).isEqualTo(2);

        clock.advance(Duration.ofMinutes(29));
        WebSession used = b.retrieveSession(idle.getId()).block(CALL); // an access: idle time starts again
        assertThat(used).isNotNull();
        used.save().block(CALL);
        assertThat(b.retrieveSession(shortLived.getId()).block(CALL)).as("5 minutes idle limit, 29 minutes idle").isNull();
        clock.advance(Duration.ofMinutes(29));
        assertThat(a.retrieveSession(idle.getId()).block(CALL)).as("29 minutes after its last access").isNotNull();

        clock.advance(Duration.ofMinutes(31));
        assertThat(rows(start)).as("expired, not read since").isEqualTo(1);
        assertThat(a.removeExpired()).isPositive();
        assertThat(rows(start)).isZero();
        assertThat(b.retrieveSession(idle.getId()).block(CALL)).isNull();
    }

    @Test
    void logoutDeletesTheSessionForEveryReplica() {
        PostgresWebSessionStore a = replica(), b = replica();
        clock.advance(Duration.ofDays(800)); // apart from the other tests' sessions
        WebSession s = a.createWebSession().block(CALL);
        s.getAttributes().put("SPRING_SECURITY_CONTEXT", loggedIn("carol"));
        s.save().block(CALL);
        WebSession onB = b.retrieveSession(s.getId()).block(CALL);
        onB.invalidate().block(CALL);
        assertThat(onB.isExpired()).isTrue();
        onB.save().block(CALL);
        assertThat(a.retrieveSession(s.getId()).block(CALL)).isNull();
        assertThat(rows(s.getCreationTime())).isZero();

        // a request of the same session still running on A when B logged out: its save does not bring it back
        WebSession again = a.createWebSession().block(CALL);
        again.getAttributes().put("SPRING_SECURITY_CONTEXT", loggedIn("carol"));
        again.save().block(CALL);
        WebSession inFlight = a.retrieveSession(again.getId()).block(CALL);
        b.retrieveSession(again.getId()).block(CALL).invalidate().block(CALL);
        inFlight.getAttributes().put("last-page", "/admin/incidents");
        inFlight.save().block(CALL);
        assertThat(b.retrieveSession(again.getId()).block(CALL)).as("saved after a logout elsewhere").isNull();
    }

    @Test
    void attributesOutsideTheAllowListAreRefusedOnRead() {
        PostgresWebSessionStore a = replica();
        byte[] foreign = PostgresWebSessionStore.serialize(Map.of("where", URI.create("http://example.com/")));
        assertThat(org.assertj.core.api.Assertions.catchThrowable(() -> PostgresWebSessionStore.deserialize(foreign)))
                .isInstanceOf(java.io.InvalidClassException.class).hasMessageContaining("REJECTED");
        WebSession s = a.createWebSession().block(CALL);
        s.getAttributes().put("where", URI.create("http://example.com/"));
        s.save().block(CALL);
        assertThat(replica().retrieveSession(s.getId()).block(CALL)).as("a row the filter refuses is dropped").isNull();
    }

    /** A clock the test moves. */
    private static final class MovableClock extends Clock {
        private volatile Instant now;

        MovableClock(Instant start) {
            this.now = start;
        }

        void advance(Duration d) {
            now = now.plus(d);
        }

        @Override
        public ZoneId getZone() {
            return ZoneOffset.UTC;
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
}
