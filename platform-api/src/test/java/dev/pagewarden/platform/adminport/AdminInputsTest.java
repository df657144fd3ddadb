package dev.pagewarden.platform.adminport;

import dev.pagewarden.adminui.users.AdminRole;
import dev.pagewarden.platform.engine.EngineHost;
import org.junit.jupiter.api.Test;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.http.HttpMethod;
import org.springframework.http.MediaType;

import java.util.Map;

import static dev.pagewarden.platform.adminport.Await.until;
import static org.assertj.core.api.Assertions.assertThat;

/**
 * Admin UI forms and the admin API around them: text that cannot be stored is refused on the form
 * naming the field (a NUL login name is a failed login, not a 500); failed admin API calls land in
 * the admin audit, security refusals included; who may take a model private and make it public
 * again is the same on the incident page and the admin API.
 */
class AdminInputsTest extends AdminUiTest {
    @Autowired
    EngineHost host;

    AdminInputsTest() {
        super("in-");
    }

    @Test
    void formsRefuseTextThatCannotBeStoredNamingTheField() {
        UiSession admin = as(AdminRole.ADMIN);
        admin.get("/admin/tenants");
        var tenant = admin.post("/admin/tenants", "name", "ac\u0000me");
        assertThat(tenant.getStatus().value()).isEqualTo(400);
        assertThat(tenant.getResponseBody()).contains("name must not contain control characters");
        String created = UiSession.location(admin.post("/admin/tenants", "name", "forms-tenant"));
        assertThat(created).startsWith("/admin/tenants/t_");
        admin.get(created);
        var key = admin.post(created + "/keys", "name", "laptop\u0000");
        assertThat(key.getStatus().value()).isEqualTo(400);
        assertThat(key.getResponseBody()).contains("name must not contain control characters");

        admin.get("/admin/users");
        var user = admin.post("/admin/users", "username", "evil\u0000", "password", PASSWORD, "role", "viewer");
        assertThat(user.getStatus().value()).isEqualTo(400);
        assertThat(user.getResponseBody()).contains("username must be");

        UiSession responder = as(AdminRole.RESPONDER);
        long id = incident();
        responder.get("/admin/incidents/" + id);
        var note = responder.post("/admin/incidents/" + id + "/notes", "text", "bad\u0000note");
        assertThat(note.getStatus().value()).isEqualTo(400);
        assertThat(note.getResponseBody()).contains("note must not contain control characters");
        responder.get("/admin/incidents/" + id);
        assertThat(responder.post("/admin/incidents/" + id + "/notes", "text", "two\nlines\tok").getStatus()
                .is3xxRedirection()).isTrue();
        assertThat(incidents.timeline(id)).extracting(e -> e.text()).contains("two\nlines\tok");

        responder.get("/admin/incidents/" + id);
        String disclosure = UiSession.location(responder.post("/admin/incidents/" + id + "/disclosure"));
        responder.get(disclosure);
        var title = responder.post(disclosure, "title", "Incident\u0000", "body", "text");
        assertThat(title.getStatus().value()).isEqualTo(400);
        assertThat(title.getResponseBody()).contains("title must not contain control characters");
        responder.get(disclosure);
        var body = responder.post(disclosure, "title", "Incident", "body", "text\u0000");
        assertThat(body.getStatus().value()).isEqualTo(400);
        assertThat(body.getResponseBody()).contains("body must not contain control characters");
    }

    @Test
    void aLoginNameWithNulIsAFailedLoginNotAnError() {
        UiSession s = new UiSession(baseUrl());
        s.get("/admin/login");
        var r = s.post("/admin/login", "username", "in-admin\u0000", "password", PASSWORD);
        assertThat(r.getStatus().value()).isEqualTo(302);
        assertThat(UiSession.location(r)).endsWith("/admin/login?error");
        s.get("/admin/login");
        assertThat(UiSession.location(s.post("/admin/login", "username", "\u0000", "password", "x")))
                .endsWith("/admin/login?error");
    }

