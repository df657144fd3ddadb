package dev.pagewarden.platform.adminport;

import dev.pagewarden.adminui.incident.IncidentService;
import dev.pagewarden.adminui.users.AdminRole;
import dev.pagewarden.adminui.users.AdminUserService;
import dev.pagewarden.core.safety.SafetyEvent;
import dev.pagewarden.platform.audit.SafetyEventRecorder;
import dev.pagewarden.platform.testing.PlatformTest;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.http.HttpMethod;
import org.springframework.http.MediaType;
import org.springframework.jdbc.core.simple.JdbcClient;

import java.time.Instant;
import java.util.List;
import java.util.Map;
import java.util.UUID;

import static dev.pagewarden.platform.adminport.Await.until;
import static org.assertj.core.api.Assertions.assertThat;

/**
 * Who may do what in the admin UI: logged-out visitors see only the login form and {@code /status};
 * a viewer reads but cannot act; a responder works incidents but cannot publish; only an admin
 * manages users. Also: CSRF, logout, disabled users, the initial admin, the admin audit trail.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class AdminUiAccessTest extends PlatformTest {
    static final String PASSWORD = "correct-horse-battery";

    @Autowired
    AdminUserService users;
    @Autowired
    SafetyEventRecorder safety;
    @Autowired
    IncidentService incidents;
    @Autowired
    JdbcClient jdbc;

    @BeforeAll
    void users() {
        for (AdminRole role : AdminRole.values()) {
            if (users.findByName("t-" + role.label()).isEmpty()) {
                users.create("t-" + role.label(), PASSWORD, role, "test");
            }
        }
    }

    UiSession as(AdminRole role) {
        return new UiSession(baseUrl()).login("t-" + role.label(), PASSWORD);
    }

    /** A detector event on a worker of its own, so it opens a fresh incident; returns the incident id. */
    long incident() {
        String worker = "w-" + UUID.randomUUID();
        safety.onEvent(new SafetyEvent(SafetyEvent.Type.OWNER_TAG_MISMATCH, SafetyEvent.Severity.CRITICAL, worker, 7,
                "t_x", List.of(3), List.of(1L), Instant.now(), "expected t_x, found t_y"));
        until(() -> incidents.list().stream().anyMatch(i -> i.worker().equals(worker)), "the incident to open");
        return incidents.list().stream().filter(i -> i.worker().equals(worker)).findFirst().orElseThrow().id();
    }

    @Test
    void loggedOutVisitorsSeeOnlyTheLoginFormAndStatus() {
        UiSession anon = new UiSession(baseUrl());
        for (String page : List.of("/admin", "/admin/incidents", "/admin/users", "/admin/incidents/1", "/admin/overview/panel")) {
            var r = anon.get(page);
            assertThat(r.getStatus().value()).as(page).isEqualTo(302);
            assertThat(UiSession.location(r)).as(page).endsWith("/admin/login");
        }
        assertThat(anon.get("/admin/login").getStatus().value()).isEqualTo(200);
        assertThat(anon.get("/status").getStatus().value()).isEqualTo(200);
        assertThat(anon.get("/status.json").getStatus().value()).isEqualTo(200);
        assertThat(client().get().uri("/admin/api/tenants").exchange().returnResult(String.class).getStatus().value())
                .isEqualTo(401);
        long id = incident();
        var post = anon.post("/admin/incidents/" + id + "/status", "status", "resolved");
        assertThat(post.getStatus().is2xxSuccessful() || post.getStatus().is3xxRedirection() && !UiSession.location(post)
                .endsWith("/admin/incidents/" + id)).isTrue();
        assertThat(incidents.get(id).status().label()).isEqualTo("investigating");
    }

    @Test
    void initialAdminExistsAndWrongPasswordsAndDisabledUsersAreRefused() {
        assertThat(users.findByName("admin")).get().extracting(u -> u.role()).isEqualTo(AdminRole.ADMIN);
        assertThat(jdbc.sql("SELECT password_hash FROM admin_users WHERE username = 'admin'").query(String.class).single())
                .startsWith("{bcrypt}");
        UiSession s = new UiSession(baseUrl());
        s.get("/admin/login");
        var r = s.post("/admin/login", "username", "t-viewer", "password", "wrong-password-123");
        assertThat(UiSession.location(r)).endsWith("/admin/login?error");
        users.create("t-gone-" + System.nanoTime() % 100000, PASSWORD, AdminRole.ADMIN, "test");
        String gone = users.list().stream().filter(u -> u.username().startsWith("t-gone-")).findFirst().orElseThrow().username();
        users.setEnabled(gone, false, "test");
        s.get("/admin/login");
        assertThat(UiSession.location(s.post("/admin/login", "username", gone, "password", PASSWORD)))
                .endsWith("/admin/login?error");
    }

    @Test
    void viewerReadsButCannotAct() {
        UiSession viewer = as(AdminRole.VIEWER);
        long id = incident();
        assertThat(viewer.get("/admin").getStatus().value()).isEqualTo(200);
        assertThat(viewer.get("/admin/incidents").getResponseBody()).contains("owner-tag-mismatch");
        var page = viewer.get("/admin/incidents/" + id);
        assertThat(page.getStatus().value()).isEqualTo(200);
        assertThat(page.getResponseBody()).doesNotContain("id=\"make-private\"");
        assertThat(viewer.post("/admin/incidents/" + id + "/status", "status", "identified").getStatus().value()).isEqualTo(403);
        assertThat(viewer.post("/admin/incidents/" + id + "/model-private").getStatus().value()).isEqualTo(403);
        assertThat(viewer.get("/admin/users").getStatus().value()).isEqualTo(403);
        assertThat(incidents.get(id).status().label()).isEqualTo("investigating");
        // the admin API on a viewer's session: reads yes, writes no
        viewer.api(HttpMethod.GET, "/admin/api/tenants").exchange().expectStatus().isOk();
        viewer.api(HttpMethod.PUT, "/admin/api/models/" + MODEL + "/visibility").contentType(MediaType.APPLICATION_JSON)
                .bodyValue(Map.of("private", true)).exchange().expectStatus().isForbidden();
    }

    @Test
    void responderWorksIncidentsButCannotPublishOrManageUsers() {
        UiSession responder = as(AdminRole.RESPONDER);
        long id = incident();
        var r = responder.post("/admin/incidents/" + id + "/status", "status", "identified");
        assertThat(r.getStatus().value()).isEqualTo(303 == r.getStatus().value() ? 303 : 302);
        assertThat(incidents.get(id).status().label()).isEqualTo("identified");
        assertThat(responder.post("/admin/incidents/" + id + "/notes", "text", "looking at decode-0").getStatus()
                .is3xxRedirection()).isTrue();
        assertThat(incidents.timeline(id)).extracting(e -> e.text()).contains("looking at decode-0",
                "status investigating -> identified");
        assertThat(responder.post("/admin/disclosures/1/publish").getStatus().value()).isEqualTo(403);
        assertThat(responder.post("/admin/users", "username", "sneaky", "password", PASSWORD, "role", "admin")
                .getStatus().value()).isEqualTo(403);
        assertThat(users.findByName("sneaky")).isEmpty();
        // going backwards is refused with the reason
        var back = responder.post("/admin/incidents/" + id + "/status", "status", "investigating");
        assertThat(back.getStatus().value()).isEqualTo(400);
        assertThat(back.getResponseBody()).contains("can only move forward");
    }

    @Test
    void formsWithoutTheCsrfTokenAreRefused() {
        UiSession responder = as(AdminRole.RESPONDER);
        long id = incident();
        assertThat(responder.post("/admin/incidents/" + id + "/status", false, "status", "identified").getStatus().value())
                .isEqualTo(403);
        assertThat(incidents.get(id).status().label()).isEqualTo("investigating");
    }

    @Test
    void adminManagesUsersAndEveryActionIsAudited() {
        UiSession admin = as(AdminRole.ADMIN);
        String name = "new-" + System.nanoTime() % 1_000_000;
        assertThat(admin.post("/admin/users", "username", name, "password", PASSWORD, "role", "viewer").getStatus().value())
                .isEqualTo(200);
        assertThat(users.findByName(name)).get().extracting(u -> u.role()).isEqualTo(AdminRole.VIEWER);
        admin.post("/admin/users/" + name + "/role", "role", "publisher");
        assertThat(users.findByName(name)).get().extracting(u -> u.role()).isEqualTo(AdminRole.PUBLISHER);
        var bad = admin.post("/admin/users", "username", "x", "password", "short", "role", "viewer");
        assertThat(bad.getStatus().value()).isEqualTo(400);
        assertThat(bad.getResponseBody()).contains("username must be");
        List<Map<String, Object>> audit = jdbc.sql("SELECT actor, action, target FROM admin_audit WHERE target = :t ORDER BY id")
                .param("t", name).query().listOfRows();
        assertThat(audit).extracting(m -> m.get("action")).containsExactly("admin_user.create", "admin_user.role");
        assertThat(audit).extracting(m -> m.get("actor")).containsOnly("t-admin");
        // admin API calls on the bearer token are audited too
        admin().post().uri("/admin/api/tenants").contentType(MediaType.APPLICATION_JSON)
                .bodyValue(Map.of("name", "audited")).exchange().expectStatus().isCreated();
        until(() -> jdbc.sql("SELECT count(*) FROM admin_audit WHERE actor = 'admin-token' AND target = '/admin/api/tenants'")
                .query(Long.class).single() > 0, "the API call in the admin audit");
    }

    @Test
    void logoutEndsTheSession() {
        UiSession viewer = as(AdminRole.VIEWER);
        var out = viewer.post("/admin/logout");
        assertThat(UiSession.location(out)).endsWith("/admin/login?logout");
        assertThat(viewer.get("/admin").getStatus().value()).isEqualTo(302);
    }
}
