package dev.pagewarden.platform.adminport;

import dev.pagewarden.core.testing.ManualClock;
import dev.pagewarden.adminui.users.AdminLogin;
import dev.pagewarden.adminui.users.AdminRole;
import dev.pagewarden.adminui.users.AdminUserService;
import dev.pagewarden.platform.testing.PlatformTestBase;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.prometheusmetrics.PrometheusMeterRegistry;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.test.context.TestConfiguration;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Import;
import org.springframework.context.annotation.Primary;
import org.springframework.http.HttpHeaders;
import org.springframework.http.MediaType;
import org.springframework.jdbc.core.simple.JdbcClient;
import org.springframework.security.authentication.BadCredentialsException;
import org.springframework.security.authentication.UsernamePasswordAuthenticationToken;
import org.springframework.security.crypto.password.PasswordEncoder;
import org.springframework.test.context.DynamicPropertyRegistry;
import org.springframework.test.context.DynamicPropertySource;
import org.springframework.test.context.TestPropertySource;
import org.springframework.test.web.reactive.server.EntityExchangeResult;
import org.springframework.test.web.reactive.server.WebTestClient;
import org.springframework.util.LinkedMultiValueMap;
import org.springframework.web.reactive.function.BodyInserters;

import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * Guessing is throttled: per account and per client address for the login form, per address for the
 * admin token; refused attempts answer 429 with Retry-After (the login form says so, the admin API
 * with an OpenAI error body), even with the right secret, until the lockout - which grows - ends.
 * Failures and lockouts are in the admin audit and the metric. Unknown users cost a password hash
 * like known ones. The test's loopback peer is a trusted proxy, so each test speaks for its own
 * client address through X-Forwarded-For; the throttle's clock is the test's.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
@Import(LoginThrottleTest.Clocks.class)
@TestPropertySource(properties = {"pagewarden.http.trusted-proxies=127.0.0.1,::1",
        "pagewarden.admin.throttle.max-failures=5", "pagewarden.admin.throttle.address-max-failures=8",
        "pagewarden.admin.throttle.lockout=60s"})
class LoginThrottleTest extends PlatformTestBase {
    private static final Path HOME = tempHome();
    private static final Pattern CSRF = Pattern.compile("name=\"_csrf\"\\s+value=\"([^\"]+)\"");
    static final String PASSWORD = "correct-horse-battery";


    @TestConfiguration
    static class Clocks {
        @Bean
        @Primary
        ManualClock testClock() {
            // the platform's other users of the clock see the same (harmless) time
            return new ManualClock(Instant.now());
        }
    }

    @DynamicPropertySource
    static void home(DynamicPropertyRegistry registry) {
        registry.add("pagewarden.home", HOME::toString);
    }

    @Autowired
    AdminUserService users;
    @Autowired
    JdbcClient jdbc;
    @Autowired
    ManualClock clock;
    @Autowired
    MeterRegistry meters;
    @Autowired
    PrometheusMeterRegistry prometheus;

    @BeforeAll
    void accounts() {
        for (String name : List.of("guarded", "bystander", "neighbour")) {
            users.create(name, PASSWORD, AdminRole.VIEWER, "test");
        }
    }

    /** One login from a client address: fetches the form (session + CSRF), then posts it. */
    EntityExchangeResult<String> login(String address, String user, String password) {
        WebTestClient c = client();
        EntityExchangeResult<String> form = c.get().uri("/admin/login").header("X-Forwarded-For", address).exchange()
                .expectBody(String.class).returnResult();
        String session = form.getResponseCookies().getFirst("SESSION").getValue();
        Matcher m = CSRF.matcher(form.getResponseBody());
        assertThat(m.find()).isTrue();
        LinkedMultiValueMap<String, String> data = new LinkedMultiValueMap<>();
        data.add("username", user);
        data.add("password", password);
        data.add("_csrf", m.group(1));
        return c.post().uri("/admin/login").header("X-Forwarded-For", address).cookie("SESSION", session)
                .contentType(MediaType.APPLICATION_FORM_URLENCODED).body(BodyInserters.fromFormData(data)).exchange()
                .expectBody(String.class).returnResult();
    }

    static String location(EntityExchangeResult<?> r) {
        return String.valueOf(r.getResponseHeaders().getFirst(HttpHeaders.LOCATION));
    }