    @Test
    void failedAdminApiCallsAreInTheAdminAudit() {
        String unknown = "/admin/api/tenants/t_missing" + System.nanoTime() + "/limits";
        admin().put().uri(unknown).contentType(MediaType.APPLICATION_JSON).bodyValue(Map.of("max_context", 5))
                .exchange().expectStatus().isNotFound();
        assertThat(row(unknown)).containsEntry("actor", "admin-token").containsEntry("action", "api PUT")
                .containsEntry("details", "status 404 (refused)");

        String anonymous = "/admin/api/tenants/t_anon" + System.nanoTime() + "/keys";
        // no credentials and no CSRF token: refused by the CSRF filter before authentication
        client().post().uri(anonymous).exchange().expectStatus().isForbidden();
        // other tests of this shared server may have spent the per-minute budget of unauthenticated refusals: then
        // the row also counts those not recorded one by one
        assertThat(row(anonymous)).containsEntry("actor", "anonymous").containsEntry("action", "api POST")
                .hasEntrySatisfying("details", d -> assertThat((String) d).matches(
                        "status 403 \\(refused\\)(; \\d+ earlier unauthenticated refusal\\(s\\) over the per-minute budget were not recorded one by one)?"));
        String noKey = "/admin/api/tenants/t_nokey" + System.nanoTime() + "/keys";
        client().get().uri(noKey).exchange().expectStatus().isUnauthorized();
        assertThat(row(noKey)).containsEntry("actor", "anonymous").containsEntry("details", "status 401 (refused)");

        String wrongToken = "/admin/api/tenants/t_wrong" + System.nanoTime();
        client().get().uri(wrongToken).header("Authorization", "Bearer not-the-token-at-all")
                .exchange().expectStatus().isUnauthorized();
        assertThat(row(wrongToken)).containsEntry("actor", "anonymous").containsEntry("action", "api GET");

        UiSession viewer = as(AdminRole.VIEWER);
        String forbidden = "/admin/api/tenants";
        long before = jdbc.sql("SELECT count(*) FROM admin_audit WHERE actor = 'in-viewer' AND target = :t")
                .param("t", forbidden).query(Long.class).single();
        viewer.api(HttpMethod.POST, forbidden).contentType(MediaType.APPLICATION_JSON).bodyValue(Map.of("name", "x"))
                .exchange().expectStatus().isForbidden();
        until(() -> jdbc.sql("SELECT count(*) FROM admin_audit WHERE actor = 'in-viewer' AND target = :t "
                        + "AND details = 'status 403 (refused)'").param("t", forbidden).query(Long.class).single() > before,
                "the viewer's refused call in the admin audit");

        String bad = "/admin/api/tenants/t_bad" + System.nanoTime() + "/limits";
        admin().put().uri(bad).contentType(MediaType.APPLICATION_JSON).bodyValue(Map.of("bogus", 1))
                .exchange().expectStatus().isBadRequest();
        assertThat(row(bad)).containsEntry("details", "status 400 (refused)");
        // successful reads stay out of the trail
        admin().get().uri("/admin/api/tenants").exchange().expectStatus().isOk();
        assertThat(jdbc.sql("SELECT count(*) FROM admin_audit WHERE action = 'api GET' AND details LIKE 'status 2%'")
                .query(Long.class).single()).isZero();
    }

    private Map<String, Object> row(String target) {
        until(() -> jdbc.sql("SELECT count(*) FROM admin_audit WHERE target = :t").param("t", target)
                .query(Long.class).single() == 1, "one admin audit row for " + target);
        return jdbc.sql("SELECT actor, action, target, details FROM admin_audit WHERE target = :t").param("t", target)
                .query().singleRow();
    }

    @Test
    void aResponderMayTakeAModelPrivateOnBothPathsButOnlyAnAdminRestoresIt() {
        String model = host.served().orElseThrow().id();
        String visibility = "/admin/api/models/" + model + "/visibility";
        UiSession responder = as(AdminRole.RESPONDER);
        UiSession admin = as(AdminRole.ADMIN);
        try {
            // admin API on a responder's session
            responder.api(HttpMethod.PUT, visibility).contentType(MediaType.APPLICATION_JSON)
                    .bodyValue(Map.of("private", true)).exchange().expectStatus().isOk()
                    .expectBody().jsonPath("$.private").isEqualTo(true).jsonPath("$.changed_by").isEqualTo("in-responder");
            assertThat(host.isPrivate(model)).isTrue();
            responder.api(HttpMethod.PUT, visibility).contentType(MediaType.APPLICATION_JSON)
                    .bodyValue(Map.of("private", false)).exchange().expectStatus().isForbidden()
                    .expectBody().jsonPath("$.error.code").isEqualTo("forbidden")
                    .jsonPath("$.error.message").value(m -> assertThat((String) m).contains("admin role"));
            assertThat(host.isPrivate(model)).isTrue();
            admin.api(HttpMethod.PUT, visibility).contentType(MediaType.APPLICATION_JSON)
                    .bodyValue(Map.of("private", false)).exchange().expectStatus().isOk();
            assertThat(host.isPrivate(model)).isFalse();

            // the incident page: the same rule
            long id = incident();
            assertThat(responder.get("/admin/incidents/" + id).getResponseBody()).contains("id=\"make-private\"");
            // the button opens a confirmation naming what happens, which changes nothing by itself
            assertThat(responder.get("/admin/incidents/" + id + "/confirm/model-private").getResponseBody())
                    .contains("Every tenant loses model " + model).contains("id=\"confirm-action\"");
            assertThat(host.isPrivate(model)).isFalse();
            assertThat(responder.post("/admin/incidents/" + id + "/model-private").getStatus().is3xxRedirection()).isTrue();
            assertThat(host.isPrivate(model)).isTrue();
            assertThat(responder.get("/admin/incidents/" + id).getResponseBody()).doesNotContain("id=\"restore\"");
            assertThat(responder.post("/admin/incidents/" + id + "/model-public").getStatus().value()).isEqualTo(403);
            assertThat(host.isPrivate(model)).isTrue();
            assertThat(admin.get("/admin/incidents/" + id).getResponseBody()).contains("id=\"restore\"");
            assertThat(admin.post("/admin/incidents/" + id + "/model-public").getStatus().is3xxRedirection()).isTrue();
            assertThat(host.isPrivate(model)).isFalse();
            // a viewer may do neither
            UiSession viewer = as(AdminRole.VIEWER);
            assertThat(viewer.get("/admin/incidents/" + id + "/confirm/model-private").getStatus().value()).isEqualTo(403);
            viewer.api(HttpMethod.PUT, visibility).contentType(MediaType.APPLICATION_JSON)
                    .bodyValue(Map.of("private", true)).exchange().expectStatus().isForbidden();
            assertThat(viewer.post("/admin/incidents/" + id + "/model-private").getStatus().value()).isEqualTo(403);
        } finally {
            admin().put().uri(visibility).contentType(MediaType.APPLICATION_JSON).bodyValue(Map.of("private", false))
                    .exchange().expectStatus().isOk();
        }
    }
}
