package dev.pagewarden.adminui.users;

import dev.pagewarden.db.schema.Migrations;
import dev.pagewarden.db.testing.TestPostgres;
import dev.pagewarden.incident.AdminProperties;
import dev.pagewarden.incident.audit.TestAuditLogs;
import dev.pagewarden.incident.incident.TestIncidents;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.springframework.jdbc.core.simple.JdbcClient;
import org.springframework.security.authentication.BadCredentialsException;
import org.springframework.security.authentication.UsernamePasswordAuthenticationToken;
import org.springframework.security.core.Authentication;
import org.springframework.security.core.GrantedAuthority;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * Passwords of admin users: a generated first-start password and a reset one must be changed before anything
 * else (the login they give has no role); a configured first-start password need not be. A change needs the
 * current password and a new, different one of 12+ characters; a change, a reset or disabling the user raises
 * the session epoch (which ends older sessions), enabling does not; nobody resets their own password.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class AdminPasswordsTest {
    private TestPostgres pg;
    private JdbcClient jdbc;

    @BeforeAll
    void startDatabase() throws Exception {
        pg = TestPostgres.start("admin-passwords");
        Migrations.migrate(pg.dataSource());
        jdbc = JdbcClient.create(pg.dataSource());
    }

    @AfterAll
    void stopDatabase() throws Exception {
        pg.close();
    }

    @BeforeEach
    void noUsers() {
        jdbc.sql("DELETE FROM admin_users").update();
    }

    private AdminUserService users(String initialPassword) {
        AdminProperties p = TestIncidents.PROPERTIES;
        return new AdminUserService(jdbc, TestAuditLogs.over(jdbc), new AdminProperties(initialPassword, p.sessionTimeout(),
                p.incidentAttach(), p.incidentLookback(), p.webhookAttempts(), p.webhookBackoff(), p.lineageSweep(), p.throttle()));
    }

    private static Authentication login(AdminUserService users, String name, String password) {
        return new AdminLogin(users, users.passwordEncoder())
                .authenticate(new UsernamePasswordAuthenticationToken(name, password)).block();
    }

    private static int epoch(AdminUserService users, String name) {
        return users.loadUser(name).orElseThrow().sessionEpoch();
    }

    @Test
    void aGeneratedFirstStartPasswordMustBeChangedAConfiguredOneNeedNot() {
        assertThat(users(null).createInitialAdmin()).isTrue();
        assertThat(users(null).loadUser("admin").orElseThrow().mustChangePassword()).as("generated, printed in the log").isTrue();

        noUsers();
        AdminUserService configured = users("configured-password-123");
        assertThat(configured.createInitialAdmin()).isTrue();
        assertThat(configured.loadUser("admin").orElseThrow().mustChangePassword()).isFalse();
        assertThat(login(configured, "admin", "configured-password-123").getAuthorities()).extracting(GrantedAuthority::getAuthority)
                .contains("ROLE_ADMIN");
    }

    @Test
    void aResetGivesAOneTimePasswordWhoseLoginCanOnlyChangeIt() {
        AdminUserService users = users("configured-password-123");
        users.createInitialAdmin();
        users.create("rita", "rita-password-1", AdminRole.PUBLISHER, "admin");
        int before = epoch(users, "rita");

        String oneTime = users.resetPassword("rita", "admin");
        assertThat(oneTime).hasSizeGreaterThanOrEqualTo(12);
        assertThat(epoch(users, "rita")).as("her sessions end").isEqualTo(before + 1);
        assertThatThrownBy(() -> login(users, "rita", "rita-password-1")).isInstanceOf(BadCredentialsException.class);
        Authentication limited = login(users, "rita", oneTime);
        assertThat(limited.getAuthorities()).extracting(GrantedAuthority::getAuthority)
                .containsExactly(SessionAuthorization.PASSWORD_CHANGE_REQUIRED);
        assertThat(SessionAuthorization.mustChangePassword(limited)).isTrue();
        assertThatThrownBy(() -> users.resetPassword("admin", "admin")).isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("change your own password");

        users.changePassword("rita", oneTime, "rita-password-2");
        assertThat(users.loadUser("rita").orElseThrow().mustChangePassword()).isFalse();
        assertThat(login(users, "rita", "rita-password-2").getAuthorities()).extracting(GrantedAuthority::getAuthority)
                .contains("ROLE_PUBLISHER").doesNotContain(SessionAuthorization.PASSWORD_CHANGE_REQUIRED);
        assertThat(jdbc.sql("SELECT count(*) FROM admin_audit WHERE target = 'rita' AND action IN "
                + "('admin_user.password_reset', 'admin_user.password_change')").query(Long.class).single()).isEqualTo(2);
    }

    @Test
    void aChangeNeedsTheCurrentPasswordAndANewStrongOneAndEndsOtherSessions() {
        AdminUserService users = users("configured-password-123");
        users.createInitialAdmin();
        int before = epoch(users, "admin");
        assertThatThrownBy(() -> users.changePassword("admin", "not-the-password", "another-password-1"))
                .hasMessage("the current password is wrong");
        assertThatThrownBy(() -> users.changePassword("admin", "configured-password-123", "short"))
                .hasMessageContaining("at least 12 characters");
        assertThatThrownBy(() -> users.changePassword("admin", "configured-password-123", "configured-password-123"))
                .hasMessageContaining("must differ");
        assertThat(epoch(users, "admin")).as("nothing changed").isEqualTo(before);

        assertThat(users.changePassword("admin", "configured-password-123", "another-password-1")).isEqualTo(before + 1);
        assertThat(login(users, "admin", "another-password-1").getDetails()).as("new logins carry the new epoch")
                .isEqualTo(before + 1);
    }

    @Test
    void disablingEndsSessionsForGoodEnablingDoesNotRaiseTheEpoch() {
        AdminUserService users = users("configured-password-123");
        users.createInitialAdmin();
        users.create("dora", "dora-password-1", AdminRole.RESPONDER, "admin");
        int before = epoch(users, "dora");
        users.setEnabled("dora", false, "admin");
        assertThat(epoch(users, "dora")).isEqualTo(before + 1);
        users.setEnabled("dora", true, "admin");
        assertThat(epoch(users, "dora")).isEqualTo(before + 1);
        users.setRole("dora", AdminRole.VIEWER, "admin");
        assertThat(epoch(users, "dora")).as("a role change applies per request, the session goes on").isEqualTo(before + 1);
    }
}