    long audit(String action, String target) {
        return jdbc.sql("SELECT count(*) FROM admin_audit WHERE action = :a AND target = :t").param("a", action)
                .param("t", target).query(Long.class).single();
    }

    double counted(String kind, String outcome) {
        var c = meters.find("pagewarden.auth.failures").tag("kind", kind).tag("outcome", outcome).counter();
        return c == null ? 0 : c.count();
    }

    @Test
    void wrongPasswordsLockTheAccountEvenForTheRightPasswordUntilTheGrowingLockoutEnds() {
        double lockedBefore = counted("login", "locked_out");
        for (int i = 0; i < 5; i++) {
            var r = login("198.51.100." + (10 + i), "guarded", "wrong-password-" + i);
            assertThat(location(r)).as("attempt " + (i + 1)).endsWith("/admin/login?error");
        }
        var sixth = login("198.51.100.20", "guarded", "wrong-password-6");
        assertThat(sixth.getStatus().value()).isEqualTo(429);
        assertThat(sixth.getResponseHeaders().getFirst(HttpHeaders.RETRY_AFTER)).isEqualTo("60");
        assertThat(sixth.getResponseBody()).contains("id=\"login-throttled\"").contains("try again in 60 seconds")
                .doesNotContain("id=\"login-error\"").doesNotContain("id=\"logged-out\"");
        // the right password is refused too, from anywhere, while the lockout lasts
        clock.advance(Duration.ofSeconds(30));
        var right = login("198.51.100.21", "guarded", PASSWORD);
        assertThat(right.getStatus().value()).isEqualTo(429);
        assertThat(right.getResponseHeaders().getFirst(HttpHeaders.RETRY_AFTER)).isEqualTo("30");
        // another account is untouched
        assertThat(location(login("198.51.100.22", "bystander", PASSWORD))).endsWith("/admin");

        // the lockout over, attempts are heard again; the next lockout is twice as long
        clock.advance(Duration.ofSeconds(30));
        for (int i = 0; i < 5; i++) {
            assertThat(location(login("198.51.100." + (30 + i), "guarded", "wrong-again-" + i))).endsWith("/admin/login?error");
        }
        var again = login("198.51.100.40", "guarded", "wrong-again");
        assertThat(again.getStatus().value()).isEqualTo(429);
        assertThat(again.getResponseHeaders().getFirst(HttpHeaders.RETRY_AFTER)).isEqualTo("120");
        clock.advance(Duration.ofSeconds(120));
        assertThat(location(login("198.51.100.41", "guarded", PASSWORD))).isEqualTo("/admin");

        // the admin audit: each failure, each lockout; the metric for alerting
        assertThat(audit("login.failure", "guarded")).isEqualTo(10);
        assertThat(audit("login.lockout", "account guarded")).isEqualTo(2);
        assertThat(jdbc.sql("SELECT details FROM admin_audit WHERE action = 'login.failure' AND target = 'guarded' "
                + "ORDER BY id LIMIT 1").query(String.class).single()).isEqualTo("from 198.51.100.10");
        assertThat(counted("login", "locked_out") - lockedBefore).isEqualTo(2);
        assertThat(counted("login", "throttled")).isGreaterThanOrEqualTo(1);
        assertThat(counted("login", "failed")).isGreaterThanOrEqualTo(10);
        assertThat(prometheus.scrape()).contains("pagewarden_auth_failures_total{").contains("outcome=\"locked_out\"");
    }

    @Test
    void oneAddressGuessingAcrossAccountsIsLockedOutWhileOthersLogIn() {
        String address = "203.0.113.50";
        for (int i = 0; i < 8; i++) {
            assertThat(location(login(address, "nobody-" + i, "guess-" + i))).endsWith("/admin/login?error");
        }
        var locked = login(address, "neighbour", PASSWORD);
        assertThat(locked.getStatus().value()).isEqualTo(429);
        assertThat(audit("login.lockout", "address " + address)).isEqualTo(1);
        assertThat(location(login("203.0.113.51", "neighbour", PASSWORD))).isEqualTo("/admin");
        clock.advance(Duration.ofSeconds(61));
        assertThat(location(login(address, "neighbour", PASSWORD))).isEqualTo("/admin");
    }

    @Test
    void wrongAdminTokensAreThrottledPerAddressWithAnOpenAiError() {
        String address = "192.0.2.77";
        WebTestClient wrong = client().mutate().defaultHeader("X-Forwarded-For", address)
                .defaultHeader("Authorization", "Bearer not-the-admin-token-0000").build();
        for (int i = 0; i < 8; i++) {
            wrong.get().uri("/admin/api/tenants").exchange().expectStatus().isUnauthorized()
                    .expectBody().jsonPath("$.error.code").isEqualTo("invalid_api_key");
        }
        wrong.get().uri("/admin/api/tenants").exchange().expectStatus().isEqualTo(429)
                .expectHeader().valueEquals(HttpHeaders.RETRY_AFTER, "60")
                .expectBody()
                .jsonPath("$.error.code").isEqualTo("too_many_attempts")
                .jsonPath("$.error.type").isEqualTo("rate_limit_error")
                .jsonPath("$.error.message").value(String.class, m -> assertThat(m).contains("try again in 60 seconds"));
        // the right token from that address waits too; from elsewhere it works
        admin().mutate().defaultHeader("X-Forwarded-For", address).build().get().uri("/admin/api/tenants").exchange()
                .expectStatus().isEqualTo(429);
        admin().mutate().defaultHeader("X-Forwarded-For", "192.0.2.78").build().get().uri("/admin/api/tenants").exchange()
                .expectStatus().isOk();
        assertThat(jdbc.sql("SELECT count(*) FROM admin_audit WHERE action = 'admin_token.failure' AND details = :d")
                .param("d", "from " + address).query(Long.class).single()).isEqualTo(8);
        assertThat(audit("admin_token.lockout", "address " + address)).isEqualTo(1);
        clock.advance(Duration.ofSeconds(60));
        admin().mutate().defaultHeader("X-Forwarded-For", address).build().get().uri("/admin/api/tenants").exchange()
                .expectStatus().isOk();
    }

    @Test
    void unknownAndDisabledUsersCostAPasswordHashLikeKnownOnes() {
        AtomicInteger hashed = new AtomicInteger();
        PasswordEncoder real = users.passwordEncoder();
        PasswordEncoder counting = new PasswordEncoder() {
            @Override
            public String encode(CharSequence raw) {
                return real.encode(raw);
            }

            @Override
            public boolean matches(CharSequence raw, String encoded) {
                hashed.incrementAndGet();
                return real.matches(raw, encoded);
            }
        };
        AdminLogin login = new AdminLogin(users, counting);
        users.create("gone-user", PASSWORD, AdminRole.VIEWER, "test");
        users.setEnabled("gone-user", false, "test");
        for (String name : List.of("no-such-user", "gone-user", "guarded-typo")) {
            hashed.set(0);
            assertThatThrownBy(() -> login.authenticate(UsernamePasswordAuthenticationToken.unauthenticated(name, PASSWORD))
                    .block(Duration.ofSeconds(30)))
                    .as(name).isInstanceOf(BadCredentialsException.class)
                    .hasMessage("Wrong username or password, or the user is disabled");
            assertThat(hashed.get()).as(name + ": one password hash checked").isEqualTo(1);
        }
        hashed.set(0);
        assertThat(login.authenticate(UsernamePasswordAuthenticationToken.unauthenticated("bystander", PASSWORD))
                .block(Duration.ofSeconds(30)).isAuthenticated()).isTrue();
        assertThat(hashed.get()).isEqualTo(1);
    }

    @Test
    void theLoginPageShowsExactlyOneMessage() {
        UiSession anon = new UiSession(baseUrl());
        Map<String, String> expected = Map.of("/admin/login?error", "login-error", "/admin/login?logout", "logged-out",
                "/admin/login?logout&error", "login-error", "/admin/login?error&logout", "login-error");
        expected.forEach((page, id) -> {
            String body = anon.get(page).getResponseBody();
            for (String other : List.of("login-error", "logged-out", "login-throttled")) {
                assertThat(body.contains("id=\"" + other + "\"")).as(page + " shows " + other).isEqualTo(other.equals(id));
            }
        });
        String plain = anon.get("/admin/login").getResponseBody();
        assertThat(plain).doesNotContain("class=\"msg");
    }
}
